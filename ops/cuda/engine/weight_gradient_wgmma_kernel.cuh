// Device code of the weight gradient on Hopper's wgmma (sm_90a), 3xTF32.
//
// GEMM view: M = (tap, output channel) rows, N = the block's input channels, K =
// input positions, 32 per stage (one width tile of one (sample, d, h) line). Every
// tap's rows read the same input positions, so one stage's B (the input, split into
// TF32 hi and lo) serves all the block's rows; their A (grad_output) are shifted reads
// of the grad_output line segments of the block's (depth tap, height tap) pairs,
// copied once per stage whatever the number of width taps.
//
// Block: warpgroup 0 loads, warpgroups 1 and 2 compute kMTiles m64 tiles each.
// - The producers copy each pair's segment (the staged grad_output rows the stage's
//   32 positions reach with any width tap) with cp.async, and load the stage's input
//   from the unstaged NCDHW tensor (one stage ahead, in registers), split it and
//   store hi and lo as wgmma's K-major core matrices; both complete on the slot's
//   `full` barrier (256 arrivals: 128 cp.async, 128 after the stores and a proxy fence).
// - The compute threads load their A values per k-step (rows g, g + 8; positions t,
//   t + 4), split them in registers and issue lo*hi, hi*lo, hi*hi per m-tile; the
//   accumulator chain is added into a float32 total every 4 stages (128 products).
// Each block writes its partial tile for its K range (a split); the fixed-order sum
// of weight_gradient_kernel.cuh adds the splits.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/fast_divider.h"
#include "ops/cuda/engine/hopper_ptx.cuh"
#include "ops/cuda/engine/implicit_gemm_warp_tiles.cuh"
#include "ops/cuda/engine/ptx_helpers.cuh"
#include "ops/cuda/engine/wgmma_instructions.cuh"
#include "ops/cuda/engine/wgmma_split_products.cuh"

namespace ct3d::cuda {

constexpr int kWgradTilePositions = 32;  // K of one stage
constexpr int kWgradWgmmaFlushStages = 128 / kWgradTilePositions;
constexpr int kWgradMaxSlots = 8;
constexpr int kWgradMaxPairs = 16;

// Everything the kernel needs; host side in weight_gradient_wgmma_launch.cu.
struct WgradWgmmaProblem {
  // The reduction walk of one chunk of samples: stage = (sample, d, h, width tile).
  int64_t stages;
  int stages_per_split;
  int width_tiles, depth, height, width;
  // The input, NCDHW, from the chunk's first sample.
  int64_t input_sample_stride, input_channel_stride;
  int input_group_channels;  // channels of a folded group
  // The staged grad_output: per dimension the offset of one input index step
  // (stride x staged stride); per pair the offset of its depth and height taps;
  // tap_origin the offset of tap 0 at input index 0 (halo included).
  int64_t output_batch_stride, output_row_stride[3], tap_origin;
  int64_t depth_tap_stride, height_tap_stride;
  int column_stride;          // one staged width index: all groups' padded channels
  int output_group_channels;  // padded channels of a group in the staged copy
  FastDivider row_pieces;     // 16-byte pieces of a segment row
  FastDivider segment_rows;   // rows of a pair's segment
  int kernel_h, kernel_w, stride_w, dilation_w;
  // M rows: (tap, output channel) for the folded group's real output channels.
  int output_channels, total_rows;
  int rows_per_block, row_blocks, channel_blocks;
  // Shared memory: per slot the B hi and lo tiles, then max_pairs segments.
  int pitch, pair_floats, stage_floats, slots;
  int groups;
};

// A stage's place in the walk.
struct WgradTile {
  int sample, d, h, width_tile;

  __device__ __forceinline__ void advance(const WgradWgmmaProblem& p) {
    if (++width_tile < p.width_tiles) return;
    width_tile = 0;
    if (++h < p.height) return;
    h = 0;
    if (++d < p.depth) return;
    d = 0;
    ++sample;
  }
};

__device__ __forceinline__ WgradTile wgrad_tile_at(const WgradWgmmaProblem& p, int64_t stage) {
  WgradTile tile;
  tile.width_tile = static_cast<int>(stage % p.width_tiles);
  stage /= p.width_tiles;
  tile.h = static_cast<int>(stage % p.height);
  stage /= p.height;
  tile.d = static_cast<int>(stage % p.depth);
  tile.sample = static_cast<int>(stage / p.depth);
  return tile;
}

template <int kChannels, int kMTilesPerWarpgroup, bool kExact>
struct WgradWgmmaConfig {
  static constexpr int kN = kChannels;  // input channels of a block
  static constexpr int kMTiles = kMTilesPerWarpgroup;
  static constexpr bool kExactOperands = kExact;
  static constexpr int kRows = 2 * 64 * kMTiles;
  static constexpr int kThreads = 384;
  static constexpr int kComputeThreads = 256;
  // B: kN channels x 32 positions = 8 kN pieces of 16 bytes, over 128 producers.
  static constexpr int kBPieces = kN * 8;
  static constexpr int kBPiecesPerThread = (kBPieces + 127) / 128;
  static constexpr int kBFloats = kWgradTilePositions * kN;  // hi (or lo)
  // The block starts with 168 registers a thread (64 K / 384); setmaxnreg.inc waits
  // until the producers' decrease has freed what it asks for, so 128 x (168 - 128) must
  // cover 256 x (184 - 168). ptxas holds the compute code to 168 anyway; the producers
  // keep their B values of two stages without spilling in 128.
  static constexpr int kProducerRegisters = 128;
  static constexpr int kComputeRegisters = 184;
  static_assert(128 * (168 - kProducerRegisters) >= 256 * (kComputeRegisters - 168),
                "registers the producers free");
  static_assert(kN % 8 == 0 && kN <= 64, "wgmma N");
};

__device__ __forceinline__ void fence_proxy_async_shared() {
  CT3D_SM90A(asm volatile("fence.proxy.async.shared::cta;\n" :: : "memory");)
}

// Grid: (splits, row blocks x channel blocks, groups). Block (split, rows, channels)
// writes, for each of its rows' taps, the tile workspace[split][group][tap][channel
// block] of kN input channels x output_channels (the sum kernel's tile layout with
// kBlockM = kN, kBlockN = output_channels).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    weight_gradient_wgmma_kernel(const __grid_constant__ WgradWgmmaProblem p,
                                 const float* __restrict__ input,
                                 const float* __restrict__ staged_output,
                                 float* __restrict__ workspace) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles;
  using Mma = Wgmma<kN>;
  constexpr int kAccumulators = Mma::kAccumulators;
  extern __shared__ __align__(128) float shared[];
  __shared__ __align__(8) uint64_t barriers[2 * kWgradMaxSlots];
  __shared__ int64_t pair_offset[kWgradMaxPairs];
  const int tid = threadIdx.x;
  const int split = blockIdx.x;
  const int row_block = blockIdx.y % p.row_blocks;
  const int channel_block = blockIdx.y / p.row_blocks;
  const int channel0 = channel_block * kN;
  const int group = blockIdx.z;
  const int first_row = row_block * p.rows_per_block;
  const int last_row = min(first_row + p.rows_per_block, p.total_rows) - 1;
  const int taps_w = p.kernel_w;
  const int first_pair = first_row / p.output_channels / taps_w;
  const int pairs = last_row / p.output_channels / taps_w - first_pair + 1;
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[kWgradMaxSlots]);
  if (tid < pairs) {
    const int pair = first_pair + tid;
    pair_offset[tid] =
        (pair / p.kernel_h) * p.depth_tap_stride + (pair % p.kernel_h) * p.height_tap_stride;
  }
  if (tid == 0) {
    for (int s = 0; s < p.slots; ++s) {
      mbarrier_init(full0 + 8 * s, 256);
      mbarrier_init(empty0 + 8 * s, Cfg::kComputeThreads);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  const int64_t first_stage = static_cast<int64_t>(split) * p.stages_per_split;
  const int64_t last_stage = min(first_stage + p.stages_per_split, p.stages);
  const int stages = static_cast<int>(max(last_stage - first_stage, int64_t{0}));

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    if (stages == 0) return;
    // B pieces: piece q is 4 positions of channel 8 (q >> 6) + (q & 7); lanes
    // 0..7 of a store phase take 8 channels (distinct banks), 8 lanes of a load
    // cover 64 contiguous bytes of a channel's line.
    int b_offset[Cfg::kBPiecesPerThread];
    int64_t b_source[Cfg::kBPiecesPerThread];
    int b_position[Cfg::kBPiecesPerThread];
    bool b_channel_real[Cfg::kBPiecesPerThread];
#pragma unroll
    for (int j = 0; j < Cfg::kBPiecesPerThread; ++j) {
      const int q = tid + 128 * j;
      const int in8 = q & 7, quad = ((q >> 3) & 3) | (((q >> 5) & 1) << 2), group8 = q >> 6;
      const int channel = 8 * group8 + in8;
      const int s = quad >> 1, half = quad & 1;
      b_offset[j] = ((s * (kN / 8) + group8) * 2 + half) * 32 + in8 * 4;
      b_position[j] = 4 * quad;
      b_channel_real[j] = q < Cfg::kBPieces && channel0 + channel < p.input_group_channels;
      b_source[j] = (static_cast<int64_t>(group) * p.input_group_channels + channel0 +
                     (b_channel_real[j] ? channel : 0)) *
                        p.input_channel_stride +
                    4 * quad;
    }
    using BValues = float4[Cfg::kBPiecesPerThread];
    auto load_b = [&](const WgradTile& tile, BValues& values) {
      const int width0 = tile.width_tile * kWgradTilePositions;
      const int64_t line = static_cast<int64_t>(tile.sample) * p.input_sample_stride +
                           (static_cast<int64_t>(tile.d) * p.height + tile.h) * p.width + width0;
#pragma unroll
      for (int j = 0; j < Cfg::kBPiecesPerThread; ++j) {
        values[j] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (b_channel_real[j] && width0 + b_position[j] < p.width) {
          values[j] = __ldg(reinterpret_cast<const float4*>(input + line + b_source[j]));
        }
      }
    };
    auto store_b = [&](int slot, const BValues& values) {
      float* b_hi = shared + slot * p.stage_floats;
#pragma unroll
      for (int j = 0; j < Cfg::kBPiecesPerThread; ++j) {
        if (tid + 128 * j < Cfg::kBPieces) {
          uint32_t hi[4], lo[4];
          split_tf32(values[j], hi, lo);
          *reinterpret_cast<uint4*>(b_hi + b_offset[j]) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
          if constexpr (!Cfg::kExactOperands) {  // exact operands: no lo products
            *reinterpret_cast<uint4*>(b_hi + Cfg::kBFloats + b_offset[j]) =
                make_uint4(lo[0], lo[1], lo[2], lo[3]);
          }
        }
      }
    };
    const int segment_rows = static_cast<int>(p.segment_rows.divisor);
    const int pieces = pairs * segment_rows * static_cast<int>(p.row_pieces.divisor);
    auto load_segments = [&](int slot, const WgradTile& tile) {
      const int width0 = tile.width_tile * kWgradTilePositions;
      const int positions = min(kWgradTilePositions, p.width - width0);
      const int rows_needed = (positions - 1) * p.stride_w + (taps_w - 1) * p.dilation_w + 1;
      const float* tile_source = staged_output + tile.sample * p.output_batch_stride +
                                 p.tap_origin + tile.d * p.output_row_stride[0] +
                                 tile.h * p.output_row_stride[1] + width0 * p.output_row_stride[2] +
                                 group * p.output_group_channels;
      const uint32_t segments = shared_base + 4 * (slot * p.stage_floats + 2 * Cfg::kBFloats);
      for (int q = tid; q < pieces; q += 128) {
        const int pair_row = static_cast<int>(p.row_pieces.divide(q));
        const int piece = q - pair_row * static_cast<int>(p.row_pieces.divisor);
        const int pair = static_cast<int>(p.segment_rows.divide(pair_row));
        const int row = pair_row - pair * segment_rows;
        const bool inside = row < rows_needed;
        const float* source = tile_source + pair_offset[pair] +
                              static_cast<int64_t>(inside ? row : 0) * p.column_stride + 4 * piece;
        cp_async_16_or_zero(segments + 4 * (pair_row * p.pitch + 4 * piece), source, inside);
      }
    };
    WgradTile tile = wgrad_tile_at(p, first_stage);
    WgradTile next = tile;
    BValues b_values[2];
    load_b(next, b_values[0]);
    next.advance(p);
    int slot = 0, phase = 0;
    auto step = [&](int it, BValues& mine, BValues& following) {
      mbarrier_wait(empty0 + 8 * slot, phase ^ 1);
      load_segments(slot, tile);
      cp_async_arrive(full0 + 8 * slot);
      if (it + 1 < stages) {
        load_b(next, following);
        next.advance(p);
      }
      store_b(slot, mine);
      fence_proxy_async_shared();
      mbarrier_arrive(full0 + 8 * slot);
      tile.advance(p);
      if (++slot == p.slots) {
        slot = 0;
        phase ^= 1;
      }
    };
    int it = 0;
    for (; it + 1 < stages; it += 2) {
      step(it, b_values[0], b_values[1]);
      step(it + 1, b_values[1], b_values[0]);
    }
    if (it < stages) step(it, b_values[0], b_values[1]);
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  const int ctid = tid - 128, t = ctid & 3;
  const int row_base = first_row + compute_row_base<kMTiles>(ctid);
  // This thread's rows (g and g + 8 of each m-tile) as offsets into a stage's
  // segments: pair, width tap and output channel; rows past the end read the last.
  int row_offset[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = min(row_base + 64 * mt + 8 * half, p.total_rows - 1);
      const int tap = row / p.output_channels, channel = row - tap * p.output_channels;
      const int pair = tap / taps_w, kw = tap - pair * taps_w;
      row_offset[mt][half] =
          (pair - first_pair) * p.pair_floats + kw * p.dilation_w * p.pitch + channel;
    }
  const int position_step = p.stride_w * p.pitch;
  const int lane_offset = t * position_step;

  float acc[kMTiles][kAccumulators], total[kMTiles][kAccumulators];
  zero_chains(acc, total);

  // A of one k-step: {row g, k t}, {row g + 8, k t}, {row g, k t + 4}, {row g + 8, k t + 4}.
  struct Fragments {
    uint32_t hi[kMTiles][4], lo[kMTiles][4];
  };
  auto k_step = [&](int slot, int s, Fragments& f) {
    const float* segments =
        shared + slot * p.stage_floats + 2 * Cfg::kBFloats + 8 * s * position_step + lane_offset;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const float v[4] = {segments[row_offset[mt][0]], segments[row_offset[mt][1]],
                          segments[row_offset[mt][0] + 4 * position_step],
                          segments[row_offset[mt][1] + 4 * position_step]};
#pragma unroll
      for (int i = 0; i < 4; ++i) split_tf32(v[i], f.hi[mt][i], f.lo[mt][i]);
    }
    fence_accumulators(acc);
    wgmma_fence();
    const uint32_t b_hi = shared_base + 4 * slot * p.stage_floats;
    const uint64_t d_hi = chunk_weight_descriptor<kN>(b_hi, s);
    const uint64_t d_lo = chunk_weight_descriptor<kN>(b_hi + 4 * Cfg::kBFloats, s);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      split_products<kN, Cfg::kExactOperands>(acc[mt], f.hi[mt], f.lo[mt], d_hi, d_lo);
    }
    wgmma_commit();
  };
  auto hold = [](Fragments& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      fence_registers(f.hi[mt]);
      if constexpr (!Cfg::kExactOperands) fence_registers(f.lo[mt]);
    }
  };
  // Two fragment sets: a k-step's loads overlap the previous k-step's wgmmas.
  Fragments fragments[2];
  int slot = 0, phase = 0, previous_slot = p.slots - 1;
  for (int it = 0; it < stages; ++it) {
    mbarrier_wait(full0 + 8 * slot, phase);
#pragma unroll
    for (int s = 0; s < kWgradTilePositions / 8; ++s) {
      k_step(slot, s, fragments[s & 1]);
      wgmma_wait<1>();  // k-step s - 1 is done with its fragments (and slot)
      hold(fragments[(s + 1) & 1]);
      if (s == 0 && it > 0 && it % kWgradWgmmaFlushStages != 0) {
        mbarrier_arrive(empty0 + 8 * previous_slot);
      }
    }
    if ((it + 1) % kWgradWgmmaFlushStages == 0) {
      wgmma_wait<0>();
      fence_accumulators(acc);
      hold(fragments[0]);
      hold(fragments[1]);
      mbarrier_arrive(empty0 + 8 * slot);
      add_chain(total, acc);
    }
    previous_slot = slot;
    if (++slot == p.slots) {
      slot = 0;
      phase ^= 1;
    }
  }
  wgmma_wait<0>();
  fence_accumulators(acc);
  add_chain(total, acc);

  // Accumulator 4j + e of m-tile mt: row g + 8 (e / 2), input channel 8j + 2t + e % 2.
  const int taps = p.total_rows / p.output_channels;
  const int64_t split_tiles = (static_cast<int64_t>(split) * p.groups + group) * taps;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row_base + 64 * mt + 8 * half;
      if (row > last_row) continue;
      const int tap = row / p.output_channels, channel = row - tap * p.output_channels;
      float* out =
          workspace +
          ((split_tiles + tap) * p.channel_blocks + channel_block) * kN * p.output_channels +
          channel;
#pragma unroll
      for (int j = 0; j < kN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          out[(8 * j + 2 * t + e) * p.output_channels] = total[mt][4 * j + 2 * half + e];
        }
    }
#endif
}

}  // namespace ct3d::cuda
