#include "ops/cuda/engine/window/tap_rows_plan.h"

#include <algorithm>
#include <climits>
#include <iterator>

#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {
namespace {

// Dynamic shared memory for the slots and the epilogue's partial sums (the block's
// 227 KB less the barriers).
constexpr int kSharedBudgetBytes = 224 * 1024;
constexpr int kMinSlots = 3;
constexpr int kMaxSlots = 8;
// A k-step's weights: 64 rows per half x 32 bytes of K (8 float32 channels, hi and
// lo; or 16 float16 or bfloat16 channels).
constexpr int kRowBytes = 32;
// Float32's chain is flushed every 16 k-steps (128 k); the half forms' only at the
// tile's end (kHalfChainStages).
constexpr int kFlushSteps = 16;
// Per-block cost of a column block in columns: the pipeline's fill and the epilogue.
constexpr int kBlockOverheadColumns = 32;
// TMA's largest box side, and how many times the window's rows a channel's box may
// load (its lines start and end anywhere in a line; beyond this the staged planes).
constexpr int kMaxBoxSide = 256;
constexpr int kMaxBoxOverfetch = 3;

// A box plan's stages: `boxes` boxes of box_lines x box_width floats a channel, a
// stage's channels and weights, as many slots as fit beside the epilogue's partial
// sums; false below kMinSlots (the plan unchanged).
bool fit_box_stages(int width, int lines, int lead, int boxes, TapRowsPlan& plan) {
  ShiftedWindowPlan& window = plan.window;
  const int m_tiles = tap_columns_m_tiles(plan.rows_used);
  const int stage_steps = 2 / m_tiles;
  const int step_weight_bytes = plan.rows_used * kRowBytes * 2;
  // A step's 8 channels; TMA lands a box at a 128-byte boundary.
  const int window_bytes =
      static_cast<int>(round_up(boxes * stage_steps * 8 * width * lines * 4, 128));
  const int stage_bytes = window_bytes + stage_steps * step_weight_bytes;
  const int epilogue_bytes = plan.rows_used * plan.epilogue_pitch * 4;
  const int slots = std::min(kMaxSlots, (kSharedBudgetBytes - epilogue_bytes) / stage_bytes);
  if (slots < kMinSlots) return false;
  plan.box_width = width;
  plan.box_lines = lines;
  plan.box_lead = lead;
  plan.stage_boxes = boxes;
  plan.window_bytes = window_bytes;
  window.stage_bytes = stage_bytes;
  window.slots = slots;
  plan.epilogue_offset = slots * stage_bytes;
  // And up to 128 bytes to align the pool for TMA (wgmma_tap_rows_kernel.cuh).
  plan.shared_bytes = plan.epilogue_offset + epilogue_bytes + 128;
  return true;
}

}  // namespace

TapRowsPlan plan_tap_rows(const PhaseProblem& p, bool half_operands, bool positions_on_m) {
  TapRowsPlan plan;
  ShiftedWindowPlan& window = plan.window;
  if (!plan_compact_grid(p, window)) return plan;
  const ResidueParams& rw = p.dim[2].residue[0];
  plan.channel_pitch =
      (p.cout_per_group + kTapRowsChannelStep - 1) / kTapRowsChannelStep * kTapRowsChannelStep;
  plan.rows_used = rw.taps * plan.channel_pitch;
  if (rw.taps < 2 || plan.rows_used > (positions_on_m ? 256 : 128)) return plan;
  if (positions_on_m &&
      (half_operands || std::count(std::begin(kTapColumnsRowChoices),
                                   std::end(kTapColumnsRowChoices), plan.rows_used) == 0)) {
    return plan;
  }
  plan.positions_on_m = positions_on_m;
  plan.halves = plan.rows_used > 64 && !positions_on_m ? 2 : 1;
  const int span = shift_span(rw.shift_step, rw.taps);
  const int m_tiles = tap_columns_m_tiles(plan.rows_used);
  const int stage_steps =
      positions_on_m ? 2 / m_tiles : tap_rows_stage_steps(plan.halves, half_operands);
  // The half forms' crossing step walk (16-channel k-steps) walks every tap: no tile
  // leaves one out.
  if (half_operands && window_steps_cross_pairs(p.cin_padded / 16, stage_steps)) {
    window.skip_halo_taps = false;
  }
  const int planes_per_step = half_operands || plan.positions_on_m ? 2 : 4;
  const int step_weight_bytes =
      (positions_on_m ? plan.rows_used : plan.halves * 64) * kRowBytes * (half_operands ? 1 : 2);
  // The fewest columns computed per plane, counting each block's fixed cost, among the
  // choices whose pipeline keeps kMinSlots slots beside the epilogue's partial sums.
  int64_t best_cost = INT64_MAX;
  for (const int columns : kTapRowsColumnChoices) {
    // The tap-columns form has one block shape: 2 warpgroups x m_tiles x 64 positions.
    if (positions_on_m && columns != kTapRowsColumnChoices[0]) continue;
    const int block = positions_on_m ? 2 * 64 * m_tiles : 2 * columns / plan.halves;
    const int outputs = block - span;
    // A pitch of 8 mod 32 floats: the accumulators' float2 stores are free of bank
    // conflicts (each half-warp's 4 rows x 4 column pairs cover the 32 banks); the
    // tap-columns form's scalar stores want 4 mod 32 (write_tap_column_partials).
    const int epilogue_pitch = block + (positions_on_m ? 4 : 8);
    const int epilogue_bytes = plan.rows_used * epilogue_pitch * 4;
    const int stage_bytes = stage_steps * (planes_per_step * block * 16 + step_weight_bytes);
    const int slots = std::min(kMaxSlots, (kSharedBudgetBytes - epilogue_bytes) / stage_bytes);
    if (outputs < block / 2 || slots < kMinSlots) continue;
    const int64_t blocks = (window.plane_columns + outputs - 1) / outputs;
    const int64_t cost = blocks * (block + kBlockOverheadColumns);
    if (cost > best_cost) continue;
    best_cost = cost;
    window.columns = columns;
    window.block_columns = block;
    window.column_step = outputs;
    window.column_blocks = static_cast<int>(blocks);
    window.window_rows = block;
    window.window_pitch = block;
    window.stage_bytes = stage_bytes;
    window.slots = slots;
    plan.window_bytes = stage_steps * planes_per_step * block * 16;
    plan.epilogue_pitch = epilogue_pitch;
    plan.epilogue_offset = slots * stage_bytes;
    plan.shared_bytes = plan.epilogue_offset + epilogue_bytes;
  }
  window.flush_stages = half_operands ? kHalfChainStages : std::max(1, kFlushSteps / stage_steps);
  if (window.columns > 0 && !plan_plane_rows(p, window)) window.columns = 0;
  return plan;
}

TapRowsPlan plan_tap_columns_if_taken(const PhaseProblem& p, bool input_gradient,
                                      bool source_boxes) {
  const FormChoice choice = form_choice(FormSwitch::kTapColumns);
  if (choice == FormChoice::kNever) return TapRowsPlan{};
  TapRowsPlan plan = plan_tap_rows(p, false, true);
  const FormChoice boxes = form_choice(FormSwitch::kTapColumnsBoxes);
  if (source_boxes && boxes != FormChoice::kNever &&
      (boxes == FormChoice::kAlways || source_tiles_may_pay(plan, input_gradient))) {
    // Line tiles first (where the tests force them: at any width they fit).
    const FormChoice lines = form_choice(FormSwitch::kTapColumnsLines);
    TapRowsPlan lined = plan;
    if (lines != FormChoice::kNever && plan_line_boxes(p, lined) &&
        (lines == FormChoice::kAlways || line_tiles_pay(p, lined))) {
      return lined;
    }
    // Then flat tiles (where the tests force them: wherever they fit).
    const FormChoice flat_switch = form_choice(FormSwitch::kTapColumnsFlat);
    TapRowsPlan flat = plan;
    if (flat_switch != FormChoice::kNever && plan_flat_boxes(p, flat) &&
        (flat_switch == FormChoice::kAlways || flat_tiles_pay(p, flat, input_gradient))) {
      return flat;
    }
    TapRowsPlan boxed = plan;
    if (plan_window_boxes(p, boxed) &&
        (boxes == FormChoice::kAlways || window_boxes_pay(p, boxed))) {
      plan = boxed;
    }
  }
  return plan;
}

bool source_tiles_may_pay(const TapRowsPlan& plan, bool input_gradient) {
  // One process (KERNEL_LOG "input gradients of 48 rows"): N-16-8's input gradient (48 rows) 0.658
  // ms on the staged planes against 0.965 on flat tiles (1.47 on window boxes, "window read by
  // TMA"); N-48-24's (144 rows) 0.927 against 0.848, and 48-row forwards gain from the boxes
  // (KERNEL_LOG "why the box kernel is slow").
  return !(input_gradient && plan.rows_used <= 48);
}

bool flat_tiles_pay(const PhaseProblem& p, const TapRowsPlan& flat, bool input_gradient) {
  // One process, with the compile-time offsets (KERNEL_LOG "fragments at compile-time offsets"),
  // against the plan before them (KERNEL_LOG "flat tiles"): input gradients 1.03-1.57x (L1-68 11.92
  // -> 11.61 ms, N-16-8 1.48 -> 0.93, N-48-24, N-32-16-k3); the forward of L1-70 (its tiles 1.03x
  // the plane's rows) 5.64 -> 5.22; but forwards whose last tile of a plane is mostly empty
  // (1.11-1.14x: N-48-24, N-32-16-k3, N-64-16-k4) 0.94-0.96x.
  const int64_t rows = int64_t{p.dim[1].max_positions} * p.source_extent[2];
  const int64_t computed = int64_t{flat.window.column_blocks} * flat.window.block_columns;
  return input_gradient || 16 * computed <= 17 * rows;
}

bool window_boxes_pay(const PhaseProblem& p, const TapRowsPlan& boxed) {
  // One process, against the staged planes (KERNEL_LOG "window read by TMA"): 3 width
  // taps 1.02-1.19x (L1-61 2.81 -> 2.68 ms, N-48-24 0.81 -> 0.69, N-64-32-k3 0.41 -> 0.35); 5 taps
  // 0.96-1.01x (L1-68, N-32-16-k5); 7 taps 0.75x (L1-58 0.83 -> 1.11 ms). Against the staged kernel
  // of "unsplit quad planes" (KERNEL_LOG "why the box kernel is slow", one call): L1-61
  // (boxes 1.57x the window's rows) 1.05-1.08x, N-48-24 and N-32-16-k3 (1.41x) 1.10-1.16x,
  // N-64-32-k3 (1.38x) 1.13-1.21x; L1-70 (1.94x) 0.97-0.99x.
  const int box_floats = boxed.box_width * boxed.box_lines;
  return p.dim[2].residue[0].taps == 3 && 4 * box_floats <= 7 * boxed.window.window_rows;
}

bool line_tiles_pay(const PhaseProblem& p, const TapRowsPlan& lined) {
  // One process, against the default before them (KERNEL_LOG "the window as whole source lines",
  // "line tiles with two m-tiles"), forward: L1-58 (112 rows) 0.830 -> 0.635 ms, L1-61 (144) 2.74
  // -> 2.61, N-32-16-k5 (80) 0.514 -> 0.432, N-64-32-k3 (96) 0.388 -> 0.333; but N-48-24 (72) 0.751
  // -> 0.808 and N-32-16-k3 (48) 0.513 -> 0.550. Input gradients: 96 to 160 rows 1.08-1.22x. At 68
  // of a block's 128 rows (L1-68's input gradient, one 68-wide line) 12.35 -> 20.47 ms.
  const int rows = lined.tile_lines * p.source_extent[2];
  return lined.rows_used >= 80 && 8 * rows >= 7 * lined.window.block_columns;
}

bool plan_window_boxes(const PhaseProblem& p, TapRowsPlan& plan) {
  ShiftedWindowPlan& window = plan.window;
  if (window.columns == 0 || !plan.positions_on_m || p.source_extent[2] % 4 != 0) return false;
  // A box line starts at a 16-byte boundary of the source (TMA's rule for the innermost
  // coordinate) at or before the halo's first position, holds a compact line (line_pitch
  // rows) and is padded to an odd number of 4-float groups; the lines cover a window
  // starting anywhere in a line.
  const int lead = (4 - p.halo_low[2] % 4) % 4;
  int width = static_cast<int>(round_up(lead + window.line_pitch, 4));
  if (width / 4 % 2 == 0) width += 4;
  int lines = (window.line_pitch - 1 + window.window_rows - 1) / window.line_pitch + 1;
  if (lines % 2 == 0) ++lines;
  if (width > kMaxBoxSide || lines > kMaxBoxSide ||
      width * lines > kMaxBoxOverfetch * window.window_rows) {
    return false;
  }
  return fit_box_stages(width, lines, lead, 1, plan);
}

bool plan_line_boxes(const PhaseProblem& p, TapRowsPlan& plan) {
  ShiftedWindowPlan& window = plan.window;
  if (window.columns == 0 || !plan.positions_on_m) return false;
  const int block = window.block_columns;  // 2 warpgroups x 64 positions x m-tiles
  const int source_width = p.source_extent[2];
  const int64_t plane = int64_t{p.source_extent[1]} * source_width;
  // A box starts at a line's position 0: a 16-byte boundary (TMA's rule for the
  // innermost coordinate) only where the width is a multiple of 4 floats.
  if (source_width > block || source_width % 4 != 0 || plane > INT_MAX / 2) return false;
  const int lines = block / source_width;
  if (!fit_box_stages(kFlatBoxWidth, 1, 0, block / kFlatBoxRows, plan)) return false;
  plan.tile_lines = lines;
  window.column_step = lines;
  window.column_blocks = (p.dim[1].max_positions + lines - 1) / lines;
  return true;
}

bool plan_flat_boxes(const PhaseProblem& p, TapRowsPlan& plan) {
  ShiftedWindowPlan& window = plan.window;
  if (window.columns == 0 || !plan.positions_on_m) return false;
  const int block = window.block_columns;
  const int source_width = p.source_extent[2];
  const int64_t flat_rows = int64_t{p.dim[1].max_positions} * source_width;
  const int64_t plane = int64_t{p.source_extent[1]} * source_width;
  if (source_width % 4 != 0 || std::max(flat_rows, plane) > INT_MAX / 2) return false;
  const ResidueParams& rw = p.dim[2].residue[0];
  const int span = shift_span(rw.shift_step, rw.taps);
  // A multiple of 4: every tile's box starts at a 16-byte boundary.
  const int step = (block - span) / 4 * 4;
  if (step < block / 2) return false;
  if (!fit_box_stages(kFlatBoxWidth, 1, 0, block / kFlatBoxRows, plan)) return false;
  plan.flat_step = step;
  window.column_step = step;
  // Tile 0 stores the flat rows' outputs [0, step + span), tile t [t step + span, ...).
  window.column_blocks =
      static_cast<int>(std::max<int64_t>(1, (flat_rows - span + step - 1) / step));
  return true;
}

bool tap_rows_pays(bool input_gradient) {
  // Every stride-1 forward it applies to measured at least as fast as the other
  // mainloops (docs/KERNEL_LOG.md, "the tap-rows form of the shifted window": 1.00-1.64x,
  // L1-58 1.55x), even with 24 of 64 M rows used; the input gradients it applies to measured
  // 0.97-1.03x.
  return !input_gradient;
}

}  // namespace ct3d::cuda
