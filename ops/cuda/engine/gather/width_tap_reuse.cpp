#include "ops/cuda/engine/gather/width_tap_reuse.h"

#include <algorithm>
#include <cstdint>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {
namespace {

// Shared memory the pipeline may take (the rest: barriers and the static part).
constexpr int kPipelineBudgetBytes = 200 * 1024;
constexpr int kMinSlots = 3;  // a slot computing, one in flight, one loading
constexpr int kMaxSlots = 8;
// The flush period of the wgmma chain (wgmma_kernel.cuh): 128 k, 16 per width tap.
constexpr int kMaxTapsPerStage = 8;

int stage_bytes(int tile_rows, int taps, int channels) {
  // 16 staged floats per tile row; per tap, 16 channels x {hi, lo} per output channel.
  const int bytes = tile_rows * 16 * 4 + taps * channels * 32 * 4;
  return (bytes + 1023) / 1024 * 1024;
}

}  // namespace

WidthReusePlan plan_width_reuse(const PhaseProblem& p, int block_positions, int channels,
                                int max_tile_rows) {
  WidthReusePlan plan;
  const DimParams& width = p.dim[2];
  int max_taps = 0, max_span = 0;
  for (int a = 0; a < width.active_residues; ++a) {
    const ResidueParams& r = width.residue[width.active_residue[a]];
    max_taps = std::max(max_taps, r.taps);
    max_span = std::max(max_span, shift_span(r.shift_step, r.taps));
  }
  if (max_taps < 2) return plan;
  // A block's tile rows: block_positions * pitch + segments * (span + 1 - pitch),
  // worst over where the block starts in its first line.
  const int64_t pitch = p.row_stride[2] / p.staged_stride[2];
  const int64_t line = width.max_positions;
  const int64_t b = block_positions;
  const int64_t most_segments = std::min<int64_t>(b, (b - 1 + line - 1) / line + 1);
  const int64_t fewest_segments = (b + line - 1) / line;
  const int64_t per_segment = max_span + 1 - pitch;
  const int64_t tile_rows =
      b * pitch + (per_segment > 0 ? most_segments : fewest_segments) * per_segment;
  if (tile_rows > max_tile_rows) return plan;
  // The producer's row offsets are 32-bit, from the block's first row.
  const int64_t samples_spanned = b / p.positions_per_sample + 2;
  if (samples_spanned * p.staged_batch_stride >= (int64_t{1} << 31)) return plan;

  int taps = std::min(max_taps, kMaxTapsPerStage);
  while (taps > 1 && kMinSlots * stage_bytes(tile_rows, taps, channels) > kPipelineBudgetBytes) {
    --taps;
  }
  if (taps < 2) return plan;
  plan.tile_rows = static_cast<int>(tile_rows);
  plan.taps_per_stage = taps;
  plan.stage_bytes = stage_bytes(plan.tile_rows, taps, channels);
  plan.slots = std::min(kMaxSlots, kPipelineBudgetBytes / plan.stage_bytes);
  return plan;
}

}  // namespace ct3d::cuda
