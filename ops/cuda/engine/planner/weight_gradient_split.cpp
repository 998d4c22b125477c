#include "ops/cuda/engine/planner/weight_gradient_split.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <limits>

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// mma.sync: enough warps for two full waves at 16 warps per multiprocessor; the split
// never goes below kMinStagesPerSplit stages (512 positions), which keeps a block's
// pipeline and epilogue worth their setup, and aims at no more than
// kMaxStagesPerSplit stages, which bounds the rounding of a block's running sum.
constexpr int kTargetWarpsPerMultiprocessor = 32;
constexpr int64_t kMinStagesPerSplit = 32;
constexpr int64_t kMaxStagesPerSplit = 2048;

// wgmma: about kWaves blocks per multiprocessor (one fits at a time), each at least
// kMinPositions positions (16 stages of 32) and aiming at no more than kMaxPositions
// (32 K, as the mma.sync weight gradient's bound on a running sum).
constexpr int kWaves = 4;
constexpr int64_t kMinPositions = 16 * kWgradTilePositions;
constexpr int64_t kMaxPositions = 1024 * kWgradTilePositions;

int64_t chunks_of(const WeightGradientPlan& plan, int64_t chunk_samples) {
  return (plan.geometry.batch + chunk_samples - 1) / chunk_samples;
}

}  // namespace

WgradSplit choose_wgrad_split(int64_t total_stages, int64_t blocks_per_split, int64_t wanted_blocks,
                              int64_t split_floats, int64_t chunks, int64_t min_stages,
                              int64_t max_stages) {
  int64_t splits = std::max<int64_t>(1, (wanted_blocks + blocks_per_split - 1) / blocks_per_split);
  splits = std::max(splits, (total_stages + max_stages - 1) / max_stages);
  splits = std::min(splits, std::max<int64_t>(1, total_stages / min_stages));
  splits = std::min(splits,
                    std::max<int64_t>(1, kWeightGradientWorkspaceFloats / (chunks * split_floats)));
  splits = std::min(splits, kMaxInt);
  const int64_t stages_per_split = (total_stages + splits - 1) / splits;
  TORCH_INTERNAL_ASSERT(stages_per_split < kMaxInt);
  return {(total_stages + stages_per_split - 1) / stages_per_split, stages_per_split};
}

WgradSplit fit_wgrad_split_to_waves(WgradSplit split, int64_t total_stages,
                                    int64_t blocks_per_split, int64_t multiprocessors,
                                    int64_t max_splits, int64_t min_stages) {
  // Waves x stages per block of a split count.
  const auto cost = [&](int64_t splits) {
    const int64_t per_split = (total_stages + splits - 1) / splits;
    const int64_t blocks = (total_stages + per_split - 1) / per_split * blocks_per_split;
    return (blocks + multiprocessors - 1) / multiprocessors * per_split;
  };
  const int64_t last =
      std::min({3 * split.splits / 2, max_splits, std::max<int64_t>(1, total_stages / min_stages)});
  // Downward too: the workspace bound often sets the count. From the most splits, so
  // that a tie keeps the shorter running sums.
  int64_t best = split.splits;
  for (int64_t splits = last; splits >= std::max<int64_t>(1, 3 * split.splits / 4); --splits) {
    if (cost(splits) < cost(best)) best = splits;
  }
  // Only for a gain of at least 1/32: N-32-16-k3's 3.98 waves of 123 stages became 3 of
  // 163 for 0.6 % in this cost and measured 0.90x (KERNEL_LOG "splits fitted to whole waves").
  if (32 * cost(best) > 31 * cost(split.splits)) best = split.splits;
  const int64_t per_split = (total_stages + best - 1) / best;
  return {(total_stages + per_split - 1) / per_split, per_split};
}

WgradSplit plan_mma_wgrad_split(const WeightGradientPlan& plan, int m_tiles,
                                int64_t chunk_samples, int64_t multiprocessors) {
  const ConvGeometry& g = plan.geometry;
  const int64_t n = plan.output.padded_channels_per_group;
  const int64_t block_m = 16 * m_tiles, block_n = mma_wgrad_block_n(n);
  const int64_t tiles =
      plan.groups * g.taps() * (plan.input.padded_channels_per_group / block_m) * (n / block_n);
  // Every chunk has the same splits, each writing its own partial tiles.
  const int64_t positions = chunk_samples * g.input_positions();
  const int64_t total_stages = (positions + kWgradStagePositions - 1) / kWgradStagePositions;
  const int64_t wanted_blocks =
      multiprocessors * kTargetWarpsPerMultiprocessor / mma_wgrad_warps_n(n);
  return choose_wgrad_split(total_stages, tiles, wanted_blocks, tiles * block_m * block_n,
                            chunks_of(plan, chunk_samples), kMinStagesPerSplit,
                            kMaxStagesPerSplit);
}

int64_t wgmma_wgrad_split_floats(const WeightGradientPlan& plan, const WgradWgmmaProblem& p,
                                 int channels) {
  return plan.groups * plan.geometry.taps() * p.channel_blocks * channels * plan.cout;
}

WgradSplit plan_wgmma_wgrad_split(const WeightGradientPlan& plan, const WgradWgmmaProblem& p,
                                  int channels, bool half, int64_t chunk_samples,
                                  int64_t workspace_floats, int64_t multiprocessors) {
  const int64_t stages_per_sample = int64_t{p.depth} * p.height * p.width_tiles;
  const int64_t chunks = chunks_of(plan, chunk_samples);
  const int64_t split_floats = wgmma_wgrad_split_floats(plan, p, channels);
  const int64_t blocks_per_split = int64_t{p.row_blocks} * p.channel_blocks * plan.groups;
  const int64_t max_splits = std::max<int64_t>(1, workspace_floats / (chunks * split_floats));
  const int64_t total_stages = chunk_samples * stages_per_sample;
  const int64_t min_stages = kMinPositions / p.positions;
  WgradSplit split =
      choose_wgrad_split(total_stages, blocks_per_split, multiprocessors * kWaves, split_floats,
                         chunks, min_stages, kMaxPositions / p.positions);
  if (split.splits > max_splits) {  // a tail launch's share of the workspace
    split.stages_per_split = (total_stages + max_splits - 1) / max_splits;
    split.splits = (total_stages + split.stages_per_split - 1) / split.stages_per_split;
  }
  // Whole waves (one block fits a multiprocessor; KERNEL_LOG "splits fitted to whole
  // waves"): float32 only, where it was measured; the half forms keep their measured counts.
  if (!half) {
    split = fit_wgrad_split_to_waves(split, total_stages, blocks_per_split, multiprocessors,
                                     max_splits, min_stages);
  }
  return split;
}

}  // namespace ct3d::cuda
