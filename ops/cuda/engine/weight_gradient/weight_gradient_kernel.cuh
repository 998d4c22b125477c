// Device code of the weight gradient (weight_gradient.h): a cp.async pipeline of
// 16-position stages, each gathering the staged input rows and the grad_output rows
// one tap away, and 3xTF32 products by warp tiles of up to 64 x 32 channels; then
// a fixed-order sum of the splits' partial tiles.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_warp_tiles.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/problem/fast_divider.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_splits.h"

namespace ct3d::cuda {

constexpr int kWgradPipelineStages = 3;
// The tensor core truncates when it accumulates, a bias that grows with the chain
// (forward: 2e-5 at K = 3360). So the mma chain runs over kWgradChainStages stages
// (12 products) and is then added into the block's total by a round-to-nearest FADD.
constexpr int kWgradChainStages = 2;

// Everything the kernel needs; host side in weight_gradient_launch.cu.
struct WgradProblem {
  int64_t positions;     // K in all: batch x input positions
  int64_t total_stages;  // ceil(positions / 16)
  int stages_per_split;
  int positions_per_sample;  // D * H * W (< 2^31 - 64)
  FastDivider per_sample, width, height;
  // Staged input: one position holds groups x input_padded floats.
  int64_t input_position_stride;
  int input_padded;
  // Staged grad_output: sample stride and, per dimension, the offset of one input
  // index step (stride x staged stride) and of one tap (dilation x staged stride);
  // tap_origin is the offset of tap 0 at input index 0 (halo included).
  int64_t output_batch_stride, output_row_stride[3];
  int output_padded;
  int kernel[3];
  int64_t tap_stride[3];
  int64_t tap_origin;
  int taps, channel_blocks_m, channel_blocks_n, groups;
};

// One warp's tile: kMTiles 16-row mma tiles of input channels x kNTiles 8-column
// tiles of output channels, for kMTiles in 1..4 and kNTiles in {2, 4}. Both
// operands sit in shared memory as [position][channel]; lane (g, t) reads, at
// positions t and t + 4 of each k-step, consecutive channels with 16- or 8-byte
// loads. The channel of each mma row and column is a permutation (row_channel,
// column_channel) that only changes where an accumulator is stored:
//   M: channels 4g .. 4g+3 are rows g, g+8 of m-tiles 0, 1; 32 + 4g .. are those of
//      m-tiles 2, 3 (kMTiles 4), or 32 + 2g, 33 + 2g rows g, g+8 of m-tile 2
//      (kMTiles 3); with kMTiles 1, channels 2g, 2g+1.
//   N: channel 4g + j is column g of n-tile j (kNTiles 4), 2g + j (kNTiles 2).
template <int kMTiles, int kNTiles>
struct WgradWarpTile {
  static_assert(kMTiles >= 1 && kMTiles <= 4 && (kNTiles == 2 || kNTiles == 4), "tile shape");
  static constexpr int kChannelsM = 16 * kMTiles, kChannelsN = 8 * kNTiles;
  float acc[kMTiles][kNTiles][4] = {};

  static __device__ __forceinline__ int row_channel(int mt, int g, int half) {
    if (kMTiles == 1) return 2 * g + half;
    if (mt < 2) return 4 * g + 2 * mt + half;
    if (kMTiles == 3) return 32 + 2 * g + half;
    return 32 + 4 * g + 2 * (mt - 2) + half;
  }
  static __device__ __forceinline__ int column_channel(int nt, int column) {
    return kNTiles == 4 ? 4 * column + nt : 2 * column + nt;
  }

  // The k-step's hi/lo values of one position row: this lane's channels of every
  // m-tile (2 per tile) or n-tile (1 per tile).
  template <int kValues>
  static __device__ __forceinline__ void load_split(const float* row, int g,
                                                    uint32_t (&hi)[kValues],
                                                    uint32_t (&lo)[kValues]) {
    if constexpr (kValues == 2) {
      const float2 v = *reinterpret_cast<const float2*>(row + 2 * g);
      split_tf32(v.x, hi[0], lo[0]);
      split_tf32(v.y, hi[1], lo[1]);
    } else {
      const float4 v = *reinterpret_cast<const float4*>(row + 4 * g);
      split_tf32(v.x, hi[0], lo[0]);
      split_tf32(v.y, hi[1], lo[1]);
      split_tf32(v.z, hi[2], lo[2]);
      split_tf32(v.w, hi[3], lo[3]);
      if constexpr (kValues == 6) {
        const float2 u = *reinterpret_cast<const float2*>(row + 32 + 2 * g);
        split_tf32(u.x, hi[4], lo[4]);
        split_tf32(u.y, hi[5], lo[5]);
      } else if constexpr (kValues == 8) {
        const float4 u = *reinterpret_cast<const float4*>(row + 32 + 4 * g);
        split_tf32(u.x, hi[4], lo[4]);
        split_tf32(u.y, hi[5], lo[5]);
        split_tf32(u.z, hi[6], lo[6]);
        split_tf32(u.w, hi[7], lo[7]);
      }
    }
  }

  __device__ __forceinline__ void multiply_stage(const float* input_tile, int pitch_m,
                                                 const float* output_tile, int pitch_n, int lane) {
    const int g = lane >> 2, t = lane & 3;
    constexpr int kA = 2 * kMTiles, kB = kNTiles;
#pragma unroll
    for (int k_step = 0; k_step < 2; ++k_step) {
      const int position = k_step * 8 + t;
      uint32_t x_hi[2][kA], x_lo[2][kA], y_hi[2][kB], y_lo[2][kB];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        load_split(input_tile + (position + 4 * half) * pitch_m, g, x_hi[half], x_lo[half]);
        load_split(output_tile + (position + 4 * half) * pitch_n, g, y_hi[half], y_lo[half]);
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        // {row g, k t}, {row g + 8, k t}, {row g, k t + 4}, {row g + 8, k t + 4}.
        const uint32_t a_hi[4] = {x_hi[0][2 * mt], x_hi[0][2 * mt + 1], x_hi[1][2 * mt],
                                  x_hi[1][2 * mt + 1]};
        const uint32_t a_lo[4] = {x_lo[0][2 * mt], x_lo[0][2 * mt + 1], x_lo[1][2 * mt],
                                  x_lo[1][2 * mt + 1]};
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          const uint32_t b_hi[2] = {y_hi[0][nt], y_hi[1][nt]};
          const uint32_t b_lo[2] = {y_lo[0][nt], y_lo[1][nt]};
          mma_tf32_16x8x8(acc[mt][nt], a_lo, b_hi);
          mma_tf32_16x8x8(acc[mt][nt], a_hi, b_lo);
          mma_tf32_16x8x8(acc[mt][nt], a_hi, b_hi);
        }
      }
    }
  }
};

// A block: one warp along the input channels (its whole tile) and kWarpsN warps
// along the output channels.
template <int kMTiles, int kNTiles, int kWarpsAlongN>
struct WgradConfig {
  using WarpTile = WgradWarpTile<kMTiles, kNTiles>;
  static constexpr int kWarpsN = kWarpsAlongN;
  static constexpr int kThreads = 32 * kWarpsN;
  static constexpr int kBlockM = WarpTile::kChannelsM;            // input channels
  static constexpr int kBlockN = WarpTile::kChannelsN * kWarpsN;  // output channels
  // Rows padded by 8 floats: the fragment loads of 8 (16-byte) or 16 (8-byte)
  // lanes then hit distinct banks for every pitch used here (24, 40, 56, 72).
  static constexpr int kPitchM = kBlockM + 8;
  static constexpr int kPitchN = kBlockN + 8;
  static constexpr int kStageFloats = kWgradStagePositions * (kPitchM + kPitchN);
  static constexpr int kSharedBytes = 4 * kWgradPipelineStages * kStageFloats;
  static constexpr int kTileFloats = kBlockM * kBlockN;
  static constexpr int kChunksM = kBlockM / 4, kChunksN = kBlockN / 4;
  // Input rows: the stage's 16 x kChunksM chunks spread over the threads.
  static constexpr int kInputChunksPerThread = kWgradStagePositions * kChunksM / kThreads;
  // grad_output rows: kThreadsPerRow threads share a row, so each thread decodes
  // one position per stage and copies kOutputChunksPerThread of its chunks.
  static constexpr int kThreadsPerRow = kThreads / kWgradStagePositions;
  static constexpr int kOutputChunksPerThread = kChunksN / kThreadsPerRow;
  static_assert(kInputChunksPerThread * kThreads == kWgradStagePositions * kChunksM, "whole");
  static_assert(kOutputChunksPerThread * kThreadsPerRow == kChunksN, "whole");
};

// Grid: (splits, taps x channel blocks, groups). Block (split, tile) sums its
// stages and writes the partial tile to workspace[split][group][tap][block m]
// [block n] as [kBlockM][kBlockN].
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads)
    weight_gradient_kernel(const __grid_constant__ WgradProblem p,
                           const float* __restrict__ staged_input,
                           const float* __restrict__ staged_output, float* __restrict__ workspace) {
  extern __shared__ __align__(16) float shared[];
  const int tid = threadIdx.x, lane = tid & 31, warp_n = tid >> 5;
  const int split = blockIdx.x;
  const int group = blockIdx.z;
  const int channel_blocks = p.channel_blocks_m * p.channel_blocks_n;
  const int tap = blockIdx.y / channel_blocks;
  const int block_m = (blockIdx.y % channel_blocks) / p.channel_blocks_n;
  const int block_n = blockIdx.y % p.channel_blocks_n;
  const int kw = tap % p.kernel[2], kh = (tap / p.kernel[2]) % p.kernel[1];
  const int kd = tap / (p.kernel[2] * p.kernel[1]);

  const int64_t first_stage = static_cast<int64_t>(split) * p.stages_per_split;
  const int64_t last_stage = min(first_stage + p.stages_per_split, p.total_stages);
  // The last chunk of samples may leave trailing splits empty: they write zeros.
  const int stages = static_cast<int>(max(last_stage - first_stage, int64_t{0}));

  const float* input_base =
      staged_input + static_cast<int64_t>(group) * p.input_padded + block_m * Cfg::kBlockM;
  // This thread's grad_output row and first chunk; its chunks are kThreadsPerRow apart.
  const int output_row = tid / Cfg::kThreadsPerRow;
  const int output_chunk = tid % Cfg::kThreadsPerRow;
  const float* output_base = staged_output + static_cast<int64_t>(group) * p.output_padded +
                             block_n * Cfg::kBlockN + 4 * output_chunk + p.tap_origin +
                             kd * p.tap_stride[0] + kh * p.tap_stride[1] + kw * p.tap_stride[2];
  const uint32_t shared_base = shared_address(shared);
  const uint32_t output_destination =
      shared_base +
      4 * (kWgradStagePositions * Cfg::kPitchM + output_row * Cfg::kPitchN + 4 * output_chunk);
  constexpr uint32_t kStageBytes = 4 * Cfg::kStageFloats;

  // The next stage to load: its first position, also as (sample, offset in it).
  int64_t load_position = first_stage * kWgradStagePositions;
  int64_t load_sample = load_position / p.positions_per_sample;
  int load_offset = static_cast<int>(load_position - load_sample * p.positions_per_sample);

  auto load_stage = [&](int slot) {
    const uint32_t stage_bytes = slot * kStageBytes;
#pragma unroll
    for (int j = 0; j < Cfg::kInputChunksPerThread; ++j) {
      const int chunk = tid + j * Cfg::kThreads;
      const int row = chunk / Cfg::kChunksM, column = chunk % Cfg::kChunksM;
      const int64_t position = load_position + row;
      const bool inside = position < p.positions;
      cp_async_16_or_zero(
          shared_base + stage_bytes + 4 * (row * Cfg::kPitchM + 4 * column),
          input_base + (inside ? position : 0) * p.input_position_stride + 4 * column, inside);
    }
    const bool inside = load_position + output_row < p.positions;
    uint32_t rest = static_cast<uint32_t>(load_offset + output_row);
    const uint32_t carry = p.per_sample.divide(rest);
    rest -= carry * p.per_sample.divisor;
    const uint32_t line = p.width.divide(rest);
    const int iw = static_cast<int>(rest - line * p.width.divisor);
    const int id = static_cast<int>(p.height.divide(line));
    const int ih = static_cast<int>(line - id * p.height.divisor);
    const float* source = inside ? output_base + (load_sample + carry) * p.output_batch_stride +
                                       id * p.output_row_stride[0] + ih * p.output_row_stride[1] +
                                       iw * p.output_row_stride[2]
                                 : staged_output;
#pragma unroll
    for (int j = 0; j < Cfg::kOutputChunksPerThread; ++j) {
      cp_async_16_or_zero(output_destination + stage_bytes + 16 * j * Cfg::kThreadsPerRow,
                          source + (inside ? 4 * j * Cfg::kThreadsPerRow : 0), inside);
    }
    load_position += kWgradStagePositions;
    load_offset += kWgradStagePositions;
    while (load_offset >= p.positions_per_sample) {
      load_offset -= p.positions_per_sample;
      ++load_sample;
    }
  };

  using WarpTile = typename Cfg::WarpTile;
  constexpr int kMTiles = WarpTile::kChannelsM / 16, kNTiles = WarpTile::kChannelsN / 8;
  WarpTile tile;
  float total[kMTiles][kNTiles][4] = {};
  auto flush_chain = [&] {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          total[mt][nt][e] += tile.acc[mt][nt][e];
          tile.acc[mt][nt][e] = 0.f;
        }
  };
  auto compute_stage = [&](int slot) {
    const float* stage = shared + slot * Cfg::kStageFloats;
    tile.multiply_stage(stage, Cfg::kPitchM,
                        stage + kWgradStagePositions * Cfg::kPitchM + warp_n * WarpTile::kChannelsN,
                        Cfg::kPitchN, lane);
  };

  run_cp_async_pipeline<kWgradPipelineStages>(stages, load_stage, [&](int slot, int it) {
    compute_stage(slot);
    if ((it + 1) % kWgradChainStages == 0) flush_chain();
  });
  flush_chain();

  // Accumulator e of tile (mt, nt) is row g + 8 (e / 2), column 2t + e % 2.
  const int g = lane >> 2, t = lane & 3;
  const int64_t tile_index =
      ((static_cast<int64_t>(split) * p.groups + group) * p.taps + tap) * channel_blocks +
      block_m * p.channel_blocks_n + block_n;
  float* out = workspace + tile_index * Cfg::kTileFloats + warp_n * WarpTile::kChannelsN;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = WarpTile::row_channel(mt, g, e >> 1);
        const int column = WarpTile::column_channel(nt, 2 * t + (e & 1));
        out[row * Cfg::kBlockN + column] = total[mt][nt][e];
      }
    }
  }
}

// grad_weight (C_in, C_out / groups, taps) from the partial tiles: each thread
// sums one tile element over the splits in split order, in double, so the result
// does not depend on scheduling. Elements between folded groups are dropped.
__global__ void sum_weight_gradient_splits_kernel(const WgradSumShape s,
                                                  const float* __restrict__ workspace,
                                                  float* __restrict__ grad_weight) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < s.split_floats;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int column = static_cast<int>(e % s.block_n);
    const int row = static_cast<int>((e / s.block_n) % s.block_m);
    int64_t tile = e / (s.block_m * s.block_n);
    const int block_n = static_cast<int>(tile % s.channel_blocks_n);
    tile /= s.channel_blocks_n;
    const int block_m = static_cast<int>(tile % s.channel_blocks_m);
    tile /= s.channel_blocks_m;
    const int tap = static_cast<int>(tile % s.taps);
    const int64_t folded_group = tile / s.taps;
    const int ci = block_m * s.block_m + row, co = block_n * s.block_n + column;
    const int member = ci / s.cin_per_group;
    if (member >= s.fold || co / s.cout_per_group != member) continue;
    double sum = 0.0;
    for (int split = 0; split < s.splits; ++split) sum += workspace[split * s.split_floats + e];
    const int64_t input_channel =
        (folded_group * s.fold + member) * s.cin_per_group + ci % s.cin_per_group;
    grad_weight[(input_channel * s.cout_per_group + co % s.cout_per_group) * s.taps + tap] =
        static_cast<float>(sum);
  }
}

}  // namespace ct3d::cuda
