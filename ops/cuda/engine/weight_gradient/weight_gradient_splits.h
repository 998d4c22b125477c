// What both weight-gradient mainloops (mma.sync: weight_gradient_launch.cu; wgmma:
// weight_gradient_wgmma_launch.cu) share on the host: the chunks of samples whose
// grad_output is staged, the layout of the planned split's partial tiles
// (planner/weight_gradient_split.h), and their fixed-order sum into grad_weight.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <functional>

#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"
#include "ops/cuda/engine/planner/weight_gradient_split.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"

namespace ct3d::cuda {

// Where the partial tiles go in grad_weight: [split][group][tap][block m][block n]
// tiles of block_m input channels x block_n output channels.
struct WgradSumShape {
  int64_t split_floats;  // one split's tiles: groups x taps x channel blocks x tile
  int splits, taps, channel_blocks_m, channel_blocks_n, block_m, block_n;
  int fold, cin_per_group, cout_per_group;  // the convolution's groups
};

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
