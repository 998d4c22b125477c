// Where the tap-columns form's window boxes (window_boxes.cuh) start in the source and
// where a window row lands in a box: host and device code, so that the unit tests can
// check every stored output's reads against the compact grid's.
#pragma once

#include <cstdint>

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"

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

// Line and flat tiles: the source depth and the flat plane position (line x width +
// column) of the box for depth tap td and height tap th of the tile whose first flat row
// (target line x source width + source column) is `row0` at target depth `depth`: that
// row's source position for the tap.
CT3D_HOST_DEVICE BoxStart line_box_start(const PhaseProblem& p, int depth, int row0, int td,
                                         int th) {
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  return {depth + rd.first_shift + td * rd.shift_step,
          row0 + (rh.first_shift + th * rh.shift_step) * p.source_extent[2]};
}

// Whether the plan's rows are flat rows in order (line or flat tiles), a box per 128.
CT3D_HOST_DEVICE bool flat_rows(const TapRowsPlan& plan) {
  return plan.tile_lines > 0 || plan.flat_step > 0;
}

// The first flat row of the tile whose column0 is `column0` (line tiles count lines).
CT3D_HOST_DEVICE int flat_tile_row0(const PhaseProblem& p, const TapRowsPlan& plan, int column0) {
  return plan.tile_lines > 0 ? column0 * p.source_extent[2] : column0;
}

// Flat tiles: the flat row that owns output (line, column): that of the last source
// column its width taps read, clamped into the line. An output's reads lie within the
// span before its owner, in its line.
CT3D_HOST_DEVICE int flat_owner(const PhaseProblem& p, int line, int column) {
  const ResidueParams& rw = p.dim[2].residue[0];
  const int last_shift = rw.first_shift + (rw.shift_step > 0 ? (rw.taps - 1) * rw.shift_step : 0);
  const int width = p.source_extent[2];
  const int x = column + last_shift;
  return line * width + (x < 0 ? 0 : x >= width ? width - 1 : x);
}

// The flat rows [begin, end) whose outputs the flat tile at `row0` stores: tile 0 from 0,
// every tile flat_step of them, starting the width taps' span past its first row, so
// that all of an output's reads lie in the tile's rows.
struct FlatRange {
  int begin, end;
};
CT3D_HOST_DEVICE FlatRange flat_tile_owned(const PhaseProblem& p, const TapRowsPlan& plan,
                                           int row0) {
  const ResidueParams& rw = p.dim[2].residue[0];
  const int span = shift_span(rw.shift_step, rw.taps);
  const int rows = p.dim[1].max_positions * p.source_extent[2];
  const int end = row0 + plan.flat_step + span;
  return {row0 == 0 ? 0 : row0 + span, end < rows ? end : rows};
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
