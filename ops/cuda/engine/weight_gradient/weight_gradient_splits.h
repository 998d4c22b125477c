// What both weight-gradient mainloops (mma.sync: weight_gradient_launch.cu; wgmma:
// weight_gradient_wgmma_launch.cu) share on the host: the chunks of samples whose
// grad_output is staged, the split of the reduction into partial tiles, and their
// fixed-order sum into grad_weight.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <functional>

#include "ops/cuda/device_capability.h"  // multiprocessor_count
#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"

namespace ct3d::cuda {

// Where the partial tiles go in grad_weight: [split][group][tap][block m][block n]
// tiles of block_m input channels x block_n output channels.
struct WgradSumShape {
  int64_t split_floats;  // one split's tiles: groups x taps x channel blocks x tile
  int splits, taps, channel_blocks_m, channel_blocks_n, block_m, block_n;
  int fold, cin_per_group, cout_per_group;  // the convolution's groups
};

// The reduction's split: as many splits as fill the GPU with wanted_blocks blocks,
// each of at least min_stages stages (a block's setup is worth it) and aiming at no
// more than max_stages (bounds the rounding of a block's running sum), within the
// workspace bound for chunks x splits x split_floats.
struct WgradSplit {
  int64_t splits, stages_per_split;
};
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

// Called per chunk of samples with the chunk's staged input (undefined unless asked
// for) and staged grad_output, to queue the chunk's GEMM.
using WgradChunkLaunch =
    std::function<void(int64_t chunk, int64_t first_sample, int64_t samples,
                       const at::Tensor& staged_input, const at::Tensor& staged_output)>;

// Stages each chunk (the input only when stage_input), launches its GEMM, calls
// after_chunk, and sums grad_bias (when defined) from the staging pass's partials.
void run_wgrad_chunks(const WeightGradientPlan& plan, const at::Tensor& input,
                      const at::Tensor& grad_output, at::Tensor& grad_bias, cudaStream_t stream,
                      bool stage_input, int64_t chunk_samples, const WgradChunkLaunch& launch,
                      const StagedChunkHook& after_chunk);

// grad_weight from the partial tiles (every split's every tile written).
void sum_wgrad_splits(const WgradSumShape& shape, const at::Tensor& workspace,
                      at::Tensor& grad_weight, cudaStream_t stream);

// The wgmma mainloop (sm_90a) of a plan whose form is kWgmma.
void launch_wgmma_weight_gradient(const WgradMainloopPlan& plan, const at::Tensor& input,
                                  const at::Tensor& grad_output, at::Tensor& grad_weight,
                                  cudaStream_t stream, at::Tensor& grad_bias,
                                  const StagedChunkHook& after_chunk);

}  // namespace ct3d::cuda
