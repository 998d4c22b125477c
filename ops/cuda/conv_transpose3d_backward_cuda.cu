// CUDA kernels of the two backward ops. float32 runs on the implicit-GEMM engine
// (3xTF32 tensor cores): dL/dx through the forward's gathering GEMM as a strided
// convolution of dL/dy, dL/dw through the split-reduction GEMM; float16 and bfloat16
// as float32 on widened operands (ops/common/reduced_precision.h), except where the
// engine's half forms apply: dL/dx (engine/half_window.h, engine/half_gather.h), dL/dw
// (engine/weight_gradient_operands.cuh). float64, and sizes past
// the engine's index limits, run direct loops: one thread per element of dL/dx and
// one block per element of dL/dw (a block-wide sum over batch and positions,
// accumulated in double).
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <vector>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_backward_args.h"
#include "ops/common/error_message.h"
#include "ops/common/gradient_tensor.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d.h"
#include "ops/conv_transpose3d_backward.h"
#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/planner/op_plan.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"
#include "ops/cuda/engine/window/half_window.h"
#include "ops/cuda/gradients_cuda.h"
#include "ops/cuda/op_operands.h"
#include "ops/cuda/winograd/winograd_forward.h"

namespace ct3d {
namespace {

template <typename scalar_t>
__global__ void input_backward_kernel(ConvGeometry s, const scalar_t* __restrict__ grad_output,
                                      const scalar_t* __restrict__ weight,
                                      scalar_t* __restrict__ grad_input, int64_t total) {
  using opmath_t = at::opmath_type<scalar_t>;
  const DimGeometry &D = s.dim[0], &H = s.dim[1], &W = s.dim[2];
  const int64_t out_plane = s.output_positions(), taps = s.taps();
  const int64_t cin_g = s.in_channels_per_group(), cout_g = s.out_channels_per_group();
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = index;
    const int64_t iw = rest % W.input;
    rest /= W.input;
    const int64_t ih = rest % H.input;
    rest /= H.input;
    const int64_t id = rest % D.input;
    rest /= D.input;
    const int64_t ic = rest % s.in_channels;
    const int64_t n = rest / s.in_channels;
    const int64_t oc0 = (ic / cin_g) * cout_g;
    opmath_t acc = 0;
    for (int64_t kd = 0; kd < D.kernel; ++kd) {
      const int64_t od = D.output_index_inside(id, kd);
      if (od < 0) continue;
      for (int64_t kh = 0; kh < H.kernel; ++kh) {
        const int64_t oh = H.output_index_inside(ih, kh);
        if (oh < 0) continue;
        for (int64_t kw = 0; kw < W.kernel; ++kw) {
          const int64_t ow = W.output_index_inside(iw, kw);
          if (ow < 0) continue;
          const int64_t o = (od * H.output + oh) * W.output + ow;
          const int64_t tap = (kd * H.kernel + kh) * W.kernel + kw;
          for (int64_t col = 0; col < cout_g; ++col) {
            acc += static_cast<opmath_t>(
                       grad_output[(n * s.out_channels + oc0 + col) * out_plane + o]) *
                   static_cast<opmath_t>(weight[(ic * cout_g + col) * taps + tap]);
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
__global__ void weight_backward_kernel(ConvGeometry s, const scalar_t* __restrict__ input,
                                       const scalar_t* __restrict__ grad_output,
                                       scalar_t* __restrict__ grad_weight) {
  const DimGeometry &D = s.dim[0], &H = s.dim[1], &W = s.dim[2];
  const int64_t taps = s.taps();
  const int64_t cin_g = s.in_channels_per_group(), cout_g = s.out_channels_per_group();
  const int64_t element = blockIdx.x;
  const int64_t tap = element % taps;
  const int64_t col = (element / taps) % cout_g;
  const int64_t ic = element / (taps * cout_g);
  const int64_t oc = (ic / cin_g) * cout_g + col;
  const int64_t kw = tap % W.kernel, kh = (tap / W.kernel) % H.kernel;
  const int64_t kd = tap / (W.kernel * H.kernel);
  const int64_t in_plane = s.input_positions(), out_plane = s.output_positions();
  double sum = 0;
  for (int64_t index = threadIdx.x; index < s.batch * in_plane; index += blockDim.x) {
    const int64_t n = index / in_plane, i = index % in_plane;
    const int64_t iw = i % W.input, ih = (i / W.input) % H.input, id = i / (W.input * H.input);
    const int64_t od = D.output_index_inside(id, kd), oh = H.output_index_inside(ih, kh),
                  ow = W.output_index_inside(iw, kw);
    if (od < 0 || oh < 0 || ow < 0) continue;
    sum += static_cast<double>(input[(n * s.in_channels + ic) * in_plane + i]) *
           static_cast<double>(grad_output[(n * s.out_channels + oc) * out_plane +
                                           (od * H.output + oh) * W.output + ow]);
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

}  // namespace

void check_backward_tensor_cuda(const at::Tensor& tensor) {
  CT3D_CHECK(tensor.is_cuda(),
             "conv_transpose3d backward (CUDA kernel): expected CUDA "
             "tensors, got ",
             tensor.device());
  check_dtype_supported(tensor, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, "CUDA");
}

at::Tensor input_gradient_cuda(const ConvTranspose3dArgs& args, const at::Tensor& grad_output,
                               const at::Tensor& weight, bool operands_exact_in_tf32) {
  const GradientTensor result =
      allocate_gradient(args.input_shape(), grad_output.options(), grad_output);
  at::Tensor grad_input = result.tensor;
  if (result.answered) return grad_input;
  const int64_t total = grad_input.numel();
  const at::Tensor g = grad_output.contiguous(), w = weight.contiguous();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const cuda::OpPlan plan = cuda::plan_op(
      conv_problem(cuda::ConvOp::kInputGradient, args, g.scalar_type(), operands_exact_in_tf32),
      cuda::current_device_info(), cuda::OpOperands{g, grad_input});
  const ConvGeometry& geometry = plan.problem.geometry;
  switch (plan.path) {
    case cuda::OpPath::kWinograd: {
      // Stride 1 as a forward of grad_output through Winograd's transforms.
      at::Tensor grad_input5 = args.batched ? grad_input : grad_input.unsqueeze(0);
      cuda::launch_winograd_input_gradient(*plan.winograd, geometry,
                                           args.batched ? g : g.unsqueeze(0), w, grad_input5,
                                           stream);
      return grad_input;
    }
    case cuda::OpPath::kEngine:
      cuda::launch_gemm_plan(plan.gemm, g, w, at::Tensor(), grad_input, stream,
                             plan.staging_floats);
      return grad_input;
    case cuda::OpPath::kHalf:  // half operands come through half_input_gradient_cuda
      TORCH_INTERNAL_ASSERT(false, "input_gradient_cuda: float16 / bfloat16 operands");
    case cuda::OpPath::kDirect:
      break;
  }
  const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t(1) << 20);
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "ct3d_input_backward_cuda", [&] {
    cuda::check_kernel_image(reinterpret_cast<const void*>(&input_backward_kernel<scalar_t>),
                             "CUDA kernel");
    input_backward_kernel<scalar_t><<<blocks, 256, 0, stream>>>(
        geometry, g.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
        grad_input.mutable_data_ptr<scalar_t>(), total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return grad_input;
}

at::Tensor half_input_gradient_cuda(const ConvTranspose3dArgs& args, const at::Tensor& grad_output,
                                    const at::Tensor& weight) {
  // The half forms run on sm_90a only: elsewhere nothing is allocated for them.
  const cuda::DeviceInfo device = cuda::current_device_info();
  if (!device.wgmma || grad_output.numel() == 0) return at::Tensor();
  at::Tensor grad_input = at::empty_symint(args.input_shape(), grad_output.options());
  if (grad_input.numel() == 0) return at::Tensor();
  const at::Tensor g = grad_output.contiguous(), w = weight.contiguous();
  const cuda::OpPlan plan =
      cuda::plan_op(conv_problem(cuda::ConvOp::kInputGradient, args, g.scalar_type()), device,
                    cuda::OpOperands{g, grad_input});
  if (plan.path != cuda::OpPath::kHalf) return at::Tensor();
  cuda::launch_half(plan.half, plan.gather, g, w, at::Tensor(), grad_input,
                    c10::cuda::getCurrentCUDAStream(), plan.staging_floats);
  return grad_input;
}

HalfWeightGradients half_weight_gradient_cuda(const ConvTranspose3dArgs& args,
                                              const at::Tensor& input,
                                              const at::Tensor& grad_output, bool bias) {
  // The half mainloop runs on sm_90a only: elsewhere nothing is planned for it.
  const cuda::DeviceInfo device = cuda::current_device_info();
  if (!device.wgmma || input.numel() == 0 || grad_output.numel() == 0) return {};
  // Planned before any copy or allocation, on the input the kernel reads: a
  // non-contiguous one's contiguous copy (aligned).
  const cuda::OpPlan plan =
      cuda::plan_op(conv_problem(cuda::ConvOp::kWeightGradient, args, input.scalar_type()),
                    device, weight_gradient_operands(args, input));
  if (plan.path != cuda::OpPath::kHalf) return {};
  const at::TensorOptions sums = input.options().dtype(at::kFloat);
  at::Tensor grad_weight = at::empty_symint(args.weight_shape(), sums);
  at::Tensor grad_bias = bias ? at::empty({args.out_channels}, sums) : at::Tensor();
  cuda::launch_weight_gradient(plan.mainloop, input.contiguous(), grad_output.contiguous(),
                               grad_weight, c10::cuda::getCurrentCUDAStream(), grad_bias);
  const at::ScalarType dtype = input.scalar_type();
  return {grad_weight.to(dtype), bias ? grad_bias.to(dtype) : at::Tensor()};
}

at::Tensor conv_transpose3d_input_backward_cuda(const at::Tensor& grad_output,
                                                const at::Tensor& weight,
                                                c10::SymIntArrayRef input_size,
                                                c10::SymIntArrayRef stride,
                                                c10::SymIntArrayRef padding, c10::SymInt groups,
                                                c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  check_backward_tensor_cuda(grad_output);
  const c10::cuda::CUDAGuard device_guard(grad_output.device());
  if (is_reduced_precision(grad_output)) {
    if (at::Tensor grad_input = half_input_gradient_cuda(args, grad_output, weight);
        grad_input.defined()) {
      return grad_input;
    }
    return input_gradient_cuda(args, widened(grad_output), widened(weight), true)
        .to(grad_output.scalar_type());
  }
  return input_gradient_cuda(args, grad_output, weight, false);
}

at::Tensor weight_gradient_cuda(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                const at::Tensor& grad_output, bool operands_exact_in_tf32) {
  const GradientTensor result =
      allocate_gradient(args.weight_shape(), input.options(), grad_output);
  at::Tensor grad_weight = result.tensor;
  if (result.answered) return grad_weight;
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const cuda::OpPlan plan = cuda::plan_op(
      conv_problem(cuda::ConvOp::kWeightGradient, args, x.scalar_type(), operands_exact_in_tf32),
      cuda::current_device_info(), cuda::OpOperands{x, at::Tensor()});
  if (plan.path == cuda::OpPath::kEngine) {
    cuda::launch_weight_gradient(plan.mainloop, x, g, grad_weight, stream);
    return grad_weight;
  }
  TORCH_INTERNAL_ASSERT(plan.path == cuda::OpPath::kDirect,
                        "weight_gradient_cuda: float16 / bfloat16 operands");
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "ct3d_weight_backward_cuda", [&] {
    cuda::check_kernel_image(reinterpret_cast<const void*>(&weight_backward_kernel<scalar_t>),
                             "CUDA kernel");
    weight_backward_kernel<scalar_t><<<grad_weight.numel(), kReduceThreads, 0, stream>>>(
        plan.problem.geometry, x.const_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
        grad_weight.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return grad_weight;
}

at::Tensor conv_transpose3d_weight_backward_cuda(const at::Tensor& input,
                                                 const at::Tensor& grad_output,
                                                 c10::SymIntArrayRef kernel_size,
                                                 c10::SymIntArrayRef stride,
                                                 c10::SymIntArrayRef padding, c10::SymInt groups,
                                                 c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_weight_backward_args(input, grad_output, kernel_size,
                                                              stride, padding, groups, dilation);
  check_backward_tensor_cuda(input);
  const c10::cuda::CUDAGuard device_guard(input.device());
  if (is_reduced_precision(input)) {
    if (at::Tensor grad_weight = half_weight_gradient_cuda(args, input, grad_output, false).weight;
        grad_weight.defined()) {
      return grad_weight;
    }
    return weight_gradient_cuda(args, widened(input), widened(grad_output), true)
        .to(input.scalar_type());
  }
  return weight_gradient_cuda(args, input, grad_output, false);
}

}  // namespace ct3d
