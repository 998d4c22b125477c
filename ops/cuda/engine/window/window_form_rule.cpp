#include "ops/cuda/engine/window/window_form_rule.h"

#include "ops/cuda/engine/window/tap_rows_plan.h"

namespace ct3d::cuda {

bool shifted_window_pays(const PhaseProblem& p, bool input_gradient) {
  // The stride-1 input gradients measured 0.82-0.94x. With 3 width taps (three taps
  // built in, KERNEL_LOG "three width taps built in") a stage's window feeds fewer wgmmas:
  // 0.94-0.97x the plain wgmma mainloop on 128-256 target channels (the wide k3 layers), 1.12x
  // width-tap reuse on blocks of 48 (61); at 40 or fewer the tap-rows form takes the layer (its 3
  // x channels rounded to 8 fit 128 rows), and at 41-48 its tap-columns form (144 rows:
  // 1.10x this GEMM on 61, KERNEL_LOG "(width tap, channel) rows on wgmma's N") where that is
  // taken.
  if (input_gradient) return false;
  const int taps = p.dim[2].residue[0].taps;
  const int tap_rows_channels = 128 / 3 / kTapRowsChannelStep * kTapRowsChannelStep;
  if (taps >= 5) return true;
  return taps == 3 && p.cout_per_group > tap_rows_channels && p.cout_per_group <= 64 &&
         plan_tap_columns_if_taken(p, input_gradient).window.columns == 0;
}

}  // namespace ct3d::cuda
