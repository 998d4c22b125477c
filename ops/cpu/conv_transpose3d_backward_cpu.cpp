// CPU kernels of the two backward ops, on the shifted GEMMs of shifted_gemm.h.
//
// With o = i * s + c_k (c_k = k * dilation - padding) and c_k = s * a_k + r_k
// (0 <= r_k < s), grad_output index o is phase r_k, position i + a_k, of
// grad_output split by stride residue. So both gradients read, per tap, a plain
// (stride 1) shifted window of one residue's volume: grad_output is copied once
// into zero-padded residue volumes, then
//   dL/dx (C_in x positions)    = sum over taps of W_k (C_in x C_out) @ window_k,
//   dL/dw_k (C_in x C_out)      = sum over samples of X (C_in x positions) @ window_k^T,
// positions numbered with the volumes' pitches (the extra ones dropped, or zero in
// X). Tasks own their outputs ((sample, group, plane block) for dL/dx, (group,
// tap) for dL/dw) and sum in a fixed order.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_backward_args.h"
#include "ops/common/error_message.h"
#include "ops/common/gradient_tensor.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d_backward.h"
#include "ops/cpu/channel_sums.h"
#include "ops/cpu/cpu_plan.h"
#include "ops/cpu/direct_correlation.h"
#include "ops/cpu/gemm_avx512.h"
#include "ops/cpu/residue_layout.h"
#include "ops/cpu/shifted_gemm.h"

namespace ct3d {
namespace {

constexpr int64_t kReductionChunk = 4096;

// grad_output split by stride residue into zero-padded volumes that every tap's
// window of every input position stays inside (residue_layout.h).
struct ResidueVolumes {
  cpu::PaddedVolume volume;
  std::vector<int64_t> tap_part, tap_offset;
};

ResidueVolumes split_by_residue(const ConvGeometry& g, const at::Tensor& grad_output) {
  const cpu::ResidueLayout layout = cpu::residue_layout(g);
  return {cpu::padded_copy(grad_output, layout.strides, layout.extent, layout.low), layout.tap_part,
          layout.tap_offset};
}

template <typename scalar_t>
void input_backward_kernel(const ConvGeometry& g, const at::Tensor& grad_output,
                           const at::Tensor& weight, at::Tensor& grad_input) {
  const ResidueVolumes r = split_by_residue(g, grad_output.contiguous());
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t taps = g.taps();
  // (group, cin_g, taps x cout_g): W_k side by side for every tap.
  const at::Tensor weights = weight.reshape({g.groups, cin_g, cout_g, taps})
                                 .permute({0, 1, 3, 2})
                                 .reshape({g.groups, cin_g, taps * cout_g})
                                 .contiguous();
  const cpu::PaddedVolume& v = r.volume;
  const int64_t plane = v.plane();
  const int64_t planes_per_tile =
      std::max<int64_t>(1, cpu::kTileBytes / (int64_t(sizeof(scalar_t)) * cin_g * plane));
  const int64_t depth = g.dim[0].input, height = g.dim[1].input, width = g.dim[2].input;
  const int64_t blocks = (depth + planes_per_tile - 1) / planes_per_tile;
  scalar_t* out = grad_input.mutable_data_ptr<scalar_t>();
  at::parallel_for(0, g.batch * g.groups * blocks, 1, [&](int64_t first, int64_t last) {
    std::vector<scalar_t> column_buffer;
    for (int64_t task = first; task < last; ++task) {
      const int64_t block = task % blocks, group = (task / blocks) % g.groups;
      const int64_t n = task / (blocks * g.groups);
      const int64_t plane0 = block * planes_per_tile;
      const int64_t tile_planes = std::min(planes_per_tile, depth - plane0);
      const int64_t columns = tile_planes * plane;
      at::Tensor tile = at::empty({cin_g, columns}, grad_input.options());
      cpu::multiply_taps<scalar_t>(
          tile, weights.select(0, group), taps, cout_g,
          [&](int64_t k) {
            return cpu::volume_data<scalar_t>(v, n, r.tap_part[k], group * cout_g) +
                   r.tap_offset[k] + plane0 * plane;
          },
          v.channel_stride(), column_buffer);
      const scalar_t* tile_data = tile.const_data_ptr<scalar_t>();
      for (int64_t ci = 0; ci < cin_g; ++ci) {
        scalar_t* dst =
            out + ((n * g.in_channels + group * cin_g + ci) * depth + plane0) * height * width;
        for (int64_t id = 0; id < tile_planes; ++id)
          for (int64_t ih = 0; ih < height; ++ih, dst += width) {
            std::copy_n(tile_data + ci * columns + id * plane + ih * v.extent[2], width, dst);
          }
      }
    }
  });
}

// sums[co][ci] = sum over the input positions of a sample's window_k[co][position] *
// input[ci][position], on ct3d's AVX-512 GEMM: the input channels-last without padding
// (x_last: rows of width positions of C_in), the window read in place a plane at a time,
// its rows extent[2] apart, so that no product is spent on the padding between rows
// (gemm_avx512_runs; KERNEL_LOG, "the CPU weight gradient without the padding's
// products"). Float32 partial sums over about kReductionChunk positions, added into the
// float64 `total`.
template <typename scalar_t>
void window_products(const ConvGeometry& g, const cpu::PaddedVolume& v, const scalar_t* window,
                     const scalar_t* x_last, int64_t cin_g, int64_t cout_g,
                     std::vector<scalar_t>& partial, std::vector<double>& total) {
  const int64_t depth = g.dim[0].input, height = g.dim[1].input, width = g.dim[2].input;
  const int64_t plane_positions = height * width;
  const int64_t planes_per_chunk =
      std::max<int64_t>(1, kReductionChunk / std::max<int64_t>(1, plane_positions));
  for (int64_t d0 = 0; d0 < depth; d0 += planes_per_chunk) {
    const int64_t d1 = std::min(depth, d0 + planes_per_chunk);
    for (int64_t d = d0; d < d1; ++d) {
      // One run per input row: the window's rows extent[2] apart, the input's dense.
      const cpu::GemmRuns rows{height, width, v.extent[2], width * g.in_channels, nullptr};
      cpu::gemm_avx512_runs<scalar_t>(cout_g, cin_g, rows, window + d * v.plane(),
                                      v.channel_stride(),
                                      x_last + d * plane_positions * g.in_channels, g.in_channels,
                                      partial.data(), cin_g, d > d0);
    }
    for (size_t i = 0; i < total.size(); ++i) total[i] += partial[i];
  }
}

template <typename scalar_t>
void weight_backward_kernel(const ConvGeometry& g, const at::Tensor& input,
                            const at::Tensor& grad_output, at::Tensor& grad_weight) {
  const ResidueVolumes r = split_by_residue(g, grad_output.contiguous());
  const cpu::PaddedVolume& v = r.volume;
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t taps = g.taps();
  const int64_t parts = v.data.size(1);
  // (group, tap, cin_g, cout_g) sums, then into grad_weight's (C_in, cout_g, taps).
  at::Tensor sums = at::empty({g.groups, taps, cin_g, cout_g}, grad_weight.options());
  // With AVX-512: dL/dw_k^T (cout_g x cin_g) = window_k (cout_g x positions) @ X^T, X^T
  // the input channels-last (positions x C_in). Else BLAS, on the input on the volumes'
  // grid (zero past each row's and plane's end, so that the extra positions add nothing).
  const bool own_gemm = cpu::has_avx512();
  const int64_t positions = g.dim[0].input * g.dim[1].input * g.dim[2].input;
  at::Tensor x_last;  // (N, D, H, W, C_in)
  cpu::PaddedVolume x;
  if (own_gemm) {
    x_last = input.permute({0, 2, 3, 4, 1}).contiguous();
  } else {
    x = cpu::padded_copy(input, {1, 1, 1}, v.extent, {0, 0, 0});
  }
  const int64_t columns = g.dim[0].input * v.plane();
  // The reduction runs over batch x positions (10^6 and more): float32 partial
  // products over kReductionChunk positions at a time, added into a float64 total
  // (one float32 running sum over 5 * 10^5 positive products erred by 4e-5).
  at::parallel_for(0, g.groups * taps, 1, [&](int64_t first, int64_t last) {
    std::vector<scalar_t> partial(cout_g * cin_g);
    std::vector<double> total(cout_g * cin_g);
    for (int64_t task = first; task < last; ++task) {
      const int64_t group = task / taps, k = task % taps;
      std::fill(total.begin(), total.end(), 0.0);
      for (int64_t n = 0; n < g.batch; ++n) {
        const scalar_t* window_data =
            cpu::volume_data<scalar_t>(v, n, r.tap_part[k], group * cout_g) + r.tap_offset[k];
        if (own_gemm) {
          window_products<scalar_t>(
              g, v, window_data,
              x_last.const_data_ptr<scalar_t>() + n * positions * g.in_channels + group * cin_g,
              cin_g, cout_g, partial, total);
          continue;
        }
        for (int64_t l0 = 0; l0 < columns; l0 += kReductionChunk) {
          const int64_t length = std::min(kReductionChunk, columns - l0);
          // partial[co][ci] = sum over the chunk of window[co][l] * x[ci][l]
          const at::Tensor window =
              v.data.as_strided({cout_g, length}, {v.channel_stride(), 1},
                                ((n * parts + r.tap_part[k]) * g.out_channels + group * cout_g) *
                                        v.channel_stride() +
                                    r.tap_offset[k] + l0);
          const at::Tensor xs =
              x.data.as_strided({length, cin_g}, {1, x.channel_stride()},
                                (n * g.in_channels + group * cin_g) * x.channel_stride() + l0);
          at::Tensor out = at::from_blob(partial.data(), {cout_g, cin_g}, grad_weight.options());
          at::mm_out(out, window, xs);
          for (size_t i = 0; i < total.size(); ++i) total[i] += partial[i];
        }
      }
      scalar_t* out = sums[group][k].mutable_data_ptr<scalar_t>();
      for (int64_t ci = 0; ci < cin_g; ++ci)
        for (int64_t co = 0; co < cout_g; ++co) {
          out[ci * cout_g + co] = static_cast<scalar_t>(total[co * cin_g + ci]);
        }
    }
  });
  if (g.batch == 0) sums.zero_();
  grad_weight.copy_(sums.permute({0, 2, 3, 1}).reshape(grad_weight.sizes()));
}

void check_cpu(const at::Tensor& tensor) {
  CT3D_CHECK(tensor.device().is_cpu(),
             "conv_transpose3d backward (CPU kernel): expected CPU "
             "tensors, got ",
             tensor.device());
  check_dtype_supported(tensor, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, "CPU");
}

}  // namespace

at::Tensor conv_transpose3d_input_backward_cpu(const at::Tensor& grad_output,
                                               const at::Tensor& weight,
                                               c10::SymIntArrayRef input_size,
                                               c10::SymIntArrayRef stride,
                                               c10::SymIntArrayRef padding, c10::SymInt groups,
                                               c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  check_cpu(grad_output);
  if (is_reduced_precision(grad_output)) {
    return conv_transpose3d_input_backward_cpu(widened(grad_output), widened(weight), input_size,
                                               stride, padding, groups, dilation)
        .to(grad_output.scalar_type());
  }
  const GradientTensor result =
      allocate_gradient(args.input_shape(), grad_output.options(), grad_output);
  at::Tensor grad_input = result.tensor;
  if (result.answered) return grad_input;
  const at::Tensor g = grad_output.contiguous(), w = weight.contiguous();
  const ConvGeometry geometry = geometry_of(args);
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "ct3d_input_backward_cpu", [&] {
    if (cpu::plan_cpu(geometry).input_gradient == cpu::CpuForm::kDirectCorrelation) {
      cpu::direct_input_gradient<scalar_t>(geometry, g, w, grad_input);
    } else {
      input_backward_kernel<scalar_t>(geometry, g, w, grad_input);
    }
  });
  return grad_input;
}

at::Tensor conv_transpose3d_weight_backward_cpu(const at::Tensor& input,
                                                const at::Tensor& grad_output,
                                                c10::SymIntArrayRef kernel_size,
                                                c10::SymIntArrayRef stride,
                                                c10::SymIntArrayRef padding, c10::SymInt groups,
                                                c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_weight_backward_args(input, grad_output, kernel_size,
                                                              stride, padding, groups, dilation);
  check_cpu(input);
  if (is_reduced_precision(input)) {
    return conv_transpose3d_weight_backward_cpu(widened(input), widened(grad_output), kernel_size,
                                                stride, padding, groups, dilation)
        .to(input.scalar_type());
  }
  const GradientTensor result =
      allocate_gradient(args.weight_shape(), input.options(), grad_output);
  at::Tensor grad_weight = result.tensor;
  if (result.answered) return grad_weight;
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "ct3d_weight_backward_cpu", [&] {
    weight_backward_kernel<scalar_t>(geometry_of(args), x, g, grad_weight);
  });
  return grad_weight;
}

Gradients conv_transpose3d_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input,
                                        const at::Tensor& weight, c10::SymIntArrayRef stride,
                                        c10::SymIntArrayRef padding, c10::SymInt groups,
                                        c10::SymIntArrayRef dilation,
                                        std::array<bool, 3> output_mask) {
  const bool bias = output_mask[2];
  output_mask[2] = false;
  // One contiguous copy of a strided (e.g. channels-last) grad_output for all three.
  const at::Tensor g = grad_output.contiguous();
  Gradients gradients = conv_transpose3d_backward_composite(
      g, input, weight, stride, padding, std::move(groups), dilation, output_mask);
  if (bias) std::get<2>(gradients) = cpu::channel_sums(g);
  return gradients;
}

}  // namespace ct3d
