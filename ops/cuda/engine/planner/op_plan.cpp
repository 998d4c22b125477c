#include "ops/cuda/engine/planner/op_plan.h"

#include "ops/common/reduced_precision.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"
#include "ops/cuda/engine/window/window_tensor_map.h"
#include "ops/cuda/winograd/winograd_forward.h"

namespace ct3d::cuda {
namespace {

// Whether TMA boxes may read the source in place. A copy the op makes (a meta tensor
// standing for it, or `fresh_float_copy`: the float32 copy of widened operands) is
// contiguous and aligned, so the channels alone decide; no tensor is made for it.
bool fits_boxes(const at::Tensor& source, const GatherProblem& problem, bool fresh_float_copy) {
  if (fresh_float_copy || source.is_meta()) {
    return (fresh_float_copy || source.scalar_type() == at::kFloat) && source.dim() == 5 &&
           source.numel() > 0 && channels_fit_boxes(problem.groups, problem.reduce_channels);
  }
  return source_fits_boxes(source, problem.groups, problem.reduce_channels);
}

// The forward and the input gradient: the half forms, else (widened or float32)
// Winograd where it applies and pays, the engine's GEMM, or the direct kernels.
void plan_gather_op(const ConvProblem& problem, const DeviceInfo& device,
                    const OpOperands& operands, OpPlan& plan) {
  const bool forward = problem.op == ConvOp::kForward;
  plan.gather =
      forward ? forward_gather(problem.geometry) : input_gradient_gather(problem.geometry);
  plan.widened = problem.operands_exact_in_tf32;
  // The engine's index limits, the same for both element sizes and for widened operands.
  const bool on_engine = device.engine && implicit_gemm_fits(plan.gather);
  const bool half = is_reduced_precision(problem.dtype);
  if (half) {
    plan.half = plan_half_gemm(plan.gather, device, operands.target, on_engine);
    if (plan.half.form != HalfForm::kWidened) {
      plan.path = OpPath::kHalf;
      return;
    }
    plan.widened = true;
  }
  plan.gather.operands_exact_in_tf32 = plan.widened;
  const at::ScalarType engine_dtype = plan.widened ? at::kFloat : problem.dtype;
  if (engine_dtype != at::kFloat || !on_engine) {
    plan.path = OpPath::kDirect;
    return;
  }
  // Winograd on float32 operands only: widened ones are exact in TF32 without the
  // transforms, which would make them inexact.
  if (problem.dtype == at::kFloat && !plan.widened) {
    const bool contiguous = operands.target.is_contiguous();
    if (forward) {
      plan.winograd = plan_winograd_forward(problem.geometry, device, contiguous);
    } else if (const std::optional<ConvGeometry> swapped =
                   input_gradient_as_forward(problem.geometry)) {
      plan.winograd = plan_winograd_forward(*swapped, device, contiguous);
    }
    if (plan.winograd) {
      plan.path = OpPath::kWinograd;
      return;
    }
  }
  GemmOperands gemm_operands;
  // Half operands run on their widened copy.
  gemm_operands.source_fits_boxes = fits_boxes(operands.source, plan.gather, half);
  // The forward queues an exact rerun behind a folded GEMM (launch_gemm_plan).
  gemm_operands.may_fold = forward && operands.target.is_contiguous();
  plan.gemm = plan_gemm(plan.gather, device, gemm_operands, operands.target);
  plan.path = OpPath::kEngine;
}

// The weight gradient: the half wgmma mainloop, else (widened or float32) the engine's
// mainloops, or the direct kernel.
void plan_weight_gradient_op(const ConvProblem& problem, const DeviceInfo& device,
                             const OpOperands& operands, OpPlan& plan) {
  plan.weight_gradient = plan_weight_gradient(problem.geometry);
  plan.widened = problem.operands_exact_in_tf32;
  // The engine's limits, the same for both element sizes and for widened operands.
  const bool on_engine = device.engine && weight_gradient_fits(plan.weight_gradient);
  const bool half = is_reduced_precision(problem.dtype);
  if (half) {
    if (on_engine) {
      plan.mainloop = plan_weight_gradient_mainloop(plan.weight_gradient, device,
                                                    wgrad_operands_of(operands.source, false));
      if (plan.mainloop.form == WgradForm::kWgmma) {
        plan.path = OpPath::kHalf;
        return;
      }
    }
    plan.widened = true;
  }
  plan.weight_gradient.operands_exact_in_tf32 = plan.widened;
  const at::ScalarType engine_dtype = plan.widened ? at::kFloat : problem.dtype;
  if (engine_dtype != at::kFloat || !on_engine) {
    plan.path = OpPath::kDirect;
    return;
  }
  // Half operands run on their widened copy: float32, fresh, so aligned.
  const WgradOperands widened_copy{4, true, false};
  plan.mainloop = plan_weight_gradient_mainloop(
      plan.weight_gradient, device,
      half ? widened_copy : wgrad_operands_of(operands.source, false));
  plan.path = OpPath::kEngine;
}

std::string winograd_text(const WinogradForwardPlan& forward) {
  using std::to_string;
  const WinogradPlan& plan = forward.transforms;
  const int64_t chunk = forward.chunk_samples();
  return "winograd (F(" + to_string(plan.dim[0].tile) + ", " + to_string(plan.dim[0].kernel) +
         ") x F(" + to_string(plan.dim[1].tile) + ", " + to_string(plan.dim[1].kernel) +
         ") around the engine's GEMM; " + to_string(chunk) + (chunk == 1 ? " sample" : " samples") +
         " a chunk)";
}

}  // namespace

std::string describe_staging(int64_t staging_floats) {
  if (staging_floats == kUnlimitedStaging) return "";
  return "; staged within " + std::to_string((staging_floats + (1 << 19)) >> 20) +
         " Mi values a chunk";
}

OpPlan plan_op(const ConvProblem& problem, const DeviceInfo& device, const OpOperands& operands) {
  OpPlan plan;
  plan.problem = problem;
  switch (problem.op) {
    case ConvOp::kForward:
      plan_gather_op(problem, device, operands, plan);
      break;
    case ConvOp::kInputGradient:
      plan_gather_op(problem, device, operands, plan);
      plan.staging_floats = backward_staging_budget(problem.geometry.output_elements());
      break;
    case ConvOp::kWeightGradient:
      plan_weight_gradient_op(problem, device, operands, plan);
      plan.staging_floats = plan.weight_gradient.staging_floats;
      break;
  }
  return plan;
}

std::string describe(const OpPlan& plan) {
  const bool weight_gradient = plan.problem.op == ConvOp::kWeightGradient;
  // Text by concatenation, not iostreams (ops/common/error_message.h says why).
  switch (plan.path) {
    case OpPath::kHalf:
      return (weight_gradient ? describe(plan.mainloop) : describe(plan.half)) +
             describe_staging(plan.staging_floats);
    case OpPath::kWinograd:
      return winograd_text(*plan.winograd);
    case OpPath::kEngine:
      return std::string(plan.widened ? "widened to float32: " : "") +
             (weight_gradient ? describe(plan.mainloop) : describe(plan.gemm)) +
             describe_staging(plan.staging_floats);
    case OpPath::kDirect:
      break;
  }
  return plan.problem.dtype == at::kDouble ? "direct kernel (float64)"
                                           : "direct kernel (past the engine's limits)";
}

}  // namespace ct3d::cuda
