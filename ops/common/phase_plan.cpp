#include "ops/common/phase_plan.h"

namespace ct3d {

std::vector<PhaseDimPlan> plan_phases(const DimGeometry& d) {
  std::vector<PhaseDimPlan> phases(d.stride);
  for (int64_t r = 0; r < d.stride; ++r) {
    PhaseDimPlan& phase = phases[r];
    phase.residue = r;
    phase.positions = r < d.output ? (d.output - r + d.stride - 1) / d.stride : 0;
    for (int64_t k = 0; k < d.kernel; ++k) {
      int64_t shift = 0;
      if (!d.source_index(r, k, shift)) continue;
      // Input index q + shift must hit [0, input) for some q in [0, positions).
      const bool reaches_input = shift < d.input && shift + phase.positions - 1 >= 0;
      if (phase.positions == 0 || !reaches_input) continue;
      phase.taps.push_back(static_cast<int>(k));
      phase.input_shift.push_back(shift);
    }
  }
  return phases;
}

}  // namespace ct3d
