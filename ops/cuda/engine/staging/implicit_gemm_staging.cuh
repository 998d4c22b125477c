// The staging pass of the implicit GEMMs, run on every call: an operand copied
// channels-last with zero halos and zero-padded groups. Memory-bound in principle;
// on a stride-2 layer's grad_output (8x the input) it is a third of the input gradient
// (KERNEL_LOG "16-byte stores"). Host side: staging.h.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/instructions/element_conversion.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/problem/fast_divider.h"
#include "ops/cuda/engine/staging/staged_grid.cuh"

namespace ct3d::cuda {

constexpr int kStagingPositions = 64;  // staged positions of one transpose tile
constexpr int kStagingChannels = 64;   // most channels of one tile
// float32 tiles of whole 32-channel pieces (KERNEL_LOG "wider float32 staging tiles",
// staging_tile_positions): 256 positions x 32 channels, 8 loads a thread a channel row in flight
// and the block's setup spread over 4x the positions (L1-73's grad_output 0.68 -> 0.56 ms against
// 64 x 64).
constexpr int kStagingWidePositions = 256;
constexpr int kStagingWideChannels = 32;
// float32 tiles of 128 positions x 64 channels, for the other float32 layouts (the
// weight gradient's pitched rows: 1-4 % faster than 64 x 64 there).
constexpr int kStagingMidPositions = 128;
constexpr int kStagingRows = 8;  // threads per tile column (32 x 8 threads)

// What the staging pass reads and writes, per sample.
struct StagingShape {
  StagedGrid grid;
  int64_t staged_positions;  // D' * H' * W', halos included
  int cin_per_group, cin_padded;
  int padded_channels;             // groups * cin_padded
  FastDivider last_tile_channels;  // by the channels of the last channel tile
};

// input (N, groups * cin_per_group, D, H, W) -> staged (N, D', H', W', groups,
// cin_padded): channels-last, zero in the halo and in each group's padding
// channels. A block transposes kPositions consecutive staged positions x up
// to kChannels channels through shared memory: the reads run along W (each thread
// kPositions / 32 positions x up to kChannels / 8 channels), the writes
// along the channels (with all channels in one tile, the block's staged rows are one
// contiguous run). Grid: (position tiles, channel tiles, batch). With `nonfinite`
// set, any NaN or Inf read sets it to 1. With `channel_sums` set, the block also
// writes the sum of each of its channels over its positions, at
// channel_sums[(n * position tiles + position tile) * padded_channels + channel]:
// a bias gradient summed from the same read (sum_channel_partials). Element: float,
// or float16 / bfloat16 (the half weight gradient's grad_output), copied as it is.
template <class Element, int kPositions, int kChannels = kStagingChannels>
__global__ void __launch_bounds__(32 * kStagingRows)
    stage_input_channels_last_kernel(const Element* __restrict__ input,
                                     Element* __restrict__ staged, const StagingShape s,
                                     int* nonfinite, double* __restrict__ channel_sums) {
  __shared__ float tile[kChannels][kPositions + 1];
  constexpr int kPositionsPerThread = kPositions / 32;
  const int64_t n = blockIdx.z;
  const int64_t position0 = static_cast<int64_t>(blockIdx.x) * kPositions;
  const int channel0 = blockIdx.y * kChannels;
  const int channels = min(kChannels, s.padded_channels - channel0);
  const Element* sample =
      input + n * (s.padded_channels / s.cin_padded) * s.cin_per_group * s.grid.input_positions;

  // 16-bit types: a thread's two positions are neighbours (2x, 2x + 1), read with one
  // 4-byte load where they are neighbours in the source too; float32: x and x + 32.
  constexpr bool kPairs = sizeof(Element) == 2;
  static_assert(!kPairs || kPositionsPerThread == 2, "a pair of positions a thread");
  const auto column = [](int j) {
    return kPairs ? 2 * static_cast<int>(threadIdx.x) + j : static_cast<int>(threadIdx.x) + 32 * j;
  };
  // Where this thread's staged positions sit in the input (-1: halo or past the end).
  int64_t input_offset[kPositionsPerThread];
#pragma unroll
  for (int j = 0; j < kPositionsPerThread; ++j) {
    const int64_t position = position0 + column(j);
    input_offset[j] =
        position < s.staged_positions ? s.grid.source_offset(static_cast<uint32_t>(position)) : -1;
  }
  // This thread's (group, channel) of its first row, then stepped by kStagingRows: one
  // division a thread, not one a row (the pass is issue-bound, not DRAM-bound, with a
  // division a row: ncu on L1-73's grad_output, 75 % SM and 50 % DRAM).
  int group = (channel0 + static_cast<int>(threadIdx.y)) / s.cin_padded;
  int channel = channel0 + static_cast<int>(threadIdx.y) - group * s.cin_padded;
  const auto next_row = [&] {
    channel += kStagingRows;
    while (channel >= s.cin_padded) {
      channel -= s.cin_padded;
      ++group;
    }
  };
#pragma unroll
  for (int i0 = 0; i0 < kChannels; i0 += kStagingRows, next_row()) {
    const int i = i0 + threadIdx.y;
    if (i >= channels) break;
    const Element* plane = sample + (group * s.cin_per_group + channel) * s.grid.input_positions;
    if constexpr (kPairs) {
      const Element* first = plane + input_offset[0];
      if (nonfinite == nullptr && channel < s.cin_per_group && input_offset[0] >= 0 &&
          input_offset[1] == input_offset[0] + 1 && reinterpret_cast<uintptr_t>(first) % 4 == 0) {
        const uint32_t both = *reinterpret_cast<const uint32_t*>(first);
        tile[i][column(0)] = element_to_float(element_from_bits<Element>(both & 0xffff));
        tile[i][column(1)] = element_to_float(element_from_bits<Element>(both >> 16));
        continue;
      }
    }
#pragma unroll
    for (int j = 0; j < kPositionsPerThread; ++j) {
      float value = 0.f;
      if (input_offset[j] >= 0 && channel < s.cin_per_group) {
        value = element_to_float(plane[input_offset[j]]);
        if (nonfinite != nullptr && !isfinite(value)) *nonfinite = 1;
      }
      tile[i][column(j)] = value;
    }
  }
  __syncthreads();
  constexpr int kThreads = 32 * kStagingRows;
  const int thread = threadIdx.y * 32 + threadIdx.x;
  const int64_t remaining = s.staged_positions - position0;
  const int positions = remaining < kPositions ? static_cast<int>(remaining) : kPositions;
  Element* destination =
      staged + (n * s.staged_positions + position0) * s.padded_channels + channel0;
  if constexpr (sizeof(Element) == 2) {
    // 16-bit types: 8 channels (16 bytes) a thread; every tile's channels and every
    // staged row are whole 8-channel pieces (padded channels are multiples of 8).
    const int pieces = channels / 8;
    for (int k = thread; k < pieces * positions; k += kThreads) {
      const int i = pieces == kChannels / 8 ? k / (kChannels / 8) : k / pieces;
      const int c = 8 * (k - i * pieces);
      uint32_t packed[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        packed[e] = element_bits(element_from_float<Element>(tile[c + 2 * e][i])) |
                    (element_bits(element_from_float<Element>(tile[c + 2 * e + 1][i])) << 16);
      }
      *reinterpret_cast<uint4*>(destination + static_cast<int64_t>(i) * s.padded_channels + c) =
          make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
  } else if (s.padded_channels % 4 == 0) {
    // float32 with whole 4-channel pieces (every tile's channels too, and its rows
    // 16-byte aligned): 4 channels (16 bytes) a thread, a fixed piece of rows a pass
    // stepped without divisions. Lanes read tile[c + e][i] at banks c + e + i: distinct
    // for 8 pieces a row (2-way at 16).
    const int pieces = channels / 4;
    const int rows_per_pass = kThreads / pieces;
    const int first_row = thread / pieces;
    const int c = 4 * (thread - first_row * pieces);
    if (first_row < rows_per_pass) {
      for (int i = first_row; i < positions; i += rows_per_pass) {
        *reinterpret_cast<float4*>(destination + static_cast<int64_t>(i) * s.padded_channels + c) =
            make_float4(tile[c][i], tile[c + 1][i], tile[c + 2][i], tile[c + 3][i]);
      }
    }
  } else {
    for (int k = thread; k < channels * positions; k += kThreads) {
      const int i = channels == kChannels
                        ? k / kChannels
                        : static_cast<int>(s.last_tile_channels.divide(static_cast<uint32_t>(k)));
      const int c = k - i * channels;
      destination[static_cast<int64_t>(i) * s.padded_channels + c] = tile[c][i];
    }
  }
  // Halo and padding entries of the tile are zero, so a plain row sum is the
  // channel's sum over this block's source positions (row stride kPositions + 1: no conflicts).
  // In double: a bias gradient is often a sum with heavy cancellation.
  if (channel_sums != nullptr && thread < channels) {
    double sum = 0;
    for (int i = 0; i < positions; ++i) sum += tile[thread][i];
    channel_sums[(n * gridDim.x + blockIdx.x) * s.padded_channels + channel0 + thread] = sum;
  }
}

}  // namespace ct3d::cuda
