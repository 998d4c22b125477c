// The (depth tap, height tap) pairs of a tap-rows or tap-columns tile (tile_taps.h for
// the shifted-window GEMM's): its line, flat or window tiles' stored outputs. Host and
// device code, so that the unit tests can check every stored output's reads.
#pragma once

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/tile_taps.h"
#include "ops/cuda/engine/window/window_box_geometry.h"

namespace ct3d::cuda {

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
