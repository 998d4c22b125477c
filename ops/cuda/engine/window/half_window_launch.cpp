#include "ops/cuda/engine/gather/half_gather.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/engine/window/half_window.h"
#include "ops/cuda/engine/window/shifted_window.h"
#include "ops/cuda/engine/window/tap_rows.h"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {

bool half_window_may_apply(const GatherProblem& problem) {
  if (form_choice(FormSwitch::kHalfWindow) == FormChoice::kNever || !wgmma_enabled()) {
    return false;
  }
  for (const GatherDim& dim : problem.dim) {
    if (dim.phases.size() != 1) return false;
  }
  return true;
}

bool launch_half_plan(const GatherProblem& problem, const at::Tensor& source,
                      const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                      cudaStream_t stream, int64_t staging_budget) {
  // The engine's index limits are the same for both element sizes: asked as float32's.
  const HalfPlan plan = plan_half_gemm(problem, current_device_info(), output,
                                       implicit_gemm_supports(problem, at::kFloat));
  switch (plan.form) {
    case HalfForm::kShiftedWindow:
      launch_half_shifted_window(plan, source, weight, bias, output, stream);
      return true;
    case HalfForm::kTapRows:
      launch_half_tap_rows(plan, source, weight, bias, output, stream);
      return true;
    case HalfForm::kGather:
      launch_half_gather(problem, source, weight, bias, output, stream, staging_budget);
      return true;
    case HalfForm::kWidened:
      return false;
  }
  return false;
}

}  // namespace ct3d::cuda
