// The strided-lines form's kernel (strided_lines_plan.h): warpgroup 0's first thread
// loads, warpgroups 1 and 2 compute, each its own lines of the tile with the same
// weights. A stage is kStageSteps k-steps of one (depth tap, height tap): per compute
// warpgroup one TMA box of the source seen flat (a channel's rows, then 4 floats so
// that a load's four k lie 8 banks apart, as window_boxes.cuh's line tiles), and one
// bulk copy of the weights in (width tap, channel) rows. A lane's A values come from
// the box into registers and are split there (wgmma's RS form, three products, or one for
// exact operands). The chain is the tile's whole reduction where that is at most
// kStridedLinesMaxChain (or exact operands); longer ones are added into a float32 total
// every plan.flush_stages stages (kFlushChains, one m-tile per warpgroup).
// Persistent grid: each block walks tiles blockIdx.x, + gridDim.x, ...
#pragma once

#include <cuda.h>

#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/strided_lines/strided_lines_plan.h"
#include "ops/cuda/engine/window/shifted_window_stage.cuh"  // WarpSpecializedBlock
#include "ops/cuda/engine/window/tap_columns_register_a.cuh"

namespace ct3d::cuda {

// kExactOperands: every source and weight value is a TF32 value (float16 or bfloat16
// widened), so one product, hi * hi, is exact. kFlushChains: the chain is added into a
// total every plan.flush_stages stages.
template <int kWidthTaps, int kChannels, int kMTilesPerWarpgroup, bool kExactOperands,
          bool kFlushChains = false>
struct StridedLinesConfig : WarpSpecializedBlock {
  static constexpr bool kExact = kExactOperands;
  static constexpr bool kFlush = kFlushChains;
  static_assert(!(kFlush && kExact), "exact operands' chains are not flushed");
  static_assert(kWidthTaps == 3 || kWidthTaps == 4, "a column's taps reach it and the next");
  static_assert(kChannels % 8 == 0, "whole n8 blocks per width tap");
  static constexpr int kTaps = kWidthTaps;
  static constexpr int kChannelBlock = kChannels;
  static constexpr int kN = kWidthTaps * kChannels;
  static constexpr int kMTiles = kMTilesPerWarpgroup;
  static constexpr int kStageSteps = kStridedLinesStageSteps;
  static constexpr int kRows = 64 * kMTiles;  // a compute warpgroup's flat rows
  static constexpr int kBoxWidth = strided_lines_box_width(kMTiles);
  static_assert(kBoxWidth / 4 % 2 == 1, "a box's 4-float groups odd");
  static constexpr int kBoxBytes = strided_lines_box_bytes(kMTiles);
  static constexpr int kBoxFloats = kBoxBytes / 4;
  static constexpr int kWeightPartBytes = kN * 32;  // one k-step's hi (or lo)
  static constexpr int kWeightStepBytes = 2 * kWeightPartBytes;
  static constexpr int kStageWeightBytes = strided_lines_stage_weight_bytes(kN);
  static constexpr int kStageBytes = strided_lines_stage_bytes(kN, kMTiles);
  static_assert(kBoxBytes % 128 == 0 && kStageBytes % 128 == 0, "TMA boxes 128-byte aligned");
  // Accumulator values of one row (a lane's row g or g + 8) in width taps >= 2: those the
  // next source column's outputs take.
  static constexpr int kCarried = (kWidthTaps - 2) * kChannels / 4;
  static constexpr int kStagedPitch = kStridedLinesStagedPitch;
  static constexpr int kStagedFloats = kChannels * kStagedPitch;
};

// Lane (g, t) of warp w holds rows 16 kMTiles w + 16 mt + g + 8 i (i = 0, 1) of its
// warpgroup's flat rows: a warp's rows are consecutive, so that a row's left neighbour
// is in the same warp except at the warp's first row. Its k t and t + 4 are the k-step's
// channels 2t and 2t + 1 (the weights are packed in that K order).
template <class Cfg>
__device__ __forceinline__ void load_strided_line_fragments(
    const float* lane, WindowFragments<Cfg::kStageSteps, Cfg::kMTiles>& f) {
#pragma unroll
  for (int step = 0; step < Cfg::kStageSteps; ++step) {
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
      const float* k_low = lane + step * 8 * Cfg::kBoxWidth + 16 * mt;
      const float* k_high = k_low + Cfg::kBoxWidth;
      split_tf32(make_float4(k_low[0], k_low[8], k_high[0], k_high[8]), f.hi[step][mt],
                 f.lo[step][mt]);
    }
  }
}

// One stage's products for exact operands: their lo parts are zero, so hi * hi alone.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void exact_register_a_products(
    float (&acc)[Cfg::kMTiles][kAccumulators],
    const WindowFragments<Cfg::kStageSteps, Cfg::kMTiles>& f, uint32_t weights) {
#pragma unroll
  for (int step = 0; step < Cfg::kStageSteps; ++step) {
    const uint64_t b_hi = matrix_descriptor(weights + step * Cfg::kWeightStepBytes, 128, 256);
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) Wgmma<Cfg::kN>::run(acc[mt], f.hi[step][mt], b_hi, 1);
  }
}

// Accumulator of (width tap tw, n8 block b of its channels, row g + 8 i, channel 2t + e).
template <class Cfg>
constexpr int strided_lines_accumulator(int tw, int b, int i, int e) {
  return 4 * (tw * (Cfg::kChannelBlock / 8) + b) + 2 * i + e;
}
// Index among a row's carried values (taps >= 2).
template <class Cfg>
constexpr int strided_lines_carried(int tw, int b, int e) {
  return ((tw - 2) * (Cfg::kChannelBlock / 8) + b) * 2 + e;
}

// Named barriers 2 and 3, one per compute warpgroup (immediate ids: a register id makes
// ptxas reserve all 16).
__device__ __forceinline__ void warpgroup_barrier(int warpgroup) {
  if (warpgroup == 0) {
    asm volatile("bar.sync 2, 128;\n" ::: "memory");
  } else {
    asm volatile("bar.sync 3, 128;\n" ::: "memory");
  }
}

// The epilogue of one compute warpgroup, from its lanes' registers: target column
// 2 w - padding + r (r = 0, 1) of a line is the bias, the taps tw < 2 with tw % 2 = r of
// source column w and the taps tw >= 2 with tw % 2 = r of column w - 1 (from the lane 4
// back, through shared memory at a warp's first row; zero at a line's first column);
// the last column also stores the columns past the source, which only its taps >= 2
// reach. Stores are a pointer step apart (KERNEL_LOG "width stride 2 on wgmma": with an index
// product and a channel test per store, L1-73's kernel ran 316 M instructions; 243 M so).
// `exchange`: this warpgroup's 4 x 4 x kCarried floats for this tile's parity.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void store_strided_lines(
    const PhaseProblem& p, const StridedLinesPlan& plan, const StridedLinesTile& tile,
    const float (&acc)[Cfg::kMTiles][kAccumulators], float* exchange, float* warp_rows,
    int warpgroup, const float* __restrict__ bias, float* __restrict__ output) {
  constexpr int kBlocks = Cfg::kChannelBlock / 8;
  constexpr int kCarried = Cfg::kCarried;
  const int ctid = (threadIdx.x - 128) & 127;
  const int lane = ctid & 31, warp = ctid >> 5;
  const int g = lane >> 2, t = lane & 3;

  // The warp before's last row (m-tile kMTiles - 1, i = 1, g = 7), for this warp's first.
  if (g == 7) {
#pragma unroll
    for (int tw = 2; tw < Cfg::kTaps; ++tw)
#pragma unroll
      for (int b = 0; b < kBlocks; ++b)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          exchange[(warp * 4 + t) * kCarried + strided_lines_carried<Cfg>(tw, b, e)] =
              acc[Cfg::kMTiles - 1][strided_lines_accumulator<Cfg>(tw, b, 1, e)];
        }
  }
  warpgroup_barrier(warpgroup);
  float from_warp_before[kCarried];
#pragma unroll
  for (int v = 0; v < kCarried; ++v) {
    from_warp_before[v] = g == 0 && warp > 0 ? exchange[((warp - 1) * 4 + t) * kCarried + v] : 0.f;
  }

  const int first_channel = tile.channel_block * Cfg::kChannelBlock;
  // This lane's channels: 8 b + 2 t + e of the block.
  const int lane_channels = p.cout_per_group - first_channel - 2 * t;
  float channel_bias[kBlocks][2];
#pragma unroll
  for (int b = 0; b < kBlocks; ++b)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      channel_bias[b][e] =
          bias != nullptr && 8 * b + e < lane_channels
              ? bias[tile.group * p.cout_per_group + first_channel + 2 * t + 8 * b + e]
              : 0.f;
    }
  const bool every_channel = lane_channels >= Cfg::kChannelBlock - 6;
  const int64_t channel_stride = p.output_channel_stride;
  const int64_t block_stride = 8 * channel_stride;
  float* const plane =
      output + tile.n * p.output_batch_stride +
      (int64_t{tile.group} * p.cout_per_group + first_channel + 2 * t) * channel_stride +
      int64_t{tile.qd * p.dim[0].stride + tile.depth_residue} * p.output_stride[0];
  const int width = plan.source_width;
  // One target column of `line`: the bias plus the values given per (b, e), channel
  // pointers a step apart.
  const auto store_column = [&](float* line, int column, auto&& value) {
    if (column < 0 || column >= plan.target_width) return;
    float* out = line + column * p.output_stride[2];
    if (every_channel) {
#pragma unroll
      for (int b = 0; b < kBlocks; ++b, out += block_stride) {
        out[0] = channel_bias[b][0] + value(b, 0);
        out[channel_stride] = channel_bias[b][1] + value(b, 1);
      }
    } else {
#pragma unroll
      for (int b = 0; b < kBlocks; ++b, out += block_stride) {
        if (8 * b < lane_channels) out[0] = channel_bias[b][0] + value(b, 0);
        if (8 * b + 1 < lane_channels) out[channel_stride] = channel_bias[b][1] + value(b, 1);
      }
    }
  };

  const int rh = tile.height_residue;
  // Staged stores: a warp's 16 rows of an m-tile are 32 target columns, consecutive
  // within a line; its lanes put them in the warp's rows ([channel][kStagedPitch]), then
  // lane l stores column l of each channel, so that a warp store is one run per line it
  // meets (the lanes' own stores measured slower: KERNEL_LOG, strided lines).
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int row = 16 * Cfg::kMTiles * warp + 16 * mt + g + 8 * i;
      const int line_in_box = row / width, column = row - line_in_box * width;
      // The left neighbour's taps >= 2: lane g - 1's same row, or at g = 0 lane 7's row
      // before (its row i = 0, or m-tile mt - 1's row i = 1).
      float left[kCarried];
#pragma unroll
      for (int tw = 2; tw < Cfg::kTaps; ++tw)
#pragma unroll
        for (int b = 0; b < kBlocks; ++b)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float send = acc[mt][strided_lines_accumulator<Cfg>(tw, b, i, e)];
            if (g == 7) {
              if (i == 1) {
                send = acc[mt][strided_lines_accumulator<Cfg>(tw, b, 0, e)];
              } else if (mt > 0) {
                send = acc[mt > 0 ? mt - 1 : 0][strided_lines_accumulator<Cfg>(tw, b, 1, e)];
              }
            }
            float received = __shfl_sync(0xffffffffu, send, (lane + 28) & 31);
            if (mt == 0 && i == 0 && g == 0) {
              received = from_warp_before[strided_lines_carried<Cfg>(tw, b, e)];
            }
            left[strided_lines_carried<Cfg>(tw, b, e)] = column == 0 ? 0.f : received;
          }
      const auto value = [&](int r, int b, int e) {
        float sum = acc[mt][strided_lines_accumulator<Cfg>(r, b, i, e)];
#pragma unroll
        for (int tw = r + 2; tw < Cfg::kTaps; tw += 2) {
          sum += left[strided_lines_carried<Cfg>(tw, b, e)];
        }
        return sum;
      };
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int b = 0; b < kBlocks; ++b)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            warp_rows[(8 * b + 2 * t + e) * Cfg::kStagedPitch + 2 * (g + 8 * i) + r] =
                channel_bias[b][e] + value(r, b, e);
          }
      const int q = tile.q0 + warpgroup * plan.lines_per_warpgroup + line_in_box;
      if (line_in_box >= plan.lines_per_warpgroup || q >= p.dim[1].residue[rh].positions) continue;
      float* const line = plane + int64_t{q * p.dim[1].stride + rh} * p.output_stride[1];
      if (column == width - 1) {
        // Columns past the source: the first takes this column's taps >= 2, any later
        // one (4 taps and output padding) is the bias alone.
        for (int past = width; 2 * past - plan.width_padding < plan.target_width; ++past) {
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            store_column(line, 2 * past + r - plan.width_padding, [&](int b, int e) {
              float sum = 0.f;
#pragma unroll
              for (int tw = 2 + r; tw < Cfg::kTaps; tw += 2) {
                sum += acc[mt][strided_lines_accumulator<Cfg>(tw, b, i, e)];
              }
              return past == width ? sum : 0.f;
            });
          }
        }
      }
    }
    // Lane l's staged column: row l / 2 of the m-tile, target column 2 w + l % 2 - padding.
    __syncwarp();
    const int row = 16 * Cfg::kMTiles * warp + 16 * mt + (lane >> 1);
    const int line_in_box = row / width, column = row - line_in_box * width;
    const int q = tile.q0 + warpgroup * plan.lines_per_warpgroup + line_in_box;
    const int target_column = 2 * column + (lane & 1) - plan.width_padding;
    if (line_in_box < plan.lines_per_warpgroup && q < p.dim[1].residue[rh].positions &&
        target_column >= 0 && target_column < plan.target_width) {
      // (This lane's channels 2t, 2t + 1 of each n8 block are pointer offsets from
      // `plane`; the staged rows start at channel 0.)
      float* out = plane - 2 * t * channel_stride +
                   int64_t{q * p.dim[1].stride + rh} * p.output_stride[1] +
                   target_column * p.output_stride[2];
      const int channels = lane_channels + 2 * t;
#pragma unroll
      for (int c = 0; c < Cfg::kChannelBlock; ++c, out += channel_stride) {
        if (c < channels) *out = warp_rows[c * Cfg::kStagedPitch + lane];
      }
    }
  }
}

// The producer (one thread): per tile, per (depth tap, height tap) pair that reads the
// source, per stage of source channels, the two warpgroups' source boxes by TMA and the
// stage's weights by one bulk copy into the next free slot.
template <class Cfg>
__device__ __forceinline__ void produce_strided_lines_stages(
    const PhaseProblem& p, const StridedLinesPlan& plan, const CUtensorMap* source_map,
    const float* __restrict__ weights, int channel_stages, uint32_t shared_base, uint32_t full0,
    uint32_t empty0) {
  const int slots = plan.slots;
  RingPosition ring;  // over all the block's tiles
  for (int index = blockIdx.x; index < plan.tiles; index += gridDim.x) {
    const StridedLinesTile tile = strided_lines_tile(p, plan, index);
    if (!strided_lines_tile_stores(p, tile)) continue;
    const int channel0 = tile.group * p.cin_per_group;
    for (int td = 0; td < p.dim[0].residue[tile.depth_residue].taps; ++td) {
      const int depth = strided_lines_source_depth(p, tile, td);
      if (depth < 0) continue;
      for (int th = 0; th < p.dim[1].residue[tile.height_residue].taps; ++th) {
        const int first_line = strided_lines_first_line(p, tile, th);
        if (!strided_lines_line_tap_reads(p, plan, first_line)) continue;
        const float* stage_weights =
            weights +
            strided_lines_weight_stage(p, plan, tile, td, th, 0) * (Cfg::kStageWeightBytes / 4);
#pragma unroll 1
        for (int cs = 0; cs < channel_stages; ++cs, ring.advance(slots)) {
          mbarrier_wait(empty0 + 8 * ring.slot, ring.phase ^ 1);
          const uint32_t stage = shared_base + ring.slot * plan.stage_bytes;
          const uint32_t full = full0 + 8 * ring.slot;
          mbarrier_arrive_expect_bytes(full, Cfg::kStageBytes);
#pragma unroll
          for (int wg = 0; wg < 2; ++wg) {
            tensor_copy_5d(stage + wg * Cfg::kBoxBytes, source_map,
                           (first_line + wg * plan.lines_per_warpgroup) * plan.source_width, 0,
                           depth, channel0 + 8 * Cfg::kStageSteps * cs, tile.n, full);
          }
          bulk_copy(stage + 2 * Cfg::kBoxBytes, stage_weights + cs * (Cfg::kStageWeightBytes / 4),
                    Cfg::kStageWeightBytes, full);
        }
      }
    }
  }
}

// `source_map`: the source (N, C, D, 1, H x W) as window_tensor_map.h encodes it, boxes
// of kBoxWidth x 1 x 1 x 8 kStageSteps x 1. `weights`: [stage (strided_lines_weight_stage)]
// [k-step][hi, lo][N rows][8] in wgmma's K-major core matrices.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_strided_lines_kernel(const __grid_constant__ PhaseProblem p,
                               const __grid_constant__ StridedLinesPlan plan,
                               const __grid_constant__ CUtensorMap source_map,
                               const float* __restrict__ weights, const float* __restrict__ bias,
                               float* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Fragments = WindowFragments<Cfg::kStageSteps, Cfg::kMTiles>;
  extern __shared__ __align__(1024) float shared_pool[];
  float* const shared = align_shared_128(shared_pool);
  __shared__ __align__(8) uint64_t barriers[2 * Cfg::kMaxSlots];
  // Per tile parity and compute warpgroup, each warp's last row's carried values.
  __shared__ float exchange[2][2][16 * Cfg::kCarried];
  const int tid = threadIdx.x;
  const int slots = plan.slots;
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[Cfg::kMaxSlots]);
  // One producer thread: its arrival and the copies' bytes fill a slot.
  init_slot_barriers(full0, empty0, slots, Cfg::kComputeThreads, 1);
  const int channel_stages = plan.k_steps / Cfg::kStageSteps;

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    if (tid != 0) return;
    produce_strided_lines_stages<Cfg>(p, plan, &source_map, weights, channel_stages, shared_base,
                                      full0, empty0);
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  const int warpgroup = (tid - 128) >> 7;
  const int ctid = (tid - 128) & 127;
  const int lane = ctid & 31, warp = ctid >> 5;
  const int lane_offset = warpgroup * Cfg::kBoxFloats + 2 * (lane & 3) * Cfg::kBoxWidth +
                          16 * Cfg::kMTiles * warp + (lane >> 2);
  Fragments sets[2];
  RingPosition ring;  // over all the block's tiles
  int parity = 0;
  for (int index = blockIdx.x; index < plan.tiles; index += gridDim.x) {
    const StridedLinesTile tile = strided_lines_tile(p, plan, index);
    if (!strided_lines_tile_stores(p, tile)) continue;
    const int stages = strided_lines_stages(p, plan, tile);
    float acc[Cfg::kMTiles][Cfg::kN / 2];
    zero_total(acc);
    // The flushed chains' sum (kFlush only).
    float total[Cfg::kMTiles][Cfg::kFlush ? Cfg::kN / 2 : 1];
    if constexpr (Cfg::kFlush) zero_total(total);
    // The slot of the stage still in flight (released once its wgmmas are done).
    int pending_slot = -1, chain_stages = 0;
    const auto stage = [&](int stage_index, Fragments& mine, Fragments& other) {
      mbarrier_wait(full0 + 8 * ring.slot, ring.phase);
      const int slot = ring.slot;
      load_strided_line_fragments<Cfg>(shared + slot * (plan.stage_bytes / 4) + lane_offset, mine);
      fence_accumulators(acc);
      wgmma_fence();
      const uint32_t stage_weights = shared_base + slot * plan.stage_bytes + 2 * Cfg::kBoxBytes;
      if constexpr (Cfg::kExact) {
        exact_register_a_products<Cfg>(acc, mine, stage_weights);
      } else {
        // A flushed chain restarts with the accumulate flag off.
        register_a_products<Cfg::kN, Cfg::kStageSteps, Cfg::kMTiles>(
            acc, mine, stage_weights, Cfg::kWeightPartBytes, Cfg::kWeightStepBytes,
            Cfg::kFlush && chain_stages == 0 ? 0 : 1);
      }
      wgmma_commit();
      ring.advance(slots);
      const bool chain_ends =
          stage_index + 1 == stages || (Cfg::kFlush && ++chain_stages == plan.flush_stages);
      if (chain_ends) {
        wgmma_wait<0>();
        fence_accumulators(acc);
        mine.hold();
        other.hold();
        if (pending_slot >= 0) mbarrier_arrive(empty0 + 8 * pending_slot);
        mbarrier_arrive(empty0 + 8 * slot);
        pending_slot = -1;
        if constexpr (Cfg::kFlush) {
          add_chain_to_total(total, acc);
          chain_stages = 0;
        }
      } else {
        // The stage before is done: its fragments and its slot are free.
        wgmma_wait<1>();
        other.hold();
        if (pending_slot >= 0) mbarrier_arrive(empty0 + 8 * pending_slot);
        pending_slot = slot;
      }
    };
    run_stage_pairs(stages, sets, stage);
    fence_accumulators(acc);
    // The epilogue reads a copy (or the total): reading the accumulators themselves there
    // made ptxas serialize the wgmmas (C7511).
    float values[Cfg::kMTiles][Cfg::kN / 2];
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt)
#pragma unroll
      for (int i = 0; i < Cfg::kN / 2; ++i) {
        if constexpr (Cfg::kFlush) {
          values[mt][i] = total[mt][i];
        } else {
          values[mt][i] = acc[mt][i];
        }
      }
    store_strided_lines<Cfg>(
        p, plan, tile, values, exchange[parity][warpgroup],
        shared + plan.staged_offset / 4 + ((tid - 128) >> 5) * Cfg::kStagedFloats, warpgroup, bias,
        output);
    parity ^= 1;
  }
#endif
}

}  // namespace ct3d::cuda
