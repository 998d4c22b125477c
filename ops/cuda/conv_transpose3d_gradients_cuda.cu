// All gradients of one forward call on CUDA (conv_transpose3d_backward). With the
// weight gradient on the float32 engine, grad_output is read once: the weight
// gradient's staging pass also sums dL/db, and where the planner says so
// (planner/fused_backward_plan.h) the input gradient's GEMM runs on that staged copy,
// chunk by chunk. The rest (float64, other layouts) runs each gradient's own path;
// float16 and bfloat16 run as float32 on widened operands, but for the input and weight
// gradients on the engine's half forms where they apply.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_backward_args.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d_backward.h"
#include "ops/cuda/channel_sums.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/planner/fused_backward_plan.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"
#include "ops/cuda/gradients_cuda.h"

namespace ct3d {
namespace {

// The gradients of float32 or float64 tensors; operands_exact_in_tf32: widened from
// float16 or bfloat16 (the input gradient then takes one TF32 product each).
Gradients gradients_cuda(const ConvTranspose3dArgs& args, const at::Tensor& grad_output,
                         const at::Tensor& input, const at::Tensor& weight,
                         std::array<bool, 3> output_mask, bool operands_exact_in_tf32) {
  const ConvGeometry geometry = geometry_of(args);
  cuda::WeightGradientPlan plan = cuda::plan_weight_gradient(geometry);
  plan.operands_exact_in_tf32 = operands_exact_in_tf32;
  // The engine's mainloops take float32 (or widened) operands within their limits.
  const cuda::DeviceInfo device = cuda::current_device_info();
  const bool on_engine = device.engine && grad_output.scalar_type() == at::kFloat;
  at::Tensor grad_input, grad_weight, grad_bias;
  const bool fused = output_mask[1] && weight.numel() > 0 && input.numel() > 0 &&
                     grad_output.numel() > 0 && on_engine && cuda::weight_gradient_fits(plan);
  if (!fused) {
    // The two gradients' own paths and a sum: nothing shared.
    if (output_mask[0]) {
      grad_input = input_gradient_cuda(args, grad_output, weight, operands_exact_in_tf32);
    }
    if (output_mask[1])
      grad_weight = weight_gradient_cuda(args, input, grad_output, operands_exact_in_tf32);
    if (output_mask[2]) {
      grad_bias = cuda::channel_sums(grad_output, c10::cuda::getCurrentCUDAStream());
    }
    return {grad_input, grad_weight, grad_bias};
  }
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous(), w = weight.contiguous();
  grad_weight = at::empty_symint(args.weight_shape(), input.options());
  if (output_mask[2]) grad_bias = at::empty({args.out_channels}, input.options());
  cuda::GatherProblem problem = cuda::input_gradient_gather(geometry);
  problem.operands_exact_in_tf32 = operands_exact_in_tf32;
  const bool input_gradient_on_engine = output_mask[0] && cuda::implicit_gemm_fits(problem);
  const cuda::FusedBackwardPlan fused_plan =
      cuda::plan_fused_backward(plan, input_gradient_on_engine ? &problem : nullptr, device,
                                cuda::wgrad_operands_of(x, false), args.input_shape());
  cuda::StagedChunkHook input_gradient_on_chunk;
  if (fused_plan.input_gradient_on_staged_output) {
    grad_input = at::empty_symint(args.input_shape(), input.options());
    input_gradient_on_chunk = [&](int64_t first, int64_t samples, const at::Tensor& staged) {
      at::Tensor grad_input_chunk = grad_input.narrow(0, first, samples);
      cuda::launch_gemm_plan(fused_plan.input_gradient.of_chunk(samples),
                             g.narrow(0, first, samples), w, at::Tensor(), grad_input_chunk,
                             stream, cuda::kUnlimitedStaging, nullptr, staged);
    };
  } else if (output_mask[0]) {
    grad_input = input_gradient_cuda(args, g, w, operands_exact_in_tf32);
  }
  cuda::launch_weight_gradient(fused_plan.weight_gradient, x, g, grad_weight, stream, grad_bias,
                               input_gradient_on_chunk);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

Gradients conv_transpose3d_backward_cuda(const at::Tensor& grad_output, const at::Tensor& input,
                                         const at::Tensor& weight, c10::SymIntArrayRef stride,
                                         c10::SymIntArrayRef padding, c10::SymInt groups,
                                         c10::SymIntArrayRef dilation,
                                         std::array<bool, 3> output_mask) {
  const ConvTranspose3dArgs args =
      check_backward_args(grad_output, input, weight, stride, padding, groups, dilation);
  check_backward_tensor_cuda(grad_output);
  const c10::cuda::CUDAGuard device_guard(grad_output.device());
  if (!is_reduced_precision(grad_output)) {
    return gradients_cuda(args, grad_output, input, weight, output_mask, false);
  }
  // The input and weight gradients on the engine's half forms where they apply (the
  // bias gradient with the weight gradient), the rest widened. grad_output made
  // contiguous once for both.
  const at::Tensor g = grad_output.contiguous();
  const at::Tensor half_grad_input =
      output_mask[0] ? half_input_gradient_cuda(args, g, weight) : at::Tensor();
  const HalfWeightGradients half_weight =
      output_mask[1] ? half_weight_gradient_cuda(args, input, g, output_mask[2])
                     : HalfWeightGradients{};
  const std::array<bool, 3> widened_mask = {output_mask[0] && !half_grad_input.defined(),
                                            output_mask[1] && !half_weight.weight.defined(),
                                            output_mask[2] && !half_weight.bias.defined()};
  const auto pick = [&](const at::Tensor& half, const at::Tensor& other) {
    return half.defined() ? half : other.defined() ? other.to(grad_output.scalar_type()) : other;
  };
  // Nothing else asked for: no widened copies.
  if (!widened_mask[0] && !widened_mask[1] && !widened_mask[2]) {
    return {half_grad_input, half_weight.weight, half_weight.bias};
  }
  // Widened copies only of the operands a widened gradient reads.
  const auto [grad_input, grad_weight, grad_bias] =
      gradients_cuda(args, widened(g), widened_mask[1] ? widened(input) : input,
                     widened_mask[0] ? widened(weight) : weight, widened_mask, true);
  return {pick(half_grad_input, grad_input), pick(half_weight.weight, grad_weight),
          pick(half_weight.bias, grad_bias)};
}

}  // namespace ct3d
