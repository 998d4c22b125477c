// CUDA kernels of the two backward ops. float32 runs on the implicit-GEMM engine
// (3xTF32 tensor cores): dL/dx through the forward's gathering GEMM as a strided
// convolution of dL/dy, dL/dw through the split-reduction GEMM. Every other dtype,
// and sizes past the engine's index limits, run direct loops: one thread per
// element of dL/dx and one block per element of dL/dw (a block-wide sum over batch
// and positions, accumulated in double).
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>

#include "ops/conv_transpose3d_backward.h"
#include "ops/conv_transpose3d_backward_args.h"
#include "ops/conv_geometry.h"
#include "ops/cuda/engine/implicit_gemm.h"
#include "ops/cuda/engine/staging.h"
#include "ops/cuda/engine/weight_gradient.h"
#include "ops/error_message.h"

namespace ct3d {
namespace {

struct Sizes {
  int64_t batch, in_channels, out_channels, cin_per_group, cout_per_group;
  int64_t in[3], out[3], kernel[3], stride[3], padding[3], dilation[3];
};

Sizes sizes_of(const BackwardProblem& p) {
  Sizes s{};
  s.batch = p.batch.expect_int();
  s.in_channels = p.in_channels;
  s.out_channels = p.out_channels;
  s.cin_per_group = p.in_channels_per_group();
  s.cout_per_group = p.out_channels_per_group();
  const Int3 in = p.concrete_in_size(), out = p.concrete_out_size();
  for (int i = 0; i < kSpatialDims; ++i) {
    s.in[i] = in[i];
    s.out[i] = out[i];
    s.kernel[i] = p.kernel[i];
    s.stride[i] = p.stride[i];
    s.padding[i] = p.padding[i];
    s.dilation[i] = p.dilation[i];
  }
  return s;
}

// Output index input index i sends through tap k along dimension dim, or -1.
__device__ __forceinline__ int64_t tap_target(const Sizes& s, int dim, int64_t i, int64_t k) {
  const int64_t o = i * s.stride[dim] - s.padding[dim] + k * s.dilation[dim];
  return (o >= 0 && o < s.out[dim]) ? o : -1;
}

template <typename scalar_t>
__global__ void input_backward_kernel(Sizes s, const scalar_t* __restrict__ grad_output,
                                      const scalar_t* __restrict__ weight,
                                      scalar_t* __restrict__ grad_input, int64_t total) {
  using opmath_t = at::opmath_type<scalar_t>;
  const int64_t out_plane = s.out[0] * s.out[1] * s.out[2];
  const int64_t taps = s.kernel[0] * s.kernel[1] * s.kernel[2];
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = index;
    const int64_t iw = rest % s.in[2];
    rest /= s.in[2];
    const int64_t ih = rest % s.in[1];
    rest /= s.in[1];
    const int64_t id = rest % s.in[0];
    rest /= s.in[0];
    const int64_t ic = rest % s.in_channels;
    const int64_t n = rest / s.in_channels;
    const int64_t oc0 = (ic / s.cin_per_group) * s.cout_per_group;
    opmath_t acc = 0;
    for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
      const int64_t od = tap_target(s, 0, id, kd);
      if (od < 0) continue;
      for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
        const int64_t oh = tap_target(s, 1, ih, kh);
        if (oh < 0) continue;
        for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
          const int64_t ow = tap_target(s, 2, iw, kw);
          if (ow < 0) continue;
          const int64_t o = (od * s.out[1] + oh) * s.out[2] + ow;
          const int64_t tap = (kd * s.kernel[1] + kh) * s.kernel[2] + kw;
          for (int64_t col = 0; col < s.cout_per_group; ++col) {
            acc += static_cast<opmath_t>(
                       grad_output[(n * s.out_channels + oc0 + col) * out_plane + o]) *
                   static_cast<opmath_t>(weight[(ic * s.cout_per_group + col) * taps + tap]);
          }
        }
      }
    }
    grad_input[index] = static_cast<scalar_t>(acc);
  }
}

constexpr int kReduceThreads = 256;

// Block (ic, col, tap) sums input * grad_output over batch and input positions.
template <typename scalar_t>
__global__ void weight_backward_kernel(Sizes s, const scalar_t* __restrict__ input,
                                       const scalar_t* __restrict__ grad_output,
                                       scalar_t* __restrict__ grad_weight) {
  const int64_t taps = s.kernel[0] * s.kernel[1] * s.kernel[2];
  const int64_t element = blockIdx.x;
  const int64_t tap = element % taps;
  const int64_t col = (element / taps) % s.cout_per_group;
  const int64_t ic = element / (taps * s.cout_per_group);
  const int64_t oc = (ic / s.cin_per_group) * s.cout_per_group + col;
  const int64_t kw = tap % s.kernel[2], kh = (tap / s.kernel[2]) % s.kernel[1];
  const int64_t kd = tap / (s.kernel[2] * s.kernel[1]);
  const int64_t in_plane = s.in[0] * s.in[1] * s.in[2];
  const int64_t out_plane = s.out[0] * s.out[1] * s.out[2];
  double sum = 0;
  for (int64_t index = threadIdx.x; index < s.batch * in_plane; index += blockDim.x) {
    const int64_t n = index / in_plane, i = index % in_plane;
    const int64_t iw = i % s.in[2], ih = (i / s.in[2]) % s.in[1], id = i / (s.in[2] * s.in[1]);
    const int64_t od = tap_target(s, 0, id, kd), oh = tap_target(s, 1, ih, kh),
                  ow = tap_target(s, 2, iw, kw);
    if (od < 0 || oh < 0 || ow < 0) continue;
    sum += static_cast<double>(input[(n * s.in_channels + ic) * in_plane + i]) *
           static_cast<double>(grad_output[(n * s.out_channels + oc) * out_plane +
                                           (od * s.out[1] + oh) * s.out[2] + ow]);
  }
  __shared__ double partial[kReduceThreads];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = kReduceThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) grad_weight[element] = static_cast<scalar_t>(partial[0]);
}

void check_cuda(const at::Tensor& tensor) {
  CT3D_CHECK(tensor.is_cuda(),
             "conv_transpose3d backward (CUDA kernel): expected CUDA "
             "tensors, got ",
             tensor.device());
  check_dtype_supported(tensor, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, "CUDA");
}

}  // namespace

at::Tensor conv_transpose3d_input_backward_cuda(CT3D_INPUT_BACKWARD_PARAMS) {
  const BackwardProblem p =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  check_cuda(grad_output);
  const c10::cuda::CUDAGuard device_guard(grad_output.device());
  at::Tensor grad_input = at::empty_symint(p.input_shape(), grad_output.options());
  const int64_t total = grad_input.numel();
  if (total == 0) return grad_input;
  const at::Tensor g = grad_output.contiguous(), w = weight.contiguous();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const cuda::GatherProblem problem = cuda::input_gradient_gather(geometry_of(p));
  if (cuda::implicit_gemm_supports(problem, g.scalar_type())) {
    cuda::launch_implicit_gemm(problem, g, w, at::Tensor(), grad_input, stream,
                               cuda::backward_staging_budget(g.numel()));
    return grad_input;
  }
  const Sizes s = sizes_of(p);
  const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t(1) << 20);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, g.scalar_type(), "ct3d_input_backward_cuda", [&] {
        input_backward_kernel<scalar_t><<<blocks, 256, 0, stream>>>(
            s, g.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
            grad_input.mutable_data_ptr<scalar_t>(), total);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
  return grad_input;
}

at::Tensor conv_transpose3d_weight_backward_cuda(CT3D_WEIGHT_BACKWARD_PARAMS) {
  const BackwardProblem p = check_weight_backward_args(input, grad_output, kernel_size, stride,
                                                       padding, groups, dilation);
  check_cuda(input);
  const c10::cuda::CUDAGuard device_guard(input.device());
  at::Tensor grad_weight = at::empty_symint(p.weight_shape(), input.options());
  if (grad_weight.numel() == 0) return grad_weight;
  if (p.batch.expect_int() == 0) return grad_weight.zero_();
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const cuda::WeightGradientPlan plan = cuda::plan_weight_gradient(geometry_of(p));
  if (cuda::weight_gradient_supports(plan, x.scalar_type())) {
    cuda::launch_weight_gradient(plan, x, g, grad_weight, stream);
    return grad_weight;
  }
  const Sizes s = sizes_of(p);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, x.scalar_type(), "ct3d_weight_backward_cuda", [&] {
        weight_backward_kernel<scalar_t><<<grad_weight.numel(), kReduceThreads, 0, stream>>>(
            s, x.const_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
            grad_weight.mutable_data_ptr<scalar_t>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
  return grad_weight;
}

}  // namespace ct3d
