// The two preparation passes of the implicit GEMM, run on every call: the input
// copied channels-last with zero-padded groups, and the weights packed as mma
// fragments and TF32-split. Both are memory-bound copies, a few percent of the convolution.
#pragma once

#include <cstdint>

#include "ops/cuda/ptx_helpers.cuh"

namespace ct3d::cuda {

constexpr int kStagingTile = 32;  // a 32 x 32 (channel x position) transpose tile
constexpr int kStagingRows = 8;   // threads per tile column
constexpr int kStagedChunk = 16;  // input channels per TF32-split chunk

// input (N, groups * cin_per_group, positions) -> staged (N, positions, groups,
// cin_padded): channels-last, zero in each group's padding channels. Reads are
// coalesced along positions, writes along channels, through a shared-memory tile.
// Grid: (position tiles, padded-channel tiles, batch). With `nonfinite` set, any
// NaN or Inf read sets it to 1.
__global__ void stage_input_channels_last_kernel(const float* __restrict__ input,
                                                 float* __restrict__ staged, int64_t positions,
                                                 int cin_per_group, int cin_padded,
                                                 int padded_channels, int* nonfinite) {
  __shared__ float tile[kStagingTile][kStagingTile + 1];
  const int64_t n = blockIdx.z;
  const int64_t position0 = static_cast<int64_t>(blockIdx.x) * kStagingTile;
  const int channel0 = blockIdx.y * kStagingTile;
  const int groups = padded_channels / cin_padded;
  const float* sample = input + n * groups * cin_per_group * positions;
#pragma unroll
  for (int i = threadIdx.y; i < kStagingTile; i += kStagingRows) {
    const int padded_channel = channel0 + i;
    const int group = padded_channel / cin_padded;
    const int channel = padded_channel - group * cin_padded;
    const int64_t position = position0 + threadIdx.x;
    float value = 0.f;
    if (padded_channel < padded_channels && channel < cin_per_group && position < positions) {
      value = sample[(group * cin_per_group + channel) * positions + position];
      if (nonfinite != nullptr && !isfinite(value)) *nonfinite = 1;
    }
    tile[i][threadIdx.x] = value;
  }
  __syncthreads();
  const int padded_channel = channel0 + threadIdx.x;
#pragma unroll
  for (int i = threadIdx.y; i < kStagingTile; i += kStagingRows) {
    const int64_t position = position0 + i;
    if (position < positions && padded_channel < padded_channels) {
      staged[(n * positions + position) * padded_channels + padded_channel] = tile[threadIdx.x][i];
    }
  }
}

// Packs the weights (C_in, C_out/groups, kD, kH, kW) as the GEMM's A fragments:
// [group][tap][16-channel chunk][16-channel output tile][hi, lo][k-step][lane][4],
// zero in the padding. Register e of lane (g, t) in k-step s is output channel
// g + 8 (e % 2) and input channel 4 t + 2 s + e / 2 of the chunk: the mma's
// row-major A fragment, in the k order the staged input uses.
//
// With fold > 1, each GEMM group is `fold` consecutive groups of the convolution
// (cin_per_group and cout_per_group are the convolution's): the packed weights are
// block-diagonal, zero between different convolution groups.
__global__ void pack_weight_fragments_kernel(const float* __restrict__ weight,
                                             float* __restrict__ packed, int64_t total,
                                             int cin_per_group, int cout_per_group, int fold,
                                             int cin_padded, int cout_padded, int taps) {
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    const int e = static_cast<int>(index & 3);
    const int lane = static_cast<int>((index >> 2) & 31);
    const int k_step = static_cast<int>((index >> 7) & 1);
    const bool lo_part = (index >> 8) & 1;
    int64_t rest = index >> 9;
    const int output_tiles = cout_padded / 16;
    const int output_tile = static_cast<int>(rest % output_tiles);
    rest /= output_tiles;
    const int chunks = cin_padded / kStagedChunk;
    const int chunk = static_cast<int>(rest % chunks);
    rest /= chunks;
    const int tap = static_cast<int>(rest % taps);
    const int64_t group = rest / taps;
    const int col = output_tile * 16 + (lane >> 2) + 8 * (e & 1);
    const int ic = chunk * kStagedChunk + 4 * (lane & 3) + 2 * k_step + (e >> 1);
    float value = 0.f;
    const bool same_group = ic / cin_per_group == col / cout_per_group;
    if (ic < fold * cin_per_group && col < fold * cout_per_group && same_group) {
      const int64_t input_channel = group * fold * cin_per_group + ic;
      value = weight[(input_channel * cout_per_group + col % cout_per_group) * taps + tap];
    }
    const float value_hi = round_to_tf32(value);
    packed[index] = lo_part ? value - value_hi : value_hi;
  }
}

}  // namespace ct3d::cuda
