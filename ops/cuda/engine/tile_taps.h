// The (depth tap, height tap) pairs a shifted-window tile needs (KERNEL_LOG tc15). A
// stride-1 target plane qd reads source plane qd + first_shift + td * shift_step at
// depth tap td, and a target line likewise its source line at each height tap. Where
// every stored output of a tile reads outside the source at a tap (the planes and lines
// next to the target's borders), that tap's terms are the zero halo's, so the tile's
// walk leaves its stages out: 58's 18 target planes read 16 source planes, 11 % of its
// (plane, depth tap) pairs halo. Host and device code, so that the unit tests can check
// every stored output's reads.
#pragma once

#include "ops/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/implicit_gemm_problem.h"
#include "ops/cuda/engine/tap_rows_plan.h"
#include "ops/cuda/engine/window_box_geometry.h"

namespace ct3d::cuda {

// Taps [first, first + count) of one dimension.
struct TapRange {
  int first, count;
};

// The taps of residue r at which some target index in [q0, q1] reads inside [0, extent):
// one run, as the shift moves monotonically with the tap.
CT3D_HOST_DEVICE TapRange taps_inside_source(const ResidueParams& r, int q0, int q1, int extent) {
  TapRange range{0, 0};
  for (int t = 0; t < r.taps; ++t) {
    const int shift = r.first_shift + t * r.shift_step;
    if (q1 + shift >= 0 && q0 + shift < extent) {
      if (range.count == 0) range.first = t;
      range.count = t - range.first + 1;
    }
  }
  return range;
}

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

// Whether some target plane or line reads only the halo at a tap: where none does, no
// tile leaves out a tap (plan_compact_grid then turns skip_halo_taps off, so that the
// kernels count all stages without decoding their tiles). The shift moves monotonically
// with the tap, so the border planes and lines are the ones to check.
CT3D_HOST_DEVICE bool border_taps_read_halo(const PhaseProblem& p) {
  for (int i = 0; i < 2; ++i) {
    const ResidueParams& r = p.dim[i].residue[0];
    const int last = p.dim[i].max_positions - 1;
    if (taps_inside_source(r, 0, 0, p.source_extent[i]).count < r.taps ||
        taps_inside_source(r, last, last, p.source_extent[i]).count < r.taps) {
      return true;
    }
  }
  return false;
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

// A tap-rows or tap-columns tile: line tiles store whole target lines from column0, flat
// tiles the flat rows flat_tile_owned gives, the others as window_columns_tile_taps.
CT3D_HOST_DEVICE TileTaps tap_rows_tile_taps(const PhaseProblem& p, const TapRowsPlan& plan, int qd,
                                             int column0) {
  if (plan.tile_lines > 0) {
    const int lines = p.dim[1].max_positions;
    const int last = column0 + plan.tile_lines < lines ? column0 + plan.tile_lines - 1 : lines - 1;
    return tile_taps(p, plan.window, qd, column0, last);
  }
  if (plan.flat_step > 0) {
    const FlatRange owned = flat_tile_owned(p, plan, column0);
    const int width = p.source_extent[2];
    const int last = owned.end > owned.begin ? owned.end - 1 : owned.begin;
    return tile_taps(p, plan.window, qd, owned.begin / width, last / width);
  }
  return window_columns_tile_taps(p, plan.window, qd, column0);
}

}  // namespace ct3d::cuda
