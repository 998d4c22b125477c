// The epilogue of both wgmma mainloops (wgmma_kernel.cuh, wgmma_reuse_kernel.cuh):
// the compute warpgroups' accumulator tile parked in shared memory as
// [channel][position], then stored with consecutive threads on consecutive
// positions of one channel, as the mma.sync epilogue does; Output: float, or float16 /
// bfloat16 rounded once from the float32 sum and bias.
#pragma once

#include "ops/cuda/engine/gather/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/instructions/element_conversion.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"

namespace ct3d::cuda {

// total: m-tile mt's wgmma accumulators of this thread (compute thread ctid, whose
// rows are row_base + 64 mt and + 8). shared: at least kN x (kBlockPositions + 4)
// floats that no thread reads any more.
template <int kN, int kMTiles, int kBlockPositions, int kComputeThreads, int kAccumulators,
          class Output>
__device__ __forceinline__ void wgmma_store_tile(const PhaseProblem& p, const PhaseBlock& block,
                                                 float* shared,
                                                 const float (&total)[kMTiles][kAccumulators],
                                                 int ctid, int row_base, int group, int channel0,
                                                 const float* bias, Output* output) {
  const int t = ctid & 3;
  named_barrier_sync(kComputeThreads);
  constexpr int kPitch = kBlockPositions + 4;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int j = 0; j < kN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        shared[(8 * j + 2 * t + (e & 1)) * kPitch + row_base + 64 * mt + 8 * (e >> 1)] =
            total[mt][4 * j + e];
      }
  named_barrier_sync(kComputeThreads);
  const int64_t group_channel0 = static_cast<int64_t>(group) * p.cout_per_group + channel0;
  const int channels = min(kN, p.cout_per_group - channel0);
  const float* channel_bias = bias != nullptr ? bias + group_channel0 : nullptr;
  constexpr int kPositionsPerThread = kBlockPositions / kComputeThreads;
  constexpr int kChannelStep = kComputeThreads / kBlockPositions;  // 0 or 2
  if constexpr (kPositionsPerThread >= 1) {
    // Thread ctid stores positions ctid (+ 256 ...) of every channel.
#pragma unroll
    for (int q = 0; q < kPositionsPerThread; ++q) {
      const int position = ctid + q * kComputeThreads;
      Output* destination = output_row(p, block, output, group_channel0, position);
      if (destination == nullptr) continue;
#pragma unroll 4
      for (int c = 0; c < channels; ++c) {
        float value = shared[c * kPitch + position];
        if (channel_bias != nullptr) value += channel_bias[c];
        *destination = element_from_float<Output>(value);
        destination += p.output_channel_stride;
      }
    }
  } else {
    // Thread ctid stores position ctid % 128 of channels ctid / 128, + 2, + 4, ...
    const int position = ctid % kBlockPositions;
    const int first_channel = ctid / kBlockPositions;
    Output* destination = output_row(p, block, output, group_channel0, position);
    if (destination == nullptr) return;
    destination += first_channel * p.output_channel_stride;
#pragma unroll 4
    for (int c = first_channel; c < channels; c += kChannelStep) {
      float value = shared[c * kPitch + position];
      if (channel_bias != nullptr) value += channel_bias[c];
      *destination = element_from_float<Output>(value);
      destination += kChannelStep * p.output_channel_stride;
    }
  }
}

}  // namespace ct3d::cuda
