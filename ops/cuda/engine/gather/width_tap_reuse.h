// Width-tap reuse for the wgmma mainloop (wgmma_reuse_kernel.cuh): a block's rows
// are runs of consecutive phase positions along width ("segments", one per phase
// line they touch), and the width taps of a row read the staged source at
// consecutive (or evenly spaced) width positions. So one shared-memory tile per
// (depth tap, height tap, channel chunk) holds each segment's staged width range
// once, extended by the taps' span, and every width tap reads it at a shifted row:
// the rows are copied from L2 once instead of once per width tap.
//
// Tile rows of a block: segment 0 (the block's first, possibly partial line) first,
// then one segment per further line. A segment of `len` rows takes
// (len - 1) * pitch + span + 1 tile rows: pitch = the width position step of a
// phase row (1 in the forward, the stride in the input gradient), span = the
// distance between the taps' lowest and highest shift.
#pragma once

#include <cstdint>

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE

namespace ct3d::cuda {

struct WidthReuseSegments {
  int line;       // rows per phase line (the width residue 0's positions)
  int first_len;  // rows of the block's first segment
  int pitch, span;

  CT3D_HOST_DEVICE int extent(int len) const { return (len - 1) * pitch + span + 1; }

  // Tile row of block row `local` at the lowest shift.
  CT3D_HOST_DEVICE int tile_row(int local) const {
    if (local < first_len) return local * pitch;
    const int rest = local - first_len;
    const int segment = rest / line;
    return extent(first_len) + segment * extent(line) + (rest - segment * line) * pitch;
  }

  // Which block row starts the segment that tile row `row` belongs to, and the
  // row's width offset (in staged positions) from that row's lowest shift.
  struct Source {
    int first_local, offset;
  };
  CT3D_HOST_DEVICE Source source(int row) const {
    const int first = extent(first_len);
    if (row < first) return {0, row};
    const int segment = (row - first) / extent(line);
    return {first_len + segment * line, row - first - segment * extent(line)};
  }
};

// Per width residue: its taps' lowest shift and span (phase_plan.h's progression
// first_shift + t * shift_step, t < taps).
CT3D_HOST_DEVICE int lowest_shift(int first_shift, int shift_step, int taps) {
  return shift_step < 0 ? first_shift + (taps - 1) * shift_step : first_shift;
}
CT3D_HOST_DEVICE int shift_span(int shift_step, int taps) {
  return (taps - 1) * (shift_step < 0 ? -shift_step : shift_step);
}

// The launch's choice (host): tile rows and width taps per pipeline stage.
struct WidthReusePlan {
  int tile_rows = 0;       // of every stage: the most any block needs
  int taps_per_stage = 0;  // width taps of one stage (a tap group)
  int slots = 0;           // pipeline depth
  int stage_bytes = 0;     // input tile + the tap group's packed weights
};

struct PhaseProblem;

// Whether width-tap reuse applies to this launch, and its plan: more than one width
// tap in some residue, at least 3 stages in the shared-memory budget, 32-bit
// in-block offsets, and tiles at most max_tile_rows (the producer's row slots).
// Returns a plan with taps_per_stage 0 where it does not apply.
WidthReusePlan plan_width_reuse(const PhaseProblem& p, int block_positions, int channels,
                                int max_tile_rows);

}  // namespace ct3d::cuda
