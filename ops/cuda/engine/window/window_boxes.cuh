// The tap-columns form's window loaded by TMA straight from the source (KERNEL_LOG
// "window read by TMA"): no staging pass. The compact grid (shifted_window_plan.h) is the source at
// its halo offsets with shared zero gaps; a window's rows from row R0 on are lines
// of one depth plane, so per stage one box of the 5-D source (width, height, depth,
// channel, sample) holds them: box_lines lines from R0's line, each box_width floats
// from a 16-byte boundary at or before compact position 0 of the line (TMA's rule for
// the innermost coordinate), and the stage's channels.
// Outside the source TMA reads zeros, which are the compact grid's halo and gaps. Rows
// past the plane's lines read zeros where the compact grid has the next plane: only
// columns that are not stored read them (the compact grid's own gaps end every read
// of a stored output inside its plane).
//
// Line tiles (plan.tile_lines > 0, KERNEL_LOG "the window as whole source lines"): a tile is whole
// target lines, its rows the source positions of the lines its taps read, in order; per (depth tap,
// height tap) one run of the source's plane seen flat, starting at the first line's
// position 0: no halo columns are computed, and the run is the rows (and 4 floats), a
// box per 128 rows (plan.stage_boxes: with two m-tiles one per compute warpgroup).
// Lines above or below the plane are flat positions outside it: TMA's zeros.
// Flat tiles (plan.flat_step > 0, "flat tiles") read the same boxes from a tile's first flat row.
//
// In shared memory a stage's window is [channel][line][box_width]. A lane's A values
// (rows g and g + 8, k t and t + 4) are channels 2t and 2t + 1 of the k-step (the
// weights are packed in that K order), so that with a channel's box an odd multiple of
// 4 floats (tap_rows_plan.h) the four t of a load lie 8 banks apart.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_stage.cuh"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/window_box_geometry.h"

namespace ct3d::cuda {

// Where a lane finds its A values in a stage's boxes (floats): value (row r, k) of
// k-step s at s * step + k_offset[k >= 4] + row_offset[m-tile][r is g + 8].
template <int kMTiles>
struct FragmentOffsets {
  int step;
  int k_offset[2];
  int row_offset[kMTiles][2];
};

// The window boxes' (plan.box_width > 0, not flat_rows: those are load_flat_fragments'):
// row r of the window is compact position line_offset + r of the box's lines
// (window_box_geometry.h).
template <int kMTiles>
__device__ __forceinline__ FragmentOffsets<kMTiles> box_fragment_offsets(const TapRowsPlan& plan,
                                                                         int line_offset, int row0,
                                                                         int t) {
  const int channel = plan.box_width * plan.box_lines;
  FragmentOffsets<kMTiles> f;
  f.step = 8 * channel;
  f.k_offset[0] = 2 * t * channel;
  f.k_offset[1] = (2 * t + 1) * channel;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      f.row_offset[mt][i] = box_row_offset(plan, line_offset, row0 + 64 * mt + 8 * i);
    }
  }
  return f;
}

// The producer's walk over one tile's taps (as produce_window_runs,
// shifted_window_stage.cuh): per stage one box of the stage's 8 * kStageSteps channels,
// then copy_weights(stage address past the window, the stage's index in the walk over
// all taps, depth tap, height tap, first k-step, full barrier). `window_map`: the
// source's tensor map (window_tensor_map.h).
template <int kStageSteps, class CopyWeights>
__device__ __forceinline__ void produce_window_boxes(const PhaseProblem& p, const TapRowsPlan& plan,
                                                     const WindowTile& tile, const TileTaps& taps,
                                                     const void* window_map, uint32_t shared_base,
                                                     uint32_t full0, uint32_t empty0,
                                                     uint32_t step_weight_bytes, RingPosition& ring,
                                                     CopyWeights&& copy_weights) {
  const ShiftedWindowPlan& window = plan.window;
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  const int k_steps = p.cin_padded / 8;
  const int stages = taps.depth.count * taps.height.count * k_steps / kStageSteps;
  const int64_t first_row =
      window.origin + tile.qd * window.plane_pitch + tile.column0 + window.min_width_shift;
  const uint32_t expected =
      kStageSteps *
      (8u * plan.box_width * plan.box_lines * 4 * plan.stage_boxes + step_weight_bytes);
  const uint32_t box_bytes = kStageSteps * 8u * plan.box_width * 4;  // a line or flat tile's box
  const int channel0 = static_cast<int>(tile.group) * p.cin_per_group;
  const int sample = static_cast<int>(tile.n);
  const int first_width = window_box_first_width(p, plan);
  WindowStepCursor at(taps);
  BoxStart box{};
#pragma unroll 1
  for (int stage_index = 0; stage_index < stages; ++stage_index, ring.advance(window.slots)) {
    if (at.k_step == 0) {
      // A new (depth tap, height tap): its window's box.
      if (flat_rows(plan)) {
        box = line_box_start(p, tile.qd, flat_tile_row0(p, plan, tile.column0), at.td, at.th);
      } else {
        box = window_box_start(
            p, window,
            static_cast<int>(first_row +
                             (rd.first_shift + at.td * rd.shift_step) * window.plane_pitch +
                             (rh.first_shift + at.th * rh.shift_step) * window.line_pitch));
      }
    }
    mbarrier_wait(empty0 + 8 * ring.slot, ring.phase ^ 1);
    const uint32_t stage = shared_base + ring.slot * window.stage_bytes;
    const uint32_t full = full0 + 8 * ring.slot;
    mbarrier_arrive_expect_bytes(full, expected);
    // Line and flat tiles read the plane flat (a map of width x height positions, one
    // line): box.line is then its first position.
    if (flat_rows(plan)) {
      for (int b = 0; b < plan.stage_boxes; ++b) {
        tensor_copy_5d(stage + b * box_bytes, window_map, box.line + kFlatBoxRows * b, 0, box.depth,
                       channel0 + 8 * at.k_step, sample, full);
      }
    } else {
      tensor_copy_5d(stage, window_map, first_width, box.line, box.depth, channel0 + 8 * at.k_step,
                     sample, full);
    }
    copy_weights(stage + plan.window_bytes, at.all_taps_stage<kStageSteps>(rh.taps, k_steps), at.td,
                 at.th, at.k_step, full);
    at.advance(kStageSteps, k_steps, taps);
  }
}

}  // namespace ct3d::cuda
