// Which form of the window family takes a stride-1 layer: the shifted-window GEMM where
// it measured faster than the tap-rows and tap-columns forms and the other mainloops.
#pragma once

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Where the shifted-window GEMM measured faster than the other wgmma mainloops
// (docs/KERNEL_LOG.md, "channels on M, positions on N", "three width taps built in", "(width tap,
// channel) rows on wgmma's N"): the forward with at least 5 width taps, or with 3 and 41 to 64
// target channels per group, less those the tap-columns form takes (41-48:
// plan_tap_columns_if_taken); 40 or fewer are the tap-rows form's.
bool shifted_window_pays(const PhaseProblem& p, bool input_gradient);

}  // namespace ct3d::cuda
