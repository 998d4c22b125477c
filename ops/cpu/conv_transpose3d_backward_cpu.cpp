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
#include "ops/error_message.h"

namespace ct3d {
namespace {

// For one dimension: target[i * kernel + k] = the output index input index i sends
// through tap k, or -1 where it falls outside the output.
std::vector<int64_t> tap_targets(int64_t in_extent, int64_t out_extent, int64_t kernel,
                                 int64_t stride, int64_t padding, int64_t dilation) {
  std::vector<int64_t> target(in_extent * kernel);
  for (int64_t i = 0; i < in_extent; ++i) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t o = i * stride - padding + k * dilation;
      target[i * kernel + k] = (o >= 0 && o < out_extent) ? o : -1;
    }
  }
  return target;
}

struct Targets {
  std::vector<int64_t> d, h, w;
};

// Element counts both kernels index with.
struct Extents {
  int64_t in_plane, out_plane, taps, cin_per_group, cout_per_group;
};

Extents extents_of(const BackwardProblem& p) {
  const Int3 in = p.concrete_in_size();
  const Int3 out = p.concrete_out_size();
  return {in[0] * in[1] * in[2], out[0] * out[1] * out[2], p.kernel[0] * p.kernel[1] * p.kernel[2],
          p.in_channels_per_group(), p.out_channels_per_group()};
}

Targets targets_for(const BackwardProblem& p) {
  const Int3 in = p.concrete_in_size();
  const Int3 out = p.concrete_out_size();
  return {tap_targets(in[0], out[0], p.kernel[0], p.stride[0], p.padding[0], p.dilation[0]),
          tap_targets(in[1], out[1], p.kernel[1], p.stride[1], p.padding[1], p.dilation[1]),
          tap_targets(in[2], out[2], p.kernel[2], p.stride[2], p.padding[2], p.dilation[2])};
}

// Calls visit(input_offset, output_offset, tap) for every (input position, tap)
// pair that lands inside the output.
template <typename Visit>
void for_each_landing(const BackwardProblem& p, const Targets& t, Visit&& visit) {
  const Int3 in = p.concrete_in_size();
  const Int3 out = p.concrete_out_size();
  const Int3& k = p.kernel;
  for (int64_t kd = 0; kd < k[0]; ++kd) {
    for (int64_t kh = 0; kh < k[1]; ++kh) {
      for (int64_t kw = 0; kw < k[2]; ++kw) {
        const int64_t tap = (kd * k[1] + kh) * k[2] + kw;
        for (int64_t id = 0; id < in[0]; ++id) {
          const int64_t od = t.d[id * k[0] + kd];
          if (od < 0) continue;
          for (int64_t ih = 0; ih < in[1]; ++ih) {
            const int64_t oh = t.h[ih * k[1] + kh];
            if (oh < 0) continue;
            const int64_t in_row = (id * in[1] + ih) * in[2];
            const int64_t out_row = (od * out[1] + oh) * out[2];
            for (int64_t iw = 0; iw < in[2]; ++iw) {
              const int64_t ow = t.w[iw * k[2] + kw];
              if (ow >= 0) visit(in_row + iw, out_row + ow, tap);
            }
          }
        }
      }
    }
  }
}

template <typename scalar_t>
void input_backward_kernel(const BackwardProblem& p, const scalar_t* grad_output,
                           const scalar_t* weight, scalar_t* grad_input) {
  using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
  const auto [in_plane, out_plane, taps, cin_g, cout_g] = extents_of(p);
  const Targets targets = targets_for(p);
  at::parallel_for(0, p.batch.expect_int() * p.in_channels, 1, [&](int64_t begin, int64_t end) {
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
void weight_backward_kernel(const BackwardProblem& p, const scalar_t* input,
                            const scalar_t* grad_output, scalar_t* grad_weight) {
  using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
  const auto [in_plane, out_plane, taps, cin_g, cout_g] = extents_of(p);
  const int64_t batch = p.batch.expect_int();
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
  const BackwardProblem p =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  check_cpu(grad_output);
  at::Tensor grad_input = at::empty_symint(p.input_shape(), grad_output.options());
  if (grad_input.numel() == 0) return grad_input;
  const at::Tensor g = grad_output.contiguous(), w = weight.contiguous();
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "ct3d_input_backward_cpu", [&] {
    input_backward_kernel<scalar_t>(p, g.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
                                    grad_input.mutable_data_ptr<scalar_t>());
  });
  return grad_input;
}

at::Tensor conv_transpose3d_weight_backward_cpu(CT3D_WEIGHT_BACKWARD_PARAMS) {
  const BackwardProblem p = check_weight_backward_args(input, grad_output, kernel_size, stride,
                                                       padding, groups, dilation);
  check_cpu(input);
  at::Tensor grad_weight = at::empty_symint(p.weight_shape(), input.options());
  if (grad_weight.numel() == 0) return grad_weight;
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "ct3d_weight_backward_cpu", [&] {
    weight_backward_kernel<scalar_t>(p, x.const_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                                     grad_weight.mutable_data_ptr<scalar_t>());
  });
  return grad_weight;
}

}  // namespace ct3d
