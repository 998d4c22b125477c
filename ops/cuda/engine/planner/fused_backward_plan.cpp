#include "ops/cuda/engine/planner/fused_backward_plan.h"

#include <ATen/ops/empty.h>

#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {

FusedBackwardPlan plan_fused_backward(const WeightGradientPlan& weight_gradient,
                                      const GatherProblem* input_gradient, const DeviceInfo& device,
                                      WgradOperands operands,
                                      c10::SymIntArrayRef grad_input_shape) {
  FusedBackwardPlan plan;
  if (input_gradient != nullptr) {
    // Shared where it pays (the tests force it either way: forced_form.h, shared-staging
    // and unshared-staging) and the gather reads the same staged layout, except where
    // the tap-columns form takes the input gradient: with its own staging it measured
    // 1.33x the GEMM on the shared copy (L1-68, KERNEL_LOG "unsplit quad planes").
    const FormChoice sharing = form_choice(FormSwitch::kSharedStaging);
    plan.input_gradient_on_staged_output =
        (sharing == FormChoice::kAlways ||
         (sharing == FormChoice::kRule && sharing_staged_output_pays(weight_gradient, device))) &&
        gather_staged_layout(*input_gradient) == weight_gradient.output &&
        !tap_columns_takes(*input_gradient, device,
                           at::empty_symint(grad_input_shape, at::TensorOptions(at::kMeta)));
  }
  operands.shares_staged_output = plan.input_gradient_on_staged_output;
  plan.weight_gradient = plan_weight_gradient_mainloop(weight_gradient, device, operands);
  if (plan.input_gradient_on_staged_output) {
    // The gathering GEMM reads the staged chunk, groups unfolded (no exact rerun).
    GemmOperands chunk_operands;
    chunk_operands.prestaged = true;
    plan.input_gradient = plan_chunk_gemms(*input_gradient, plan.weight_gradient.chunk_samples,
                                           device, chunk_operands);
  }
  return plan;
}

}  // namespace ct3d::cuda
