// Where the tap-columns form's window boxes (window_boxes.cuh) start in the source and
// where a window row lands in a box: host and device code, so that the unit tests can
// check every stored output's reads against the compact grid's.
#pragma once

#include <cstdint>

#include "ops/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/implicit_gemm_problem.h"
#include "ops/cuda/engine/tap_rows_plan.h"

namespace ct3d::cuda {

// The source depth and line of the box holding the window whose first compact row is
// `row` (non-negative, below plan_plane_rows' 2^31): the plane and line of that row,
// less the halos. Its first width is window_box_first_width.
struct BoxStart {
  int depth, line;
};
CT3D_HOST_DEVICE BoxStart window_box_start(const PhaseProblem& p, const ShiftedWindowPlan& window,
                                           int row) {
  const int plane_pitch = static_cast<int>(window.plane_pitch);
  const int plane = row / plane_pitch;
  return {plane - p.halo_low[0], (row - plane * plane_pitch) / window.line_pitch - p.halo_low[1]};
}

// Line tiles (plan.tile_lines > 0): the source depth and the flat plane position (line
// x width + column) of the box for depth tap td and height tap th of the tile whose
// first target line is `line0` at target depth `depth`: the target line's source line
// for that tap, column 0.
CT3D_HOST_DEVICE BoxStart line_box_start(const PhaseProblem& p, int depth, int line0, int td,
                                         int th) {
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  return {depth + rd.first_shift + td * rd.shift_step,
          (line0 + rh.first_shift + th * rh.shift_step) * p.source_extent[2]};
}

// The source width a box line starts at: box_lead before compact position 0 (the
// halo's first), a multiple of 4.
CT3D_HOST_DEVICE int window_box_first_width(const PhaseProblem& p, const TapRowsPlan& plan) {
  return -(p.halo_low[2] + plan.box_lead);
}

// The compact position in its line of the tile's window's first row, the same for
// every depth and height shift (they move it by whole lines).
CT3D_HOST_DEVICE int window_line_offset(const ShiftedWindowPlan& window, int column0) {
  return static_cast<int>((window.origin + column0 + window.min_width_shift) % window.line_pitch);
}

// Floats into a channel's box of window row `row`.
CT3D_HOST_DEVICE int box_row_offset(const TapRowsPlan& plan, int line_offset, int row) {
  const int position = line_offset + row;
  const int line = position / plan.window.line_pitch;
  return line * plan.box_width + plan.box_lead + (position - line * plan.window.line_pitch);
}

}  // namespace ct3d::cuda
