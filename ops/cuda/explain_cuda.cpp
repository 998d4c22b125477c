// ct3d::explain on CUDA: which path each op takes for a layer's tensors, as the planners
// decide it (engine/planner/gemm_plan.h: plan_gemm, plan_half_gemm; Winograd's
// plan_winograd_forward; planner/fused_backward_plan.h for the weight gradient), without
// computing anything.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>

#include <string>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/planner/fused_backward_plan.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"
#include "ops/cuda/engine/window/window_tensor_map.h"
#include "ops/cuda/winograd/winograd_forward.h"

namespace ct3d {
namespace {

std::string winograd_text(const cuda::WinogradPlan& plan) {
  using std::to_string;
  return "winograd (F(" + to_string(plan.dim[0].tile) + ", " + to_string(plan.dim[0].kernel) +
         ") x F(" + to_string(plan.dim[1].tile) + ", " + to_string(plan.dim[1].kernel) +
         ") around the engine's GEMM)";
}

// The engine's path for a problem whose source is `source` (as the op passes it:
// batched, contiguous; a meta tensor stands for one the op allocates, aligned) and whose
// target has `target`'s strides (a meta tensor: no data is read).
std::string gemm_text(const cuda::GatherProblem& problem, const at::Tensor& source,
                      const at::Tensor& target, bool may_fold) {
  cuda::GemmOperands operands;
  operands.source_fits_boxes =
      source.is_meta()
          ? source.numel() > 0 && cuda::channels_fit_boxes(problem.groups, problem.reduce_channels)
          : cuda::source_fits_boxes(source, problem.groups, problem.reduce_channels);
  operands.may_fold = may_fold && target.is_contiguous();
  return cuda::describe(cuda::plan_gemm(problem, cuda::current_device_info(), operands, target));
}

// The path of the forward or the input gradient (`problem`), float32 or half, where
// the engine takes it: the half forms' plan, else Winograd's where `winograd` holds
// a plan for it (float32 operands only), else the GEMM's.
std::string engine_text(const cuda::GatherProblem& problem, bool half,
                        const std::optional<cuda::WinogradPlan>& winograd, const at::Tensor& source,
                        const at::Tensor& target, bool may_fold) {
  if (half) {
    const cuda::HalfPlan plan =
        cuda::plan_half_gemm(problem, cuda::current_device_info(), target, true);
    if (plan.form != cuda::HalfForm::kWidened) return cuda::describe(plan);
    cuda::GatherProblem widened = problem;
    widened.operands_exact_in_tf32 = true;
    return "widened to float32: " + gemm_text(widened, source, target, may_fold);
  }
  if (winograd) return winograd_text(*winograd);
  return gemm_text(problem, source, target, may_fold);
}

}  // namespace

std::string explain_cuda(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                         c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                         c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const ConvGeometry geometry = geometry_of(args);
  const bool half = is_reduced_precision(input);
  // float64 runs the direct kernels; the engine's limits are float32's for every dtype
  // it takes.
  const at::ScalarType engine_dtype = half ? at::kFloat : input.scalar_type();
  const char* direct = input.scalar_type() == at::kDouble
                           ? "direct kernel (float64)"
                           : "direct kernel (past the engine's limits)";
  // The tensors' layouts as the ops make them; meta tensors give the strides (and stand
  // for the outputs the ops allocate).
  const at::TensorOptions meta = input.options().device(at::kMeta);
  // The forward's source as the op passes it: the input itself where it is contiguous,
  // else a contiguous copy, for which a meta tensor stands (explain copies nothing).
  const at::Tensor batched_input = args.batched ? input : input.unsqueeze(0);
  const at::Tensor input5 =
      batched_input.is_contiguous() ? batched_input : at::empty(batched_input.sizes(), meta);
  at::Tensor output = at::empty_symint(
      args.output_shape(), meta.memory_format(output_memory_format(args, input, weight)));
  if (!args.batched) output = output.unsqueeze(0);
  const at::Tensor grad_output = at::empty(output.sizes(), meta);  // contiguous
  const at::Tensor grad_input = at::empty(input5.sizes(), meta);
  // Text by concatenation, not iostreams (ops/common/error_message.h says why).
  std::string text = "forward: ";
  const cuda::GatherProblem forward = cuda::forward_gather(geometry);
  if (output.numel() == 0) {
    text += "nothing to compute";
  } else if (!cuda::implicit_gemm_supports(forward, engine_dtype)) {
    text += direct;
  } else {
    text +=
        engine_text(forward, half, cuda::plan_winograd_forward(geometry, output.is_contiguous()),
                    input5, output, true);
  }

  text += "\ninput gradient: ";
  const cuda::GatherProblem backward = cuda::input_gradient_gather(geometry);
  const std::optional<ConvGeometry> swapped = cuda::input_gradient_as_forward(geometry);
  if (grad_input.numel() == 0 || output.numel() == 0) {
    text += "nothing to compute";
  } else if (!cuda::implicit_gemm_supports(backward, engine_dtype)) {
    text += direct;
  } else {
    text += engine_text(backward, half,
                        swapped ? cuda::plan_winograd_forward(*swapped, true) : std::nullopt,
                        grad_output, grad_input, false);
  }

  text += "\nweight gradient: ";
  cuda::WeightGradientPlan wgrad = cuda::plan_weight_gradient(geometry);
  if (weight.numel() == 0 || output.numel() == 0) {
    text += "nothing to compute";
  } else if (!cuda::weight_gradient_supports(wgrad, at::kFloat) || engine_dtype != at::kFloat) {
    text += direct;
  } else {
    // As the all-gradients call (autograd's, with the input gradient asked for) plans it.
    const cuda::DeviceInfo device = cuda::current_device_info();
    cuda::FusedBackwardPlan plan;
    if (half) {
      plan.weight_gradient = cuda::plan_weight_gradient_mainloop(
          wgrad, device, cuda::wgrad_operands_of(batched_input, false));
    }
    if (!half || plan.weight_gradient.form == cuda::WgradForm::kWidened) {
      wgrad.operands_exact_in_tf32 = half;
      const at::Tensor widened_input = at::empty(batched_input.sizes(), meta.dtype(at::kFloat));
      // The input gradient shares the widened call where it is widened too.
      const bool input_gradient =
          grad_input.numel() > 0 && cuda::implicit_gemm_supports(backward, at::kFloat) &&
          (!half || cuda::plan_half_gemm(backward, device, grad_input, true).form ==
                        cuda::HalfForm::kWidened);
      plan = cuda::plan_fused_backward(
          wgrad, input_gradient ? &backward : nullptr, device,
          cuda::wgrad_operands_of(half ? widened_input : input5, false), grad_input.sym_sizes());
      if (half) text += "widened to float32: ";
    }
    text += cuda::describe(plan.weight_gradient);
    if (plan.input_gradient_on_staged_output) {
      text += "; in the all-gradients call the input gradient runs on its staged grad_output";
    }
  }
  return text + "\n";
}

}  // namespace ct3d
