// Device code of the weight gradient on Hopper's wgmma (sm_90a): 3xTF32 for float32,
// one product for float16 and bfloat16 (weight_gradient_operands.cuh; the text below
// tells the float32 form, the half form differs where that header says).
//
// GEMM view: M = (tap, output channel) rows, N = the block's input channels, K =
// input positions, 32 per stage (one width tile of one (sample, d, h) line; float32
// also 16, for lines of at most 16 and segments too large for 3 slots of 32). Every
// tap's rows read the same input positions, so one stage's B (the input, split into
// TF32 hi and lo) serves all the block's rows; their A (grad_output) are shifted reads
// of the grad_output line segments of the block's (depth tap, height tap) pairs,
// copied once per stage whatever the number of width taps.
//
// Block: warpgroup 0 loads, warpgroups 1 and 2 compute kMTiles m64 tiles each.
// - The producers copy each pair's segment (the staged grad_output rows the stage's
//   32 positions reach with any width tap), as one bulk copy where grad_output is
//   staged at the segments' pitch (bulk_segments) else in cp.async pieces, and load the
//   stage's input from the unstaged NCDHW tensor (kBStagesAhead stages ahead, in
//   registers), split it and store hi and lo as wgmma's K-major core matrices; both
//   complete on the slot's `full` barrier (128 arrivals after the stores and a proxy
//   fence, and either 128 cp.async arrivals or the bulk copies' bytes).
// - The compute threads load their A values per k-step (wgmma rows g, g + 8, which are
//   the block's adjacent rows 2g, 2g + 1: one 8-byte load a position; positions t,
//   t + 4), split them in registers and issue lo*hi, hi*lo, hi*hi per m-tile; the
//   accumulator chain is added into a float32 total every 128 products (4 stages of
//   32 positions).
// Each block writes its partial tile for its K range (a split); the fixed-order sum
// of weight_gradient_kernel.cuh adds the splits.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_warp_tiles.cuh"
#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/weight_gradient/weight_gradient_operands.cuh"
#include "ops/cuda/engine/weight_gradient/wgmma_weight_gradient_problem.h"

namespace ct3d::cuda {

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

template <int kChannels, int kMTilesPerWarpgroup, class Operands,
          int kStagePositions = kWgradTilePositions>
struct WgradWgmmaConfig {
  using Ops = Operands;  // weight_gradient_operands.cuh
  using Element = typename Ops::Element;
  static constexpr int kN = kChannels;  // input channels of a block
  static constexpr int kMTiles = kMTilesPerWarpgroup;
  static constexpr int kPositions = kStagePositions;  // K of one stage
  static constexpr int kRows = 2 * 64 * kMTiles;
  static constexpr int kThreads = 384;
  static constexpr int kComputeThreads = 256;
  // B: kN channels x kPositions positions in pieces of 16 bytes, over 128 producers.
  static constexpr int kPieceRuns = kPositions / Ops::kPieceElements;  // per channel
  static constexpr int kBPieces = kN * kPieceRuns;
  static constexpr int kBPiecesPerThread = (kBPieces + 127) / 128;
  static constexpr int kBPartBytes = kPositions * kN * int{sizeof(Element)};
  static constexpr int kBRegionBytes = Ops::kBParts * kBPartBytes;
  static constexpr int kKSteps = kPositions / Ops::kStepPositions;
  // Stages between chain flushes (1 where the chain never flushes: unused there).
  static constexpr int kFlushStages = Ops::kChainFlushes ? Ops::kFlushPositions / kPositions : 1;
  // Two fragment sets alternate over the k-steps, in the same order every stage.
  static_assert(kKSteps % 2 == 0, "k-steps of a stage");
  // Stages whose B the producers have loaded (in registers) ahead of the one they store:
  // a stage's loads get that many stages' time to arrive. Two rather than one gained 3-9 %
  // where lines are short (a 48-wide line is two stages) and left L1-68 level (KERNEL_LOG
  // "B loaded two stages ahead").
  static constexpr int kBStagesAhead = 2;
  // The block starts with 168 registers a thread (64 K / 384); setmaxnreg.inc waits
  // until the producers' decrease has freed what it asks for, so 128 x (168 - 128) must
  // cover 256 x (184 - 168). ptxas allocates the compute code up to that count (the
  // 64-channel float32 instance uses 174, nvdisasm); the producers keep their B values
  // of three stages (kBStagesAhead + 1) without spilling in 128.
  static constexpr int kProducerRegisters = 128;
  static constexpr int kComputeRegisters = 184;
  static_assert(128 * (168 - kProducerRegisters) >= 256 * (kComputeRegisters - 168),
                "registers the producers free");
  static_assert(kN % 8 == 0 && kN <= 64, "wgmma N");
};

__device__ __forceinline__ void fence_proxy_async_shared() {
  CT3D_SM90A(asm volatile("fence.proxy.async.shared::cta;\n" :: : "memory");)
}

// One block's place in the grid and its shared memory, as the kernel sets them up for
// its producer and compute warpgroups.
struct WgradBlock {
  int split, group, channel_block, channel0;
  int first_row, last_row;  // the block's rows of M
  int first_pair, pairs;    // the (depth tap, height tap) pairs its rows span
  int64_t first_stage;      // its split's first stage, and how many it walks
  int stages;
  bool bulk_segments;                   // segments by bulk copies, not cp.async pieces
  char* shared;                         // the slots: per slot B, then the pairs' segments
  uint32_t shared_base, full0, empty0;  // shared addresses: the slots, their barriers
  const int64_t* pair_offset;           // each pair's offset in the staged grad_output
};

// Warpgroup 0, the producers: stage after stage, B (the input, kBStagesAhead stages
// ahead in registers, split and stored as K-major core matrices) and the pairs'
// grad_output segments (bulk copies or cp.async pieces) into the next free slot.
template <class Cfg>
__device__ __forceinline__ void produce_wgrad_stages(
    const WgradWgmmaProblem& p, const WgradBlock& block, int tid,
    const typename Cfg::Element* __restrict__ input,
    const typename Cfg::Element* __restrict__ staged_output) {
  using Ops = typename Cfg::Ops;
  using Element = typename Cfg::Element;
  constexpr int kN = Cfg::kN, kPositions = Cfg::kPositions;
  constexpr int kElementBytes = sizeof(Element);
  const int group = block.group, channel0 = block.channel0, pairs = block.pairs;
  const int stages = block.stages, taps_w = p.kernel_w;
  const int64_t first_stage = block.first_stage;
  const bool bulk_segments = block.bulk_segments;
  char* const shared = block.shared;
  const uint32_t shared_base = block.shared_base, full0 = block.full0, empty0 = block.empty0;
  const int64_t* const pair_offset = block.pair_offset;
  // B pieces: piece q is run (q >> 3) % kPieceRuns (16 bytes of positions) of channel
  // 8 (q / (8 kPieceRuns)) + (q & 7); lanes 0..7 of a store phase take 8 channels
  // (distinct banks), the lanes of a load with the same q & 7 cover 64 contiguous
  // bytes of a channel's line.
  int b_offset[Cfg::kBPiecesPerThread];
  int64_t b_source[Cfg::kBPiecesPerThread];
  int b_position[Cfg::kBPiecesPerThread];
  bool b_channel_real[Cfg::kBPiecesPerThread];
#pragma unroll
  for (int j = 0; j < Cfg::kBPiecesPerThread; ++j) {
    const int q = tid + 128 * j;
    const int in8 = q & 7, run = (q >> 3) % Cfg::kPieceRuns, group8 = q / (8 * Cfg::kPieceRuns);
    const int channel = 8 * group8 + in8;
    const int s = run >> 1, half = run & 1;  // k-step, and which core matrix of its K
    b_offset[j] = ((s * (kN / 8) + group8) * 2 + half) * 128 + in8 * 16;
    b_position[j] = Ops::kPieceElements * run;
    b_channel_real[j] = q < Cfg::kBPieces && channel0 + channel < p.input_group_channels;
    b_source[j] = (static_cast<int64_t>(group) * p.input_group_channels + channel0 +
                   (b_channel_real[j] ? channel : 0)) *
                      p.input_channel_stride +
                  b_position[j];
  }
  using Piece = typename Ops::Piece;
  using BValues = Piece[Cfg::kBPiecesPerThread];
  auto load_b = [&](const WgradTile& tile, BValues& values) {
    const int width0 = p.width_origin + tile.width_tile * kPositions;
    const int64_t line = static_cast<int64_t>(tile.sample) * p.input_sample_stride +
                         (static_cast<int64_t>(tile.d) * p.height + tile.h) * p.width + width0;
#pragma unroll
    for (int j = 0; j < Cfg::kBPiecesPerThread; ++j) {
      values[j] = Piece{};
      if (b_channel_real[j] && width0 + b_position[j] < p.width) {
        values[j] = __ldg(reinterpret_cast<const Piece*>(input + line + b_source[j]));
      }
    }
  };
  auto store_b = [&](int slot, const BValues& values) {
    char* b = shared + slot * p.stage_bytes;
#pragma unroll
    for (int j = 0; j < Cfg::kBPiecesPerThread; ++j) {
      if (tid + 128 * j < Cfg::kBPieces) {
        Ops::store_b(b + b_offset[j], Cfg::kBPartBytes, values[j]);
      }
    }
  };
  const int segment_rows = static_cast<int>(p.segment_rows.divisor);
  const int pieces = pairs * segment_rows * static_cast<int>(p.row_pieces.divisor);
  auto load_segments = [&](int slot, const WgradTile& tile) {
    const int width0 = p.width_origin + tile.width_tile * kPositions;
    const int positions = min(kPositions, p.width - width0);
    const int rows_needed = (positions - 1) * p.stride_w + (taps_w - 1) * p.dilation_w + 1;
    const Element* tile_source = staged_output + tile.sample * p.output_batch_stride +
                                 p.tap_origin + tile.d * p.output_row_stride[0] +
                                 tile.h * p.output_row_stride[1] + width0 * p.output_row_stride[2] +
                                 group * p.output_group_channels;
    const uint32_t segments = shared_base + slot * p.stage_bytes + Cfg::kBRegionBytes;
    for (int q = tid; q < pieces; q += 128) {
      const int pair_row = static_cast<int>(p.row_pieces.divide(q));
      const int piece = q - pair_row * static_cast<int>(p.row_pieces.divisor);
      const int pair = static_cast<int>(p.segment_rows.divide(pair_row));
      const int row = pair_row - pair * segment_rows;
      const bool inside = row < rows_needed;
      const int element = Ops::kPieceElements * piece;
      const Element* source = tile_source + pair_offset[pair] +
                              static_cast<int64_t>(inside ? row : 0) * p.column_stride + element;
      cp_async_16_or_zero(segments + kElementBytes * (pair_row * p.pitch + element), source,
                          inside);
    }
  };
  // Bulk segments: a copy of each pair's rows the tile reaches, and zeros past them
  // (a width tail's positions meet zero input, but stale rows could hold NaN or Inf).
  // Returns the bytes the copies bring.
  auto copy_segments = [&](int slot, const WgradTile& tile, uint32_t full) -> uint32_t {
    const int width0 = p.width_origin + tile.width_tile * kPositions;
    const int positions = min(kPositions, p.width - width0);
    const int rows_needed = (positions - 1) * p.stride_w + (taps_w - 1) * p.dilation_w + 1;
    const Element* tile_source = staged_output + tile.sample * p.output_batch_stride +
                                 p.tap_origin + tile.d * p.output_row_stride[0] +
                                 tile.h * p.output_row_stride[1] + width0 * p.output_row_stride[2] +
                                 group * p.output_group_channels;
    const uint32_t row_bytes = p.pitch * kElementBytes;
    const uint32_t pair_bytes = segment_rows * row_bytes;
    const uint32_t segments = shared_base + slot * p.stage_bytes + Cfg::kBRegionBytes;
    if (tid < pairs) {
      bulk_copy(segments + tid * pair_bytes, tile_source + pair_offset[tid],
                rows_needed * row_bytes, full);
    }
    if (rows_needed < segment_rows) {
      const int zero_pieces = (segment_rows - rows_needed) * row_bytes / 16;
      char* first_zero =
          shared + slot * p.stage_bytes + Cfg::kBRegionBytes + rows_needed * row_bytes;
      for (int q = tid; q < pairs * zero_pieces; q += 128) {
        const int pair = q / zero_pieces, piece = q - pair * zero_pieces;
        *reinterpret_cast<uint4*>(first_zero + pair * pair_bytes + 16 * piece) = uint4{};
      }
    }
    return pairs * rows_needed * row_bytes;
  };
  // Stage s's B in b_values[s % kBuffers]; unrolled loops keep every index constant.
  constexpr int kAhead = Cfg::kBStagesAhead, kBuffers = kAhead + 1;
  WgradTile tile = wgrad_tile_at(p, first_stage);
  WgradTile next = tile;
  BValues b_values[kBuffers];
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < stages) load_b(next, b_values[s]);
    next.advance(p);
  }
  int slot = 0, phase = 0;
  auto step = [&](int it, BValues& mine, BValues& ahead) {
    mbarrier_wait(empty0 + 8 * slot, phase ^ 1);
    const uint32_t full = full0 + 8 * slot;
    uint32_t segment_bytes = 0;
    if (bulk_segments) {
      segment_bytes = copy_segments(slot, tile, full);
    } else {
      load_segments(slot, tile);
      cp_async_arrive(full);
    }
    if (it + kAhead < stages) {  // into the buffer of stage it - 1, stored before
      load_b(next, ahead);
      next.advance(p);
    }
    store_b(slot, mine);
    fence_proxy_async_shared();
    if (bulk_segments && tid == 0) {
      mbarrier_arrive_expect_bytes(full, segment_bytes);
    } else {
      mbarrier_arrive(full);
    }
    tile.advance(p);
    if (++slot == p.slots) {
      slot = 0;
      phase ^= 1;
    }
  };
  int it = 0;
  for (; it + kBuffers <= stages; it += kBuffers) {
#pragma unroll
    for (int j = 0; j < kBuffers; ++j) {
      step(it + j, b_values[j], b_values[(j + kAhead) % kBuffers]);
    }
  }
#pragma unroll
  for (int j = 0; j < kBuffers - 1; ++j) {
    if (it + j < stages) step(it + j, b_values[j], b_values[(j + kAhead) % kBuffers]);
  }
}

// The partial tile of the block's rows for its split: accumulator 4j + e of m-tile mt
// is wgmma row g + 8 (e / 2) (the block's row Ops::accumulator_row), input channel
// 8j + 2t + e % 2.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void store_wgrad_partial_tile(
    const WgradWgmmaProblem& p, const WgradBlock& block, int ctid,
    const float (&sums)[Cfg::kMTiles][kAccumulators], float* __restrict__ workspace) {
  using Ops = typename Cfg::Ops;
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles;
  const int split = block.split, group = block.group, channel_block = block.channel_block;
  const int first_row = block.first_row, last_row = block.last_row;
  const int t = ctid & 3, g = (ctid & 31) >> 2;
  const int row_base = first_row + compute_row_base<kMTiles>(ctid & ~31);
  const int taps = p.total_rows / p.output_channels;
  const int64_t split_tiles = (static_cast<int64_t>(split) * p.groups + group) * taps;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row_base + 64 * mt + Ops::accumulator_row(g, half);
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
          out[(8 * j + 2 * t + e) * p.output_channels] = sums[mt][4 * j + 2 * half + e];
        }
    }
}

// Warpgroups 1 and 2, the compute warpgroups: per stage, A (the segments' shifted rows)
// split in registers against B's descriptors, kMTiles m64 tiles each, the chain added
// into a total every kFlushStages stages; then the block's partial tile.
template <class Cfg>
__device__ __forceinline__ void compute_wgrad_tile(const WgradWgmmaProblem& p,
                                                   const WgradBlock& block, int tid,
                                                   float* __restrict__ workspace) {
  using Ops = typename Cfg::Ops;
  using Element = typename Cfg::Element;
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles;
  using Mma = typename Ops::template Mma<kN>;
  constexpr int kAccumulators = Mma::kAccumulators;
  const int first_row = block.first_row, first_pair = block.first_pair;
  const int stages = block.stages, taps_w = p.kernel_w;
  char* const shared = block.shared;
  const uint32_t shared_base = block.shared_base, full0 = block.full0, empty0 = block.empty0;
  const int ctid = tid - 128, lane = ctid & 31;
  const int warp_row0 = first_row + compute_row_base<kMTiles>(ctid & ~31);
  // This lane's A rows (Ops::lane_row) as offsets into a stage's segments: pair, width
  // tap and output channel. Past the end, the last rows are read again (in runs of
  // kRowRun: ldmatrix reads 8 rows' channels as one 16-byte row, float32 2 rows' as
  // one 8-byte pair).
  int row_offset[kMTiles][Ops::kLaneRows];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < Ops::kLaneRows; ++r) {
      const int row =
          min(warp_row0 + 64 * mt + Ops::lane_row(lane, r), p.total_rows - Ops::kRowRun);
      const int tap = row / p.output_channels, channel = row - tap * p.output_channels;
      const int pair = tap / taps_w, kw = tap - pair * taps_w;
      row_offset[mt][r] =
          (pair - first_pair) * p.pair_elements + kw * p.dilation_w * p.pitch + channel;
    }
  const int position_step = p.stride_w * p.pitch;
  const int lane_offset = Ops::lane_position(lane) * position_step;

  float acc[kMTiles][kAccumulators], total[kMTiles][kAccumulators];
  zero_chains(acc, total);  // (total unused, and dropped, where the chain never flushes)

  using Fragments = typename Ops::template Fragments<kMTiles>;
  auto k_step = [&](int slot, int s, Fragments& f) {
    const Element* segments =
        reinterpret_cast<const Element*>(shared + slot * p.stage_bytes + Cfg::kBRegionBytes) +
        Ops::kStepPositions * s * position_step + lane_offset;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      Ops::load_a(f, mt, segments, row_offset[mt], position_step);
    }
    fence_accumulators(acc);
    wgmma_fence();
    const uint32_t b = shared_base + slot * p.stage_bytes;
    const uint64_t d_hi = chunk_weight_descriptor<kN>(b, s);
    const uint64_t d_lo = chunk_weight_descriptor<kN>(b + Cfg::kBPartBytes, s);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      Ops::template products<kN>(acc[mt], f, mt, d_hi, d_lo);
    }
    wgmma_commit();
  };
  // Two fragment sets: a k-step's loads overlap the previous k-step's wgmmas.
  Fragments fragments[2];
  int slot = 0, phase = 0, previous_slot = p.slots - 1;
  for (int it = 0; it < stages; ++it) {
    mbarrier_wait(full0 + 8 * slot, phase);
#pragma unroll
    for (int s = 0; s < Cfg::kKSteps; ++s) {
      k_step(slot, s, fragments[s & 1]);
      wgmma_wait<1>();  // k-step s - 1 is done with its fragments (and slot)
      Ops::hold(fragments[(s + 1) & 1]);
      if (s == 0 && it > 0 && (!Ops::kChainFlushes || it % Cfg::kFlushStages != 0)) {
        mbarrier_arrive(empty0 + 8 * previous_slot);
      }
    }
    if (Ops::kChainFlushes && (it + 1) % Cfg::kFlushStages == 0) {
      wgmma_wait<0>();
      fence_accumulators(acc);
      Ops::hold(fragments[0]);
      Ops::hold(fragments[1]);
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
  // Without flushes the chain is the total (no second set of registers).
  if constexpr (Ops::kChainFlushes) add_chain(total, acc);
  const auto& sums = Ops::kChainFlushes ? total : acc;
  store_wgrad_partial_tile<Cfg>(p, block, ctid, sums, workspace);
}

// Grid: (splits, row blocks x channel blocks, groups). Block (split, rows, channels)
// writes, for each of its rows' taps, the tile workspace[split][group][tap][channel
// block] of kN input channels x output_channels (the sum kernel's tile layout with
// kBlockM = kN, kBlockN = output_channels).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    weight_gradient_wgmma_kernel(const __grid_constant__ WgradWgmmaProblem p,
                                 const typename Cfg::Element* __restrict__ input,
                                 const typename Cfg::Element* __restrict__ staged_output,
                                 float* __restrict__ workspace) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ops = typename Cfg::Ops;
  extern __shared__ __align__(128) char shared[];
  __shared__ __align__(8) uint64_t barriers[2 * kWgradMaxSlots];
  __shared__ int64_t pair_offset[kWgradMaxPairs];
  const int tid = threadIdx.x;
  WgradBlock block;
  block.split = blockIdx.x;
  const int row_block = blockIdx.y % p.row_blocks;
  block.channel_block = blockIdx.y / p.row_blocks;
  block.channel0 = block.channel_block * Cfg::kN;
  block.group = blockIdx.z;
  block.first_row = row_block * p.rows_per_block;
  block.last_row = min(block.first_row + p.rows_per_block, p.total_rows) - 1;
  block.first_pair = block.first_row / p.output_channels / p.kernel_w;
  block.pairs = block.last_row / p.output_channels / p.kernel_w - block.first_pair + 1;
  block.shared = shared;
  block.shared_base = shared_address(shared);
  block.full0 = shared_address(&barriers[0]);
  block.empty0 = shared_address(&barriers[kWgradMaxSlots]);
  block.pair_offset = pair_offset;
  if (tid < block.pairs) {
    const int pair = block.first_pair + tid;
    pair_offset[tid] =
        (pair / p.kernel_h) * p.depth_tap_stride + (pair % p.kernel_h) * p.height_tap_stride;
  }
  block.bulk_segments = Ops::kBulkSegments && p.bulk_segments;
  if (tid == 0) {
    for (int s = 0; s < p.slots; ++s) {
      // 128 arrivals after the B stores, and (cp.async segments) 128 after the copies.
      mbarrier_init(block.full0 + 8 * s, block.bulk_segments ? 128 : 256);
      mbarrier_init(block.empty0 + 8 * s, Cfg::kComputeThreads);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  block.first_stage = static_cast<int64_t>(block.split) * p.stages_per_split;
  const int64_t last_stage = min(block.first_stage + p.stages_per_split, p.stages);
  block.stages = static_cast<int>(max(last_stage - block.first_stage, int64_t{0}));

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    if (block.stages == 0) return;
    produce_wgrad_stages<Cfg>(p, block, tid, input, staged_output);
    return;
  }
  claim_registers<Cfg::kComputeRegisters>();
  compute_wgrad_tile<Cfg>(p, block, tid, workspace);
#endif
}

}  // namespace ct3d::cuda
