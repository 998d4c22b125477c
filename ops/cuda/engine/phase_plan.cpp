#include "ops/cuda/engine/phase_plan.h"

namespace ct3d {

std::vector<PhaseDimPlan> plan_phases(int64_t input_extent, int64_t output_extent, int64_t kernel,
                                      int64_t stride, int64_t padding, int64_t dilation) {
  std::vector<PhaseDimPlan> phases(stride);
  for (int64_t r = 0; r < stride; ++r) {
    PhaseDimPlan& phase = phases[r];
    phase.residue = r;
    phase.positions = r < output_extent ? (output_extent - r + stride - 1) / stride : 0;
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t numerator = r + padding - k * dilation;
      if (numerator % stride != 0) continue;
      const int64_t shift = numerator / stride;
      // Input index q + shift must hit [0, input_extent) for some q in [0, positions).
      const bool reaches_input = shift < input_extent && shift + phase.positions - 1 >= 0;
      if (phase.positions == 0 || !reaches_input) continue;
      phase.taps.push_back(static_cast<int>(k));
      phase.input_shift.push_back(shift);
    }
  }
  return phases;
}

}  // namespace ct3d
