// The weight gradient's split of its reduction: how many partial tiles each mainloop's
// blocks write (each split sums a run of stages), so that the grid fills the GPU within
// the workspace bound. Planned with the mainloop (weight_gradient_mainloop.h), read by
// the launchers (weight_gradient_launch.cu, weight_gradient_wgmma_launch.cu).
#pragma once

#include <cstdint>

#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"
#include "ops/cuda/engine/weight_gradient/wgmma_weight_gradient_problem.h"

namespace ct3d::cuda {

// Positions of the mma.sync mainloop's pipeline stage (the reduction K of one stage).
constexpr int kWgradStagePositions = 16;

struct WgradSplit {
  int64_t splits = 0, stages_per_split = 0;
};

// The reduction's split: as many splits as fill the GPU with wanted_blocks blocks,
// each of at least min_stages stages (a block's setup is worth it) and aiming at no
// more than max_stages (bounds the rounding of a block's running sum), within the
// workspace bound for chunks x splits x split_floats.
WgradSplit choose_wgrad_split(int64_t total_stages, int64_t blocks_per_split, int64_t wanted_blocks,
                              int64_t split_floats, int64_t chunks, int64_t min_stages,
                              int64_t max_stages);
// For blocks that run one per multiprocessor: the split count from 3/4 to 3/2 of
// `split`'s (at most max_splits, each split at least min_stages stages) whose blocks
// fill whole waves best, where that gains at least 1/32. The kernel's time is about its
// waves x stages per block, so a last wave a third full costs as much as a full one
// (docs/KERNEL_LOG.md, "splits fitted to whole waves").
WgradSplit fit_wgrad_split_to_waves(WgradSplit split, int64_t total_stages,
                                    int64_t blocks_per_split, int64_t multiprocessors,
                                    int64_t max_splits, int64_t min_stages);

// The mma.sync mainloop's block for a folded group's padded output channels n: warps
// along the output channels and the channels they cover (WgradConfig's kWarpsN and
// kBlockN, which weight_gradient_launch.cu asserts agree).
constexpr int mma_wgrad_warps_n(int64_t n) { return n == 16 || n == 32 ? 1 : 2; }
constexpr int mma_wgrad_block_n(int64_t n) { return n == 16 ? 16 : n == 32 ? 32 : 64; }

// The mma.sync mainloop's split of `plan` (its staged layouts) for blocks of m_tiles x 16
// input channels, chunk_samples a chunk, on `multiprocessors`.
WgradSplit plan_mma_wgrad_split(const WeightGradientPlan& plan, int m_tiles,
                                int64_t chunk_samples, int64_t multiprocessors);

// One wgmma launch's split (the whole tiles, or a tail launch's last positions): p its
// problem, `channels` its block's input channels (wgmma N), half for float16 / bfloat16
// operands (whose measured split counts are kept: not fitted to waves), within
// workspace_floats (the launch's share of kWeightGradientWorkspaceFloats).
WgradSplit plan_wgmma_wgrad_split(const WeightGradientPlan& plan, const WgradWgmmaProblem& p,
                                  int channels, bool half, int64_t chunk_samples,
                                  int64_t workspace_floats, int64_t multiprocessors);

// Floats of one wgmma split's partial tiles (every group, tap and channel block).
int64_t wgmma_wgrad_split_floats(const WeightGradientPlan& plan, const WgradWgmmaProblem& p,
                                 int channels);

}  // namespace ct3d::cuda
