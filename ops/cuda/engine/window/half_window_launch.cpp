#include "ops/cuda/engine/gather/half_gather.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/engine/window/half_window.h"
#include "ops/cuda/engine/window/shifted_window.h"
#include "ops/cuda/engine/window/tap_rows.h"

namespace ct3d::cuda {

void launch_half(const HalfPlan& plan, const GatherProblem& problem, const at::Tensor& source,
                 const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                 cudaStream_t stream, int64_t staging_budget) {
  switch (plan.form) {
    case HalfForm::kShiftedWindow:
      return launch_half_shifted_window(plan, problem, source, weight, bias, output, stream);
    case HalfForm::kTapRows:
      return launch_half_tap_rows(plan, problem, source, weight, bias, output, stream);
    case HalfForm::kGather:
      return launch_half_gather(problem, source, weight, bias, output, stream,
                                staging_budget);
    case HalfForm::kWidened:
      break;
  }
  TORCH_INTERNAL_ASSERT(false, "launch_half: the plan names no half form");
}

}  // namespace ct3d::cuda
