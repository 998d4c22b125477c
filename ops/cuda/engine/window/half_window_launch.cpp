#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"
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

bool launch_half_window(const GatherProblem& problem, const at::Tensor& source,
                        const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                        cudaStream_t stream) {
  // The engine's index limits are the same for both element sizes: asked as float32's.
  if (!half_window_may_apply(problem) || !implicit_gemm_supports(problem, at::kFloat)) {
    return false;
  }
  // The float32 forward's order: the shifted-window GEMM where it pays (or wherever it
  // applies, where the tests force it), else the tap-rows form; then the
  // shifted-window GEMM wherever it applies, since the alternative here is the widened
  // float32 path, not another half mainloop.
  const bool window_first = form_choice(FormSwitch::kShiftedWindow) == FormChoice::kAlways;
  return launch_half_shifted_window(problem, source, weight, bias, output, stream,
                                    !window_first) ||
         launch_half_tap_rows(problem, source, weight, bias, output, stream) ||
         launch_half_shifted_window(problem, source, weight, bias, output, stream, false);
}

}  // namespace ct3d::cuda
