#include "ops/cuda/engine/strided_lines/strided_lines_plan.h"

#include <algorithm>
#include <climits>

namespace ct3d::cuda {
namespace {

// Dynamic shared memory for the slots (the block's 227 KB less the barriers and the
// epilogue's exchange).
constexpr int kSharedBudgetBytes = 224 * 1024;
constexpr int kMinSlots = 3;
constexpr int kMaxSlots = 8;

// The width padding of a stride-2 width whose taps are those of dilation 1, or -1: tap
// k of residue r reads input q + shift with 2 q + r = 2 (q + shift) - padding + k. The
// kernel applies every width tap, so every tap must be in the phases: where the phase
// plan dropped some (taps that never reach the source), the few left may look like
// dilation 1 when they are not (dilation 3, padding 8, an output of width 1 kept one
// tap, and the kernel applied its three neighbours too: 0.56 off; issue 49's call 1802).
int64_t unit_dilation_padding(const GatherDim& width) {
  size_t taps = 0;
  for (const PhaseDimPlan& phase : width.phases) taps += phase.taps.size();
  if (taps != static_cast<size_t>(width.kernel)) return -1;
  int64_t padding = -1;
  for (int64_t r = 0; r < 2; ++r) {
    const PhaseDimPlan& phase = width.phases[r];
    for (size_t i = 0; i < phase.taps.size(); ++i) {
      const int64_t candidate = 2 * phase.input_shift[i] + phase.taps[i] - r;
      if (padding < 0) padding = candidate;
      if (candidate != padding || padding < 0) return -1;
    }
  }
  return padding;
}

}  // namespace

bool strided_lines_may_apply(const GatherProblem& problem) {
  const GatherDim& width = problem.dim[2];
  if (problem.input_gradient || width.phases.size() != 2 ||
      (width.kernel != 3 && width.kernel != 4)) {
    return false;
  }
  for (const GatherDim& dim : problem.dim) {
    if (dim.position_step != 1) return false;
  }
  return true;
}

StridedLinesPlan plan_strided_lines(const GatherProblem& problem, const PhaseProblem& p,
                                    bool source_boxes) {
  const StridedLinesPlan none{};
  if (!source_boxes || !strided_lines_may_apply(problem)) return none;
  const GatherDim& width = problem.dim[2];
  const int64_t cin = problem.reduce_channels, cout = problem.target_channels;
  const int channel_block = cout <= 16 ? 16 : 32;
  const int k_steps = static_cast<int>(round_up(cin, 8 * kStridedLinesStageSteps) / 8);
  int depth_taps = 0, height_taps = 0;
  for (int r = 0; r < p.dim[0].stride; ++r) {
    depth_taps = std::max(depth_taps, p.dim[0].residue[r].taps);
  }
  for (int r = 0; r < p.dim[1].stride; ++r) {
    height_taps = std::max(height_taps, p.dim[1].residue[r].taps);
  }
  const bool flush = depth_taps * height_taps * 8 * k_steps > kStridedLinesMaxChain &&
                     !problem.operands_exact_in_tf32;
  const int m_tiles = strided_lines_m_tiles(static_cast<int>(width.kernel) * channel_block, flush);
  const int64_t padding = unit_dilation_padding(width);
  // Whole lines per compute warpgroup; a box starts at a line, and TMA's innermost
  // coordinate must be a whole 16 bytes (widths 1 and 2 measured an illegal
  // instruction); the flat plane's coordinates in 32 bits.
  const int64_t plane = problem.dim[1].source_extent * width.source_extent;
  if (padding < 0 || width.source_extent > 64 * m_tiles || width.source_extent % 4 != 0 ||
      plane > INT_MAX / 2) {
    return none;
  }
  // A box's 16 channels inside one group: with several, whole stages of them.
  if (problem.groups > 1 && cin % (8 * kStridedLinesStageSteps) != 0) return none;

  StridedLinesPlan plan;
  plan.width_taps = static_cast<int>(width.kernel);
  plan.channel_block = channel_block;
  plan.m_tiles = m_tiles;
  plan.source_width = static_cast<int>(width.source_extent);
  plan.target_width = static_cast<int>(width.target_extent);
  plan.width_padding = static_cast<int>(padding);
  plan.lines_per_warpgroup = 64 * m_tiles / plan.source_width;
  plan.line_blocks =
      (p.dim[1].max_positions + 2 * plan.lines_per_warpgroup - 1) / (2 * plan.lines_per_warpgroup);
  plan.channel_blocks = static_cast<int>((cout + plan.channel_block - 1) / plan.channel_block);
  plan.groups = static_cast<int>(problem.groups);
  plan.k_steps = k_steps;
  plan.depth_taps = depth_taps;
  plan.height_taps = height_taps;
  plan.flush_stages = flush ? kStridedLinesFlushReductions / (8 * kStridedLinesStageSteps) : 0;
  const int64_t tiles = problem.batch * problem.groups * plan.channel_blocks *
                        p.dim[0].active_residues * p.dim[0].max_positions *
                        p.dim[1].active_residues * plan.line_blocks;
  if (tiles <= 0 || tiles > INT_MAX) return none;
  plan.tiles = static_cast<int>(tiles);
  plan.stage_bytes = strided_lines_stage_bytes(plan.width_taps * plan.channel_block, m_tiles);
  // 8 compute warps' staged rows: channel_block x kStridedLinesStagedPitch floats each.
  const int staged_bytes = 8 * plan.channel_block * kStridedLinesStagedPitch * 4;
  plan.slots = std::min(kMaxSlots, (kSharedBudgetBytes - staged_bytes) / plan.stage_bytes);
  if (plan.slots < kMinSlots) return none;
  plan.staged_offset = plan.slots * plan.stage_bytes;
  // TMA lands a box at a 128-byte boundary: room to reach one.
  plan.shared_bytes = plan.staged_offset + staged_bytes + 128;
  return plan;
}

bool strided_lines_pays(const StridedLinesPlan& plan) {
  constexpr int kMaxFlushedChannelBlocks = 2;
  return plan.flush_stages == 0 || plan.channel_blocks <= kMaxFlushedChannelBlocks;
}

}  // namespace ct3d::cuda
