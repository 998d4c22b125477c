// ct3d::explain on CUDA: which path each op takes for a layer's tensors, as the planner
// decides it (engine/planner/gemm_plan.h), without computing anything. The float32
// forward and input gradient come from the planner; float16 and bfloat16 choose their
// half forms in their launchers (engine/window/half_window.h, engine/gather/half_gather.h),
// which the planner does not hold yet.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>

#include <string>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
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
  return cuda::describe(
      cuda::plan_gemm(problem, cuda::current_device_info(), operands, target));
}

}  // namespace

std::string explain_cuda(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                         c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                         c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  const c10::cuda::CUDAGuard device_guard(input.device());
  // Text by concatenation, not iostreams (ops/common/error_message.h says why).
  std::string text;
  if (is_reduced_precision(input)) {
    return "forward, gradients: " + std::string(c10::toString(input.scalar_type())) +
           " takes the engine's half forms where they apply (plan_half_gemm, which needs the "
           "allocated output; not printed yet), else float32 on widened operands\n";
  }
  const ConvGeometry geometry = geometry_of(args);
  const bool float32 = input.scalar_type() == at::kFloat;
  // The tensors' layouts as the ops make them; meta tensors give the strides.
  const at::Tensor input5 = (args.batched ? input : input.unsqueeze(0)).contiguous();
  const at::TensorOptions meta = input.options().device(at::kMeta);
  at::Tensor output = at::empty_symint(
      args.output_shape(), meta.memory_format(output_memory_format(args, input, weight)));
  if (!args.batched) output = output.unsqueeze(0);
  const at::Tensor grad_output = at::empty(output.sizes(), meta);  // contiguous
  const at::Tensor grad_input = at::empty(input5.sizes(), meta);

  const cuda::GatherProblem forward = cuda::forward_gather(geometry);
  text += "forward: ";
  if (output.numel() == 0) {
    text += "nothing to compute";
  } else if (!cuda::implicit_gemm_supports(forward, input.scalar_type())) {
    text += float32 ? "direct kernel (past the engine's limits)" : "direct kernel (float64)";
  } else if (const auto plan = cuda::plan_winograd_forward(geometry, output.is_contiguous())) {
    text += winograd_text(*plan);
  } else {
    text += gemm_text(forward, input5, output, true);
  }

  const cuda::GatherProblem backward = cuda::input_gradient_gather(geometry);
  text += "\ninput gradient: ";
  if (grad_input.numel() == 0 || output.numel() == 0) {
    text += "nothing to compute";
  } else if (!cuda::implicit_gemm_supports(backward, input.scalar_type())) {
    text += float32 ? "direct kernel (past the engine's limits)" : "direct kernel (float64)";
  } else if (const auto swapped = cuda::input_gradient_as_forward(geometry);
             swapped && cuda::plan_winograd_forward(*swapped, true)) {
    text += winograd_text(*cuda::plan_winograd_forward(*swapped, true));
  } else {
    text += gemm_text(backward, grad_output, grad_input, false);
  }

  const cuda::WeightGradientPlan wgrad = cuda::plan_weight_gradient(geometry);
  text += "\nweight gradient: ";
  if (weight.numel() == 0 || output.numel() == 0) {
    text += "nothing to compute";
  } else if (!cuda::weight_gradient_supports(wgrad, input.scalar_type())) {
    text += float32 ? "direct kernel (past the engine's limits)" : "direct kernel (float64)";
  } else {
    text += "the weight-gradient GEMM (its mainloop chosen in its launcher, not yet by the "
            "planner)";
    if (wgrad.fold > 1) text += ", groups folded " + std::to_string(wgrad.fold) + " at a time";
  }
  return text + "\n";
}

}  // namespace ct3d
