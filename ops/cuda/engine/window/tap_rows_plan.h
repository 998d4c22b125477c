// The tap-rows form of the shifted-window GEMM (wgmma_tap_rows_kernel.cuh), for
// stride-1 problems whose groups have too few target channels to fill wgmma's 64
// M rows (shifted_window_plan.h needs at least 48). Its M rows are (width tap, target
// channel) pairs, so the width taps fill M instead of each being a shifted read of the
// window:
//   partial[tw][c][column] = sum over depth and height taps of W_(td,th,tw)[c][:] *
//                            staged[:][column + shift(td, th)],
//   out[c][column] = sum over tw of partial[tw][c][column + width shift(tw)],
// the second sum in the epilogue, through shared memory. Every wgmma reads the
// window as it lies; a block's window of block_columns columns yields block_columns
// minus the width span outputs (column_step), so neighbouring blocks' windows overlap
// by the span.
#pragma once

#include "ops/cuda/engine/window/shifted_window_plan.h"

namespace ct3d::cuda {

// K-steps per pipeline stage. Float32 (8-channel k-steps): one per 64-row half, so
// that a stage holds six wgmmas either way (docs/KERNEL_LOG.md, "the tap-rows form of the shifted
// window": with two halves, a whole chunk per stage took 58 from 1.03 to 0.94 ms; with one, the
// blocks' twice wider windows left 3 slots and lost 7-40 %). Float16 and bfloat16 (16-channel
// k-steps, one wgmma each): twice as many, the same bytes per stage.
constexpr int tap_rows_stage_steps(int halves, bool half_operands) {
  return half_operands ? 2 * halves : halves;
}
// A width tap's M rows: its target channels rounded up to wgmma's 8-row core matrices.
constexpr int kTapRowsChannelStep = 8;
// wgmma N of one compute warpgroup, the shapes the kernel is built for.
constexpr int kTapRowsColumnChoices[] = {128, 160};
// The tap-columns form (float32): its rows on wgmma's N, so every row counts. Its
// default mainloop (KERNEL_LOG "unsplit quad planes") takes the window unsplit into registers (A)
// and the weights from shared memory (B); the N it is built for: 3 width taps x 16 to 48 channels,
// 4 x 16, 5 x 16 or 32, 7 x 16. Two m-tiles of 64 positions per compute warpgroup up to 80 rows,
// one above (accumulators and totals: N x m-tiles registers, beside two sets of window fragments,
// within the compute warpgroups' 224).
constexpr int kTapColumnsRowChoices[] = {48, 64, 72, 80, 96, 112, 144, 160};
// (Its first form, both operands from shared memory, KERNEL_LOG "(width tap, channel) rows on
// wgmma's N", measured slower than this one at every row count it was built for, and went.)
constexpr int tap_columns_m_tiles(int rows) { return rows <= 80 ? 2 : 1; }

// Line and flat tiles' boxes: a channel's 128 rows and 4 floats, an odd number of 4-float
// groups (window_boxes.cuh), one box per 128 rows; past the tile's rows a box reads the
// next line or TMA's zeros. The device code reads them at compile-time offsets (KERNEL_LOG
// "fragments at compile-time offsets").
constexpr int kFlatBoxRows = 128;
constexpr int kFlatBoxWidth = kFlatBoxRows + 4;
static_assert(kFlatBoxWidth / 4 % 2 == 1, "a box's 4-float groups odd");

struct TapRowsPlan {
  // The window, grid and tile fields as the shifted-window GEMM's: block_columns is
  // the window a block reads, column_step the outputs it stores, channel_blocks 1.
  // window.columns 0: the plan does not apply.
  ShiftedWindowPlan window;
  int channel_pitch = 0;  // M rows per width tap: target channels rounded up to 8
  int rows_used = 0;      // width taps x channel_pitch
  // M rows in 64-row halves: 1, each compute warpgroup half the block's columns; 2,
  // both the same columns, warpgroup h the rows of half h.
  int halves = 0;
  // The tap-columns form: the rows on N, tap_columns_m_tiles(rows_used) x 64 positions
  // on M per compute warpgroup; halves is then 1. Its window is staged unsplit (or read by
  // TMA from the source) and split in the compute warpgroups' registers (RawTf32Operands):
  // 2 planes per k-step.
  bool positions_on_m = false;
  // The tap-columns form's window loaded by TMA straight from the source, no staging
  // pass (window_boxes.cuh; KERNEL_LOG "window read by TMA"): per stage one box of box_lines lines
  // x box_width floats x the stage's channels, a line's compact position 0 box_lead floats in (TMA
  // starts a box line at a 16-byte boundary of the source). 0: the window comes from staged planes.
  int box_width = 0, box_lines = 0, box_lead = 0;
  // Line tiles (KERNEL_LOG "the window as whole source lines"; 0: none): a block's positions are
  // tile_lines whole target lines x the source's width, its rows source positions of one plane in
  // order (no halo columns computed), and a stage's box one run of the plane seen flat, the halos
  // TMA's zeros; box_lines is 1. window.column_step is tile_lines, and a tile's column0 its first
  // target line.
  int tile_lines = 0;
  // Flat tiles (KERNEL_LOG "flat tiles"; 0: none): where whole lines do not fill a
  // block, its rows are flat_step (a multiple of 4) apart in the plane seen flat
  // (target line x source width + source column), and neighbouring tiles overlap by the
  // width taps' span; a tile's column0 is its first flat row, and it stores the outputs
  // window_box_geometry.h's flat_tile_owned gives it. Same boxes as line tiles.
  int flat_step = 0;
  // Line tiles' boxes per stage: one per 128 rows (TMA's boxes are at most 256 floats a
  // side), so with two m-tiles one per compute warpgroup, 8 * box_width floats apart.
  int stage_boxes = 1;
  int window_bytes = 0;     // a stage's window: before its weights
  int epilogue_pitch = 0;   // floats per row of the epilogue's partial sums
  int epilogue_offset = 0;  // bytes into shared memory: after the pipeline's slots
  int shared_bytes = 0;
};

// Whether the tap-rows form applies (the shifted-window GEMM's grid checks, 2 to 16
// width taps, at most 128 rows of (width tap, channel), 160 in the tap-columns form),
// and its plan; half_operands:
// float16 or bfloat16 operands (window_operands.cuh). positions_on_m (float32 only):
// the tap-columns form's plan, which applies where the rows are one of
// kTapColumnsRowChoices.
TapRowsPlan plan_tap_rows(const PhaseProblem& p, bool half_operands = false,
                          bool positions_on_m = false);

// Where the tap-rows form is chosen by default (docs/KERNEL_LOG.md, "the tap-rows form of the
// shifted window"): the forward.
bool tap_rows_pays(bool input_gradient);
// Whether the float32 launch takes the tap-columns form (wherever its plan applies,
// unless the tests turn it off: forced_form.h): its plan, else one with window.columns 0.
// On the window unsplit into registers it measured faster than the next mainloop at
// every row count it is built for (KERNEL_LOG "unsplit quad planes": 1.02x at 64 rows to
// 1.43x at 72), and on the input gradient than its default mainloop (1.05x at 96 rows to
// 1.45x at 160: L1-61's, 144 rows, 3.42 -> 2.57 ms; L1-68's, 160, 16.2 -> 12.2 ms). The
// shifted-window GEMM leaves it the layers it takes. source_boxes: the source may be read by TMA
// (window_tensor_map.h); then the plan takes, where they apply and pay, line tiles, else flat
// tiles, else plan_window_boxes' boxes (none where source_tiles_may_pay says no).
TapRowsPlan plan_tap_columns_if_taken(const PhaseProblem& p, bool input_gradient,
                                      bool source_boxes = false);

// The boxes of the window (box_width, box_lines) for a register-A tap-columns plan, and
// its stages and slots with them; false (the plan unchanged) where they do not apply:
// the source's width a multiple of 4 floats (TMA's 16-byte strides), a stage's
// channels within one group, boxes of at most 256 floats a side, at most 3x the
// window's rows, and kMinSlots stages in shared memory. A channel's box is box_lines
// x box_width floats with box_width / 4 and box_lines odd: then the fragment loads'
// channels 2t and 2t + 1 (t = 0..3) lie 8 banks apart (window_boxes.cuh).
bool plan_window_boxes(const PhaseProblem& p, TapRowsPlan& plan);
// Line tiles (tile_lines) for a register-A tap-columns plan, and its stages
// and slots with them; false (the plan unchanged) where they do not apply: the source's
// width at most a block's positions (128 or 256) and a multiple of 4 floats.
bool plan_line_boxes(const PhaseProblem& p, TapRowsPlan& plan);
// Where line tiles (a plan_line_boxes plan) measured faster than the plan before them
// (docs/KERNEL_LOG.md, "the window as whole source lines" and "line tiles with two m-tiles"): at
// least 80 rows, and whole lines filling at least 7/8 of the block's positions.
bool line_tiles_pay(const PhaseProblem& p, const TapRowsPlan& lined);
// Flat tiles (flat_step) for a register-A tap-columns plan, and its stages and slots;
// false (the plan unchanged) where they do not apply: the source's width a multiple of
// 4 floats, and a block at least twice the width taps' span.
bool plan_flat_boxes(const PhaseProblem& p, TapRowsPlan& plan);
// Where flat tiles (a plan_flat_boxes plan, where line tiles do not pay) measured faster
// than the plan before them (docs/KERNEL_LOG.md, "flat tiles"): every input gradient, and the
// forwards whose tiles compute at most 17/16 of the plane's rows.
bool flat_tiles_pay(const PhaseProblem& p, const TapRowsPlan& flat, bool input_gradient);
// Whether any of the three TMA-read forms may pay for a plan (checked first): not for
// input gradients of at most 48 rows, where the staged planes measured faster than flat
// tiles and window boxes (docs/KERNEL_LOG.md, "input gradients of 48 rows").
bool source_tiles_may_pay(const TapRowsPlan& plan, bool input_gradient);
// Where the boxes (a plan_window_boxes plan) measured faster than the staged planes
// (docs/KERNEL_LOG.md, "window read by TMA" and "why the box kernel is slow"): 3 width taps, and a
// channel's box at most 1.75x the window's rows.
bool window_boxes_pay(const PhaseProblem& p, const TapRowsPlan& boxed);

}  // namespace ct3d::cuda
