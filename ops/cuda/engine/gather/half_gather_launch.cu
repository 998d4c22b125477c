// Host side of the half gathering GEMM (half_gather.h): the block's channels, the
// weights packed (half_window_weights.h's layout with the block's rows), the source
// staged per chunk of samples, one launch for all phases.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <type_traits>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/gather/half_gather.h"
#include "ops/cuda/engine/gather/wgmma_half_gather_kernel.cuh"
#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/staging/half_window_weights.h"
#include "ops/cuda/engine/staging/staging.h"

namespace ct3d::cuda {
namespace {

// wgmma N for a group's target channels: the smallest shape that holds them, or
// blocks of 128.
int half_gather_channels_for(int64_t cout) {
  for (const int n : {32, 48, 64, 96}) {
    if (cout <= n) return n;
  }
  return 128;
}

// The persistent grid: a block per multiprocessor, a count prime to the phases so that
// each block's tiles (gridDim.x apart, phase fastest) cycle through every phase and the
// blocks get even work.
unsigned persistent_blocks(int64_t tiles, int phases) {
  int64_t blocks = multiprocessor_count();
  if (tiles <= blocks) return static_cast<unsigned>(tiles);
  while (blocks > 1 && std::gcd(blocks, int64_t{phases}) != 1) --blocks;
  return static_cast<unsigned>(blocks);
}

template <class Cfg>
void launch_config(const GatherProblem& problem, const at::Tensor& source, const at::Tensor& weight,
                   const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                   int64_t staging_budget) {
  using Element = typename Cfg::Element;
  const PhaseProblem p = make_phase_problem(problem, kBlockK, Cfg::kBlockChannels, output);
  if (p.uncovered_outputs) fill_uncovered_outputs(bias, output);
  if (p.phases == 0) return;
  const HalfPackedWeights packed =
      pack_half_window_weights(problem, p, p.cout_padded, 0, 1, weight, bias, stream);
  auto kernel = wgmma_half_gather_kernel<Cfg>;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
  const int64_t batch = output.size(0);
  const int64_t chunk = staging_chunk_samples(p.staged_batch_stride, staging_budget, batch);
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    const int64_t samples = std::min(chunk, batch - n0);
    const at::Tensor staged = stage_channels_last(gather_staged_layout(problem),
                                                  source.narrow(0, n0, samples), nullptr, stream);
    PhaseProblem chunk_problem = p;
    chunk_problem.rows = samples * p.positions_per_sample;
    const int64_t row_tiles =
        (chunk_problem.rows + Cfg::kBlockPositions - 1) / Cfg::kBlockPositions;
    HalfGatherTiles tiles;
    tiles.x_tiles = static_cast<unsigned>(row_tiles * p.phases);
    tiles.channel_blocks = static_cast<unsigned>(p.cout_padded / Cfg::kBlockChannels);
    tiles.count = int64_t{tiles.x_tiles} * tiles.channel_blocks * problem.groups;
    kernel<<<persistent_blocks(tiles.count, p.phases), Cfg::kThreads, Cfg::kSharedBytes, stream>>>(
        chunk_problem, tiles, static_cast<const Element*>(staged.const_data_ptr()),
        static_cast<const Element*>(packed.weights.const_data_ptr()),
        packed.bias.defined() ? packed.bias.const_data_ptr<float>() : nullptr,
        static_cast<Element*>(output.mutable_data_ptr()) + n0 * p.output_batch_stride);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

template <class Element>
void launch_for_channels(const GatherProblem& problem, const at::Tensor& source,
                         const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                         cudaStream_t stream, int64_t staging_budget) {
  // Two m-tiles per warpgroup up to 64 channels (twice the rows per weight chunk
  // copied), one above; two chunks (32 channels) per stage.
  const auto run = [&](auto config) {
    launch_config<decltype(config)>(problem, source, weight, bias, output, stream, staging_budget);
  };
  switch (half_gather_channels_for(problem.target_channels)) {
    case 32:
      run(HalfGatherConfig<32, 2, 2, Element>{});
      break;
    case 48:
      run(HalfGatherConfig<48, 2, 2, Element>{});
      break;
    case 64:
      run(HalfGatherConfig<64, 2, 2, Element>{});
      break;
    case 96:
      run(HalfGatherConfig<96, 1, 2, Element>{});
      break;
    default:
      run(HalfGatherConfig<128, 1, 2, Element>{});
      break;
  }
}

}  // namespace

void launch_half_gather(const GatherProblem& problem, const at::Tensor& source,
                        const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                        cudaStream_t stream, int64_t staging_budget) {
  if (source.scalar_type() == at::kHalf) {
    launch_for_channels<__half>(problem, source, weight, bias, output, stream, staging_budget);
  } else {
    launch_for_channels<__nv_bfloat16>(problem, source, weight, bias, output, stream,
                                       staging_budget);
  }
}

}  // namespace ct3d::cuda
