#include "ops/cuda/engine/window/shifted_window_plan.h"

#include <algorithm>
#include <climits>

#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/halo_taps.h"

namespace ct3d::cuda {
namespace {

constexpr int kPipelineBudgetBytes = 200 * 1024;
constexpr int kParkedBudgetBytes = 220 * 1024;
constexpr int kMinSlots = 3;
constexpr int kMaxSlots = 8;
// A stage is one k-step of every width tap; float32's chain of wgmma accumulators is
// flushed every 16 k-steps of a tap (128 k: 3xTF32's 1e-5 bar against the tensor
// core's truncating sums). The half forms flush only at the tile's end
// (half_chain_stages in tap_rows_plan.h says why).
constexpr int kMaxWidthTaps = 16;
// A k-step's weights per tap: 64 rows x 32 bytes of K (float32: hi and lo of each).
constexpr int kTapRowBytes = kWindowBlockChannels * 32;
// Per-block cost of a column block in columns: the pipeline's fill and the epilogue.
constexpr int kBlockOverheadColumns = 32;

int highest_shift(const ResidueParams& r) {
  return r.shift_step < 0 ? r.first_shift : r.first_shift + (r.taps - 1) * r.shift_step;
}

}  // namespace

bool plan_compact_grid(const PhaseProblem& p, ShiftedWindowPlan& plan) {
  if (p.phases != 1 || p.uncovered_outputs) return false;
  for (int i = 0; i < 3; ++i) {
    if (p.dim[i].stride != 1 || p.dim[i].residue[0].taps == 0 ||
        p.row_stride[i] != p.staged_stride[i]) {
      return false;
    }
  }
  // The quad staging grid has a row of blocks per quad of padded channels (65535).
  if (p.staged_stride[2] / 4 > 65535 || p.dim[2].residue[0].taps > kMaxWidthTaps) return false;
  // The compact grid: one zero gap between lines, and between a plane's lines.
  const auto compact = [&](int i) {
    const int high = p.staged_extent[i] - p.source_extent[i] - p.halo_low[i];
    return p.source_extent[i] + std::max(p.halo_low[i], high);
  };
  // A column is a target position (qh * line_pitch + qw), so a line holds at least the
  // target's width. Where taps that never reach the source are dropped (a dilated
  // kernel over a short source) the halos are narrower than the target's overhang,
  // and a pitch of width + halo wrapped the last target columns onto the next line.
  plan.line_pitch = std::max(compact(2), p.dim[2].max_positions);
  plan.plane_lines = compact(1);
  plan.depth_planes = p.staged_extent[0];
  plan.plane_pitch = static_cast<int64_t>(plan.plane_lines) * plan.line_pitch;
  const int64_t plane_columns = static_cast<int64_t>(p.dim[1].max_positions) * plan.line_pitch;
  if (plane_columns >= INT_MAX / 2) return false;
  plan.plane_columns = static_cast<int>(plane_columns);
  plan.origin = p.halo_low[0] * plan.plane_pitch + p.halo_low[1] * plan.line_pitch + p.halo_low[2];
  plan.min_width_shift = lowest_shift(p.dim[2].residue[0].first_shift,
                                      p.dim[2].residue[0].shift_step, p.dim[2].residue[0].taps);
  plan.skip_halo_taps = border_taps_read_halo(p);
  return true;
}

bool plan_plane_rows(const PhaseProblem& p, ShiftedWindowPlan& plan) {
  // The last window of the last plane reads past the staged positions (into columns
  // that are not stored): the quad planes are that much longer.
  const int64_t last_row =
      plan.origin +
      (p.dim[0].max_positions - 1 + highest_shift(p.dim[0].residue[0])) * plan.plane_pitch +
      static_cast<int64_t>(plan.column_blocks - 1) * plan.column_step +
      highest_shift(p.dim[1].residue[0]) * plan.line_pitch + plan.min_width_shift +
      plan.window_rows - 1;
  plan.plane_rows = (std::max(plan.depth_planes * plan.plane_pitch, last_row + 1) + 7) / 8 * 8;
  return plan.plane_rows < INT_MAX;
}

ShiftedWindowPlan plan_shifted_window(const PhaseProblem& p, bool half_operands, int m_tiles,
                                      bool parked) {
  ShiftedWindowPlan plan;
  if (m_tiles != 1 && (!half_operands || m_tiles != kWindowMaxMTiles ||
                       p.cout_padded % (m_tiles * kWindowBlockChannels) != 0)) {
    return plan;
  }
  plan.m_tiles = m_tiles;
  // Blocks of 64 target channels, at most a quarter of them padding; half for the
  // float16 / bfloat16 form, whose alternative is the widened float32 path.
  const int used = p.cout_per_group % kWindowBlockChannels;
  const int least_used = half_operands ? 32 : 48;
  if (p.cout_padded % kWindowBlockChannels != 0 || (used != 0 && used < least_used)) return plan;
  if (!plan_compact_grid(p, plan)) return plan;
  // Its tiles keep every tap: leaving the halo's out measured no gain on this GEMM
  // (KERNEL_LOG "leave out the halo's taps": 68 1.00x, the k5 wide layers 1.00-1.02x, in
  // float16 1.01-1.05x slower), where the tap-rows forms gained up to 12 %.
  plan.skip_halo_taps = false;
  const ResidueParams& rw = p.dim[2].residue[0];
  // The fewest columns computed per plane, counting each block's fixed cost.
  int64_t best_cost = INT64_MAX;
  for (const int columns : kWindowColumnChoices) {
    const int64_t blocks = (plan.plane_columns + 2 * columns - 1) / (2 * columns);
    const int64_t cost = blocks * (2 * columns + kBlockOverheadColumns);
    if (cost <= best_cost) {
      best_cost = cost;
      plan.columns = columns;
    }
  }
  plan.block_columns = 2 * plan.columns;
  plan.column_step = plan.block_columns;
  plan.column_blocks = (plan.plane_columns + plan.block_columns - 1) / plan.block_columns;
  plan.window_rows = plan.block_columns + shift_span(rw.shift_step, rw.taps);
  plan.window_pitch = (plan.window_rows + 7) / 8 * 8;
  const int planes_per_step = half_operands ? 2 : 4;
  const int weight_parts = half_operands ? 1 : 2;
  plan.stage_bytes =
      planes_per_step * plan.window_pitch * 16 + rw.taps * weight_parts * m_tiles * kTapRowBytes;
  // The half form's parked epilogue tile takes its room from a larger budget (the
  // dynamic shared memory a block may have is 227 KB).
  parked = parked && half_operands;
  plan.park_bytes =
      parked ? m_tiles * kWindowBlockChannels * (plan.block_columns + kWindowParkPad) * 2 : 0;
  const int budget = parked ? kParkedBudgetBytes - plan.park_bytes : kPipelineBudgetBytes;
  plan.slots = std::min(kMaxSlots, budget / plan.stage_bytes);
  plan.flush_stages = half_operands ? kHalfChainStages : kMaxWidthTaps / rw.taps;
  if (plan.slots < kMinSlots || !plan_plane_rows(p, plan)) plan.columns = 0;
  return plan;
}

bool set_window_tiles(ShiftedWindowPlan& plan, int64_t groups, int64_t samples, int depth,
                      int channel_blocks) {
  plan.channel_blocks = channel_blocks;
  plan.groups = groups;
  plan.samples = samples;
  plan.tiles = groups * samples * depth * channel_blocks * plan.column_blocks;
  if (plan.tiles >= INT_MAX) return false;
  plan.column_block_divider = FastDivider(static_cast<uint32_t>(plan.column_blocks));
  plan.channel_block_divider = FastDivider(static_cast<uint32_t>(channel_blocks));
  plan.plane_divider = FastDivider(static_cast<uint32_t>(samples * depth));
  plan.depth_divider = FastDivider(static_cast<uint32_t>(depth));
  return true;
}

}  // namespace ct3d::cuda
