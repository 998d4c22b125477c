// Device code of the weight gradient (weight_gradient.h): a cp.async pipeline of
// 16-position stages, each gathering the staged input rows and the grad_output rows
// one tap away, and 3xTF32 products by 32 x 32 warp tiles; then a fixed-order sum
// of the splits' partial tiles.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/fast_divider.h"
#include "ops/cuda/engine/implicit_gemm_warp_tiles.cuh"
#include "ops/cuda/engine/ptx_helpers.cuh"

namespace ct3d::cuda {

constexpr int kWgradStagePositions = 16;  // the reduction (K) of one pipeline stage
constexpr int kWgradPipelineStages = 3;
// A stage's products go into a fresh partial (the tensor core truncates when it
// accumulates), partials into a running sum, and every kWgradInnerStages stages
// the running sum into the block's total: rounding then grows with the square
// root of 64 and of the stage count over 64, not of the whole split.
constexpr int kWgradInnerStages = 64;

// Everything the kernel needs; host side in weight_gradient_launch.cu.
struct WgradProblem {
  int64_t positions;         // K in all: batch x input positions
  int64_t total_stages;      // ceil(positions / 16)
  int stages_per_split;
  int positions_per_sample;  // D * H * W (< 2^31 - 16)
  FastDivider per_sample, width, height;
  // Staged input: one position holds groups x input_padded floats.
  int64_t input_position_stride;
  int input_padded;
  // Staged grad_output: sample and per-index strides (floats), the stride-scaled
  // strides of an input index step, and the offset of a tap's first row.
  int64_t output_batch_stride, output_row_stride[3], output_index_stride[3];
  int output_padded;
  int kernel[3];
  int64_t tap_stride[3];  // output_index_stride * dilation
  int64_t tap_origin;     // sum of (halo_low - padding) * output_index_stride
  int taps, channel_blocks_m, channel_blocks_n, groups;
};

template <int kWarpsAlongM, int kWarpsAlongN>
struct WgradConfig {
  static constexpr int kWarpsM = kWarpsAlongM, kWarpsN = kWarpsAlongN;
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kBlockM = 32 * kWarpsM;  // input channels
  static constexpr int kBlockN = 32 * kWarpsN;  // output channels
  // Rows padded by 8 floats: the fragment loads (8 lanes: 4 positions x 2 column
  // quads) then hit 32 distinct banks.
  static constexpr int kPitchM = kBlockM + 8;
  static constexpr int kPitchN = kBlockN + 8;
  static constexpr int kStageFloats = kWgradStagePositions * (kPitchM + kPitchN);
  static constexpr int kSharedBytes = 4 * kWgradPipelineStages * kStageFloats;
  static constexpr int kTileFloats = kBlockM * kBlockN;
  // 16-byte chunks per stage row and the rows one pass of the block covers.
  static constexpr int kChunksM = kBlockM / 4, kChunksN = kBlockN / 4;
  static constexpr int kRowsPerPassM = kThreads / kChunksM;  // 4 * kWarpsN
  static constexpr int kRowsPerPassN = kThreads / kChunksN;  // 4 * kWarpsM
  static_assert(kWgradStagePositions % kRowsPerPassM == 0, "whole passes");
  static_assert(kWgradStagePositions % kRowsPerPassN == 0, "whole passes");
};

// One 32 x 32 warp tile: 2 input-channel mma tiles x 4 output-channel tiles. Both
// operands sit in shared memory as [position][channel]; a lane (g, t) reads four
// consecutive channels 4g .. 4g + 3 at positions t and t + 4 with two 16-byte
// loads per operand and k-step. Channel 4g + j is row g (j = 0, 2) or g + 8
// (j = 1, 3) of m-tile j / 2, and column g of n-tile j: the permutations only
// change where each accumulator is stored.
struct WgradWarpTile {
  float acc[2][4][4] = {};

  __device__ __forceinline__ void multiply_stage(const float* input_tile, int pitch_m,
                                                 const float* output_tile, int pitch_n,
                                                 int lane) {
    const int g = lane >> 2, t = lane & 3;
    float partial[2][4][4] = {};
#pragma unroll
    for (int k_step = 0; k_step < 2; ++k_step) {
      const int position = k_step * 8 + t;
      uint32_t x_hi[2][4], x_lo[2][4], y_hi[2][4], y_lo[2][4];
      split_tf32(*reinterpret_cast<const float4*>(input_tile + position * pitch_m + 4 * g),
                 x_hi[0], x_lo[0]);
      split_tf32(*reinterpret_cast<const float4*>(input_tile + (position + 4) * pitch_m + 4 * g),
                 x_hi[1], x_lo[1]);
      split_tf32(*reinterpret_cast<const float4*>(output_tile + position * pitch_n + 4 * g),
                 y_hi[0], y_lo[0]);
      split_tf32(*reinterpret_cast<const float4*>(output_tile + (position + 4) * pitch_n + 4 * g),
                 y_hi[1], y_lo[1]);
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        // {row g, k t}, {row g + 8, k t}, {row g, k t + 4}, {row g + 8, k t + 4}.
        const uint32_t a_hi[4] = {x_hi[0][2 * mt], x_hi[0][2 * mt + 1], x_hi[1][2 * mt],
                                  x_hi[1][2 * mt + 1]};
        const uint32_t a_lo[4] = {x_lo[0][2 * mt], x_lo[0][2 * mt + 1], x_lo[1][2 * mt],
                                  x_lo[1][2 * mt + 1]};
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          const uint32_t b_hi[2] = {y_hi[0][nt], y_hi[1][nt]};
          const uint32_t b_lo[2] = {y_lo[0][nt], y_lo[1][nt]};
          mma_tf32_16x8x8(partial[mt][nt], a_lo, b_hi);
          mma_tf32_16x8x8(partial[mt][nt], a_hi, b_lo);
          mma_tf32_16x8x8(partial[mt][nt], a_hi, b_hi);
        }
      }
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mt][nt][e] += partial[mt][nt][e];
  }
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
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
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
  const int stages = static_cast<int>(last_stage - first_stage);

  // Each thread copies one 16-byte column chunk of a few rows of each operand.
  const int chunk_m = tid % Cfg::kChunksM, row_m = tid / Cfg::kChunksM;
  const int chunk_n = tid % Cfg::kChunksN, row_n = tid / Cfg::kChunksN;
  const float* input_base = staged_input + static_cast<int64_t>(group) * p.input_padded +
                            block_m * Cfg::kBlockM + 4 * chunk_m;
  const float* output_base = staged_output + static_cast<int64_t>(group) * p.output_padded +
                             block_n * Cfg::kBlockN + 4 * chunk_n + p.tap_origin +
                             kd * p.tap_stride[0] + kh * p.tap_stride[1] + kw * p.tap_stride[2];
  const uint32_t shared_base = shared_address(shared);
  const uint32_t input_destination = shared_base + 4 * (row_m * Cfg::kPitchM + 4 * chunk_m);
  const uint32_t output_destination =
      shared_base + 4 * (kWgradStagePositions * Cfg::kPitchM + row_n * Cfg::kPitchN + 4 * chunk_n);
  constexpr uint32_t kStageBytes = 4 * Cfg::kStageFloats;

  // The next stage to load: its first position, also as (sample, offset in it).
  int64_t load_position = first_stage * kWgradStagePositions;
  int64_t load_sample = load_position / p.positions_per_sample;
  int load_offset = static_cast<int>(load_position - load_sample * p.positions_per_sample);

  auto load_stage = [&](int slot) {
    const uint32_t stage_bytes = slot * kStageBytes;
#pragma unroll
    for (int pass = 0; pass < kWgradStagePositions / Cfg::kRowsPerPassM; ++pass) {
      const int r = row_m + pass * Cfg::kRowsPerPassM;
      const int64_t position = load_position + r;
      const bool inside = position < p.positions;
      cp_async_16_or_zero(input_destination + stage_bytes + 4 * (r - row_m) * Cfg::kPitchM,
                          input_base + (inside ? position : 0) * p.input_position_stride, inside);
    }
#pragma unroll
    for (int pass = 0; pass < kWgradStagePositions / Cfg::kRowsPerPassN; ++pass) {
      const int r = row_n + pass * Cfg::kRowsPerPassN;
      const bool inside = load_position + r < p.positions;
      uint32_t rest = static_cast<uint32_t>(load_offset + r);
      const uint32_t carry = p.per_sample.divide(rest);
      rest -= carry * p.per_sample.divisor;
      const uint32_t line = p.width.divide(rest);
      const int iw = static_cast<int>(rest - line * p.width.divisor);
      const int id = static_cast<int>(p.height.divide(line));
      const int ih = static_cast<int>(line - id * p.height.divisor);
      const int64_t row = (load_sample + carry) * p.output_batch_stride +
                          id * p.output_row_stride[0] + ih * p.output_row_stride[1] +
                          iw * p.output_row_stride[2];
      cp_async_16_or_zero(output_destination + stage_bytes + 4 * (r - row_n) * Cfg::kPitchN,
                          inside ? output_base + row : staged_output, inside);
    }
    load_position += kWgradStagePositions;
    load_offset += kWgradStagePositions;
    while (load_offset >= p.positions_per_sample) {
      load_offset -= p.positions_per_sample;
      ++load_sample;
    }
  };

  const int warp_m = warp % Cfg::kWarpsM, warp_n = warp / Cfg::kWarpsM;
  WgradWarpTile tile;
  float total[2][4][4] = {};
  auto compute_stage = [&](int slot) {
    const float* stage = shared + slot * Cfg::kStageFloats;
    tile.multiply_stage(stage + warp_m * 32, Cfg::kPitchM,
                        stage + kWgradStagePositions * Cfg::kPitchM + warp_n * 32, Cfg::kPitchN,
                        lane);
  };

#pragma unroll
  for (int s = 0; s < kWgradPipelineStages - 1; ++s) {
    if (s < stages) load_stage(s);
    cp_async_commit();
  }
  int load_slot = kWgradPipelineStages - 1, compute_slot = 0;
  for (int it = 0; it < stages; ++it) {
    cp_async_wait<kWgradPipelineStages - 2>();
    __syncthreads();  // stage it is visible, and every warp is done with stage it-1
    if (it + kWgradPipelineStages - 1 < stages) load_stage(load_slot);
    cp_async_commit();
    compute_stage(compute_slot);
    if ((it + 1) % kWgradInnerStages == 0) {
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            total[mt][nt][e] += tile.acc[mt][nt][e];
            tile.acc[mt][nt][e] = 0.f;
          }
    }
    load_slot = load_slot == kWgradPipelineStages - 1 ? 0 : load_slot + 1;
    compute_slot = compute_slot == kWgradPipelineStages - 1 ? 0 : compute_slot + 1;
  }
  cp_async_wait<0>();

  // Accumulator e of tile (mt, nt): row g + 8 (e / 2) of m-tile mt is input
  // channel 4g + 2 mt + e / 2; column 2t + e % 2 of n-tile nt is output channel
  // 4 (2t + e % 2) + nt. So for e even the four n-tiles are channels 8t .. 8t + 3,
  // for e odd 8t + 4 .. 8t + 7: two 16-byte stores per row.
  const int g = lane >> 2, t = lane & 3;
  const int64_t tile_index =
      ((static_cast<int64_t>(split) * p.groups + group) * p.taps + tap) * channel_blocks +
      block_m * p.channel_blocks_n + block_n;
  float* out = workspace + tile_index * Cfg::kTileFloats;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp_m * 32 + 4 * g + 2 * mt + half;
      float* destination = out + row * Cfg::kBlockN + warp_n * 32 + 8 * t;
#pragma unroll
      for (int odd = 0; odd < 2; ++odd) {
        const int e = 2 * half + odd;
        float4 v;
        v.x = total[mt][0][e] + tile.acc[mt][0][e];
        v.y = total[mt][1][e] + tile.acc[mt][1][e];
        v.z = total[mt][2][e] + tile.acc[mt][2][e];
        v.w = total[mt][3][e] + tile.acc[mt][3][e];
        *reinterpret_cast<float4*>(destination + 4 * odd) = v;
      }
    }
  }
}

// Where the partial tiles go in grad_weight.
struct WgradSumShape {
  int64_t split_floats;  // one split's tiles: groups x taps x channel blocks x tile
  int splits, taps, channel_blocks_m, channel_blocks_n;
  int fold, cin_per_group, cout_per_group;  // the convolution's groups
};

// grad_weight (C_in, C_out / groups, taps) from the partial tiles: each thread
// sums one tile element over the splits in split order, in double, so the result
// does not depend on scheduling. Elements between folded groups are dropped.
template <int kBlockM, int kBlockN>
__global__ void sum_weight_gradient_splits_kernel(const WgradSumShape s,
                                                  const float* __restrict__ workspace,
                                                  float* __restrict__ grad_weight) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < s.split_floats;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int column = static_cast<int>(e % kBlockN);
    const int row = static_cast<int>((e / kBlockN) % kBlockM);
    int64_t tile = e / (kBlockM * kBlockN);
    const int block_n = static_cast<int>(tile % s.channel_blocks_n);
    tile /= s.channel_blocks_n;
    const int block_m = static_cast<int>(tile % s.channel_blocks_m);
    tile /= s.channel_blocks_m;
    const int tap = static_cast<int>(tile % s.taps);
    const int64_t folded_group = tile / s.taps;
    const int ci = block_m * kBlockM + row, co = block_n * kBlockN + column;
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
