// CPU kernels of the two backward ops. Plain loops in the accumulation type
// (double for float32), parallel over tasks that own their outputs: (n, c_in)
// planes of dL/dx, (c_in, c_out) kernels of dL/dw.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <vector>

#include "ops/conv_transpose3d_backward.h"
#include "ops/conv_transpose3d_backward_args.h"
#include "ops/conv_geometry.h"
#include "ops/error_message.h"

namespace ct3d {
namespace {

// For one dimension: target[i * kernel + k] = the output index input index i sends
// through tap k, or -1 where it falls outside the output.
std::vector<int64_t> tap_targets(const DimGeometry& d) {
  std::vector<int64_t> target(d.input * d.kernel);
  for (int64_t i = 0; i < d.input; ++i) {
    for (int64_t k = 0; k < d.kernel; ++k) target[i * d.kernel + k] = d.output_index_inside(i, k);
  }
  return target;
}

struct Targets {
  std::vector<int64_t> d, h, w;
};

Targets targets_for(const ConvGeometry& g) {
  return {tap_targets(g.dim[0]), tap_targets(g.dim[1]), tap_targets(g.dim[2])};
}

// Calls visit(input_offset, output_offset, tap) for every (input position, tap)
// pair that lands inside the output.
template <typename Visit>
void for_each_landing(const ConvGeometry& g, const Targets& t, Visit&& visit) {
  const DimGeometry &D = g.dim[0], &H = g.dim[1], &W = g.dim[2];
  for (int64_t kd = 0; kd < D.kernel; ++kd) {
    for (int64_t kh = 0; kh < H.kernel; ++kh) {
      for (int64_t kw = 0; kw < W.kernel; ++kw) {
        const int64_t tap = (kd * H.kernel + kh) * W.kernel + kw;
        for (int64_t id = 0; id < D.input; ++id) {
          const int64_t od = t.d[id * D.kernel + kd];
          if (od < 0) continue;
          for (int64_t ih = 0; ih < H.input; ++ih) {
            const int64_t oh = t.h[ih * H.kernel + kh];
            if (oh < 0) continue;
            const int64_t in_row = (id * H.input + ih) * W.input;
            const int64_t out_row = (od * H.output + oh) * W.output;
            for (int64_t iw = 0; iw < W.input; ++iw) {
              const int64_t ow = t.w[iw * W.kernel + kw];
              if (ow >= 0) visit(in_row + iw, out_row + ow, tap);
            }
          }
        }
      }
    }
  }
}

template <typename scalar_t>
void input_backward_kernel(const ConvGeometry& p, const scalar_t* grad_output,
                           const scalar_t* weight, scalar_t* grad_input) {
  using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
  const int64_t in_plane = p.input_positions(), out_plane = p.output_positions(), taps = p.taps();
  const int64_t cin_g = p.in_channels_per_group(), cout_g = p.out_channels_per_group();
  const Targets targets = targets_for(p);
  at::parallel_for(0, p.batch * p.in_channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<acc_t> plane(in_plane);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / p.in_channels, ic = task % p.in_channels;
      const int64_t group = ic / cin_g;
      std::fill(plane.begin(), plane.end(), acc_t(0));
      for (int64_t col = 0; col < cout_g; ++col) {
        const scalar_t* g = grad_output + (n * p.out_channels + group * cout_g + col) * out_plane;
        const scalar_t* w = weight + (ic * cout_g + col) * taps;
        for_each_landing(p, targets, [&](int64_t i, int64_t o, int64_t tap) {
          plane[i] += static_cast<acc_t>(w[tap]) * static_cast<acc_t>(g[o]);
        });
      }
      scalar_t* dst = grad_input + task * in_plane;
      for (int64_t i = 0; i < in_plane; ++i) dst[i] = static_cast<scalar_t>(plane[i]);
    }
  });
}

template <typename scalar_t>
void weight_backward_kernel(const ConvGeometry& p, const scalar_t* input,
                            const scalar_t* grad_output, scalar_t* grad_weight) {
  using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
  const int64_t in_plane = p.input_positions(), out_plane = p.output_positions(), taps = p.taps();
  const int64_t cin_g = p.in_channels_per_group(), cout_g = p.out_channels_per_group();
  const int64_t batch = p.batch;
  const Targets targets = targets_for(p);
  at::parallel_for(0, p.in_channels * cout_g, 1, [&](int64_t begin, int64_t end) {
    std::vector<acc_t> sums(taps);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t ic = task / cout_g, col = task % cout_g;
      const int64_t oc = (ic / cin_g) * cout_g + col;
      std::fill(sums.begin(), sums.end(), acc_t(0));
      for (int64_t n = 0; n < batch; ++n) {
        const scalar_t* x = input + (n * p.in_channels + ic) * in_plane;
        const scalar_t* g = grad_output + (n * p.out_channels + oc) * out_plane;
        for_each_landing(p, targets, [&](int64_t i, int64_t o, int64_t tap) {
          sums[tap] += static_cast<acc_t>(x[i]) * static_cast<acc_t>(g[o]);
        });
      }
      for (int64_t tap = 0; tap < taps; ++tap) {
        grad_weight[task * taps + tap] = static_cast<scalar_t>(sums[tap]);
      }
    }
  });
}

void check_cpu(const at::Tensor& tensor) {
  CT3D_CHECK(tensor.device().is_cpu(),
             "conv_transpose3d backward (CPU kernel): expected CPU "
             "tensors, got ",
             tensor.device());
  check_dtype_supported(tensor, {at::kFloat, at::kDouble}, "CPU");
}

}  // namespace

at::Tensor conv_transpose3d_input_backward_cpu(CT3D_INPUT_BACKWARD_PARAMS) {
  const ConvTranspose3dArgs args =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  check_cpu(grad_output);
  at::Tensor grad_input = at::empty_symint(args.input_shape(), grad_output.options());
  if (grad_input.numel() == 0) return grad_input;
  const at::Tensor g = grad_output.contiguous(), w = weight.contiguous();
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "ct3d_input_backward_cpu", [&] {
    input_backward_kernel<scalar_t>(geometry_of(args), g.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
                                    grad_input.mutable_data_ptr<scalar_t>());
  });
  return grad_input;
}

at::Tensor conv_transpose3d_weight_backward_cpu(CT3D_WEIGHT_BACKWARD_PARAMS) {
  const ConvTranspose3dArgs args = check_weight_backward_args(input, grad_output, kernel_size,
                                                              stride, padding, groups, dilation);
  check_cpu(input);
  at::Tensor grad_weight = at::empty_symint(args.weight_shape(), input.options());
  if (grad_weight.numel() == 0) return grad_weight;
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "ct3d_weight_backward_cpu", [&] {
    weight_backward_kernel<scalar_t>(geometry_of(args), x.const_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                                     grad_weight.mutable_data_ptr<scalar_t>());
  });
  return grad_weight;
}

}  // namespace ct3d
