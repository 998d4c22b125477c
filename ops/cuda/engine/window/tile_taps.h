// The (depth tap, height tap) pairs a shifted-window tile needs (KERNEL_LOG "leave out the halo's
// taps"). A stride-1 target plane qd reads source plane qd + first_shift + td * shift_step at depth
// tap td, and a target line likewise its source line at each height tap. Where every stored output
// of a tile reads outside the source at a tap (the planes and lines next to the target's borders),
// that tap's terms are the zero halo's, so the tile's walk leaves its stages out: 58's 18 target
// planes read 16 source planes, 11 % of its (plane, depth tap) pairs halo. Host and device code, so
// that the unit tests can check every stored output's reads.
#pragma once

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/halo_taps.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"

namespace ct3d::cuda {

struct TileTaps {
  TapRange depth, height;
};

CT3D_HOST_DEVICE TileTaps all_tile_taps(const PhaseProblem& p) {
  return {{0, p.dim[0].residue[0].taps}, {0, p.dim[1].residue[0].taps}};
}

// The taps of the tile on target plane qd whose stored outputs lie on target lines
// [line0, line1]; all of them where the plan does not skip.
CT3D_HOST_DEVICE TileTaps tile_taps(const PhaseProblem& p, const ShiftedWindowPlan& plan, int qd,
                                    int line0, int line1) {
  if (!plan.skip_halo_taps) return all_tile_taps(p);
  return {taps_inside_source(p.dim[0].residue[0], qd, qd, p.source_extent[0]),
          taps_inside_source(p.dim[1].residue[0], line0, line1, p.source_extent[1])};
}

// A shifted-window GEMM or tap-rows window tile (columns of the compact grid from
// column0): the lines of every column its window computes, stored or not.
CT3D_HOST_DEVICE TileTaps window_columns_tile_taps(const PhaseProblem& p,
                                                   const ShiftedWindowPlan& plan, int qd,
                                                   int column0) {
  const int end = column0 + plan.block_columns < plan.plane_columns ? column0 + plan.block_columns
                                                                    : plan.plane_columns;
  return tile_taps(p, plan, qd, column0 / plan.line_pitch, (end - 1) / plan.line_pitch);
}

}  // namespace ct3d::cuda
