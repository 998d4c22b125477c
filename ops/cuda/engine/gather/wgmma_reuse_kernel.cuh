// The wgmma mainloop with width-tap reuse (width_tap_reuse.h): same problem,
// weights, 3xTF32 split and epilogue as wgmma_kernel.cuh, but a pipeline stage is
// (depth tap, height tap, 16-channel chunk, group of width taps): the producers copy
// the block's staged rows for all of the group's width taps once, one 64-byte tile
// row each (4 lanes per row), and one thread bulk-copies the group's packed weights;
// each compute thread then reads its rows at the shift of each width tap in turn.
// Per width tap a compute warpgroup issues 2 k-steps x kMTiles x 3 wgmmas; two
// fragment sets alternate between taps (where registers allow), and the chain (at
// most 8 taps x 16 k) is added into the float32 total once per stage.
#pragma once

#include <climits>

#include "ops/cuda/engine/epilogue/wgmma_epilogue.cuh"
#include "ops/cuda/engine/gather/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/gather/wgmma_weight_layout.h"
#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"

namespace ct3d::cuda {

template <int kChannels, int kMTilesPerWarpgroup, bool kExact = false>
struct WgmmaReuseConfig : WgmmaBlock<kChannels, kMTilesPerWarpgroup, kExact> {
  using Block = WgmmaBlock<kChannels, kMTilesPerWarpgroup, kExact>;
  using Block::kBlockPositions, Block::kMTiles, Block::kN;
  static constexpr bool kWidthReuse = true;
  // Producer thread tid copies piece tid % 4 of tile rows tid / 4 + 32 j.
  static constexpr int kProducerRowSlots = 18;
  static constexpr int kMaxTileRows = 32 * kProducerRowSlots;
  static constexpr int kMaxSlots = 8;
  static constexpr int kTapWeightFloats = kN * kWeightFloatsPerChannel;  // hi and lo
  static constexpr int kEpilogueBytes = 4 * kN * (kBlockPositions + 4);
  // Two fragment sets let a tap's split overlap the previous tap's wgmmas; where
  // they do not fit beside the accumulators and totals (64 channels x 2 m-tiles
  // spilled), one set, and the other warpgroup's wgmmas fill the gap.
  static constexpr int kAccumulatorRegisters = 2 * kMTiles * kN / 2;
  static constexpr int kFragmentSets = kAccumulatorRegisters + 2 * 16 * kMTiles <= 176 ? 2 : 1;
};

// The producer warpgroup's walk (threads 0-127): per stage, once its slot is empty, the
// tile's rows of one (depth tap, height tap, chunk) by cp.async (each thread its piece of
// rows tid / 4 + 32 r, from the segment each tile row starts in) and, by thread 0, the
// stage's width taps' packed weights by one bulk copy each.
template <class Cfg>
__device__ __forceinline__ void produce_reuse_stages(
    const PhaseProblem& p, const WidthReusePlan& plan, const PhaseBlock& block,
    const WidthReuseSegments& segments, const float* __restrict__ staged,
    const float* __restrict__ packed_weight, int group, int channel0, int min_shift, int valid_rows,
    int taps_per_stage, int tap_groups, int chunks_per_tap, int stages, uint32_t shared_base,
    uint32_t full0, uint32_t empty0, int tid) {
  constexpr uint32_t kTapWeightBytes = 4 * Cfg::kTapWeightFloats;
  const int slots = plan.slots;
  const uint32_t stage_bytes = plan.stage_bytes;
  const uint32_t input_bytes = 4 * kRowFloats * plan.tile_rows;
  const ResidueParams& rw = block.res_w;
  const int piece = tid % kChunksPerRow;
  const float* base = staged_row(p, block, staged, group, 0) + 4 * piece;
  // Offset of each of this thread's tile rows from `base` at the reduction's
  // origin, or INT_MIN where the row is not copied (past the tile, or in a
  // segment that starts past the last row).
  int offset[Cfg::kProducerRowSlots];
#pragma unroll
  for (int r = 0; r < Cfg::kProducerRowSlots; ++r) {
    const int row = tid / kChunksPerRow + 32 * r;
    offset[r] = INT_MIN;
    if (row < plan.tile_rows) {
      const WidthReuseSegments::Source source = segments.source(row);
      if (source.first_local < valid_rows) {
        offset[r] = static_cast<int>(
            staged_row(p, block, staged, group, source.first_local) + 4 * piece - base +
            static_cast<int64_t>(min_shift + source.offset) * p.staged_stride[2]);
      }
    }
  }
  const float* weight_source =
      packed_weight + group * p.packed_group_stride + channel0 * kWeightFloatsPerChannel;
  const int64_t weight_chunk_step = static_cast<int64_t>(p.cout_padded) * kWeightFloatsPerChannel;
  const int64_t weight_tap_step = chunks_per_tap * weight_chunk_step;
  const ResidueParams& rd = block.res_d;
  const ResidueParams& rh = block.res_h;
  int td = 0, th = 0, chunk = 0, tap_group = 0;
  for (int it = 0; it < stages; ++it) {
    const int slot = it % slots;
    mbarrier_wait(empty0 + 8 * slot, ((it / slots) & 1) ^ 1);
    const uint32_t stage = shared_base + slot * stage_bytes;
    const int first_tap = tap_group * taps_per_stage;
    const int taps = min(taps_per_stage, rw.taps - first_tap);
    const int64_t input_offset = (rd.first_shift + td * rd.shift_step) * p.staged_stride[0] +
                                 (rh.first_shift + th * rh.shift_step) * p.staged_stride[1] +
                                 chunk * kBlockK;
#pragma unroll
    for (int r = 0; r < Cfg::kProducerRowSlots; ++r) {
      if (offset[r] != INT_MIN) {
        const int row = tid / kChunksPerRow + 32 * r;
        cp_async_16(stage + 4 * (row * kRowFloats + 4 * piece), base + offset[r] + input_offset);
      }
    }
    if (tid == 0) {
      mbarrier_arrive_expect_bytes(full0 + 8 * slot, taps * kTapWeightBytes);
      const int64_t tap_dh =
          (rd.first_tap + td * rd.tap_step) * p.kernel_h + rh.first_tap + th * rh.tap_step;
      for (int tw = 0; tw < taps; ++tw) {
        const int64_t tap = tap_dh * p.kernel_w + rw.first_tap + (first_tap + tw) * rw.tap_step;
        bulk_copy(stage + input_bytes + tw * kTapWeightBytes,
                  weight_source + tap * weight_tap_step + chunk * weight_chunk_step,
                  kTapWeightBytes, full0 + 8 * slot);
      }
    }
    cp_async_arrive(full0 + 8 * slot);
    if (++tap_group == tap_groups) {
      tap_group = 0;
      if (++chunk == chunks_per_tap) {
        chunk = 0;
        if (++th == rh.taps) {
          th = 0;
          ++td;
        }
      }
    }
  }
}

// The compute warpgroups: per stage, each width tap's fragments (this lane's rows at the
// tap's shift, split into TF32 hi and lo) loaded while the tap before multiplies; the
// stage's chain added into the total once its wgmmas are done and its slot released.
// Then the epilogue (every stage has landed and been read): the block's outputs.
template <class Cfg>
__device__ __forceinline__ void compute_reuse_stages_and_store(
    const PhaseProblem& p, const WidthReusePlan& plan, const PhaseBlock& block,
    const WidthReuseSegments& segments, int valid_rows, int min_shift, int taps_per_stage,
    int tap_groups, int stages, float* shared, uint32_t shared_base, uint32_t full0,
    uint32_t empty0, int ctid, int group, int channel0, const float* __restrict__ bias,
    float* __restrict__ output) {
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles;
  constexpr int kAccumulators = Wgmma<kN>::kAccumulators;
  constexpr uint32_t kTapWeightBytes = 4 * Cfg::kTapWeightFloats;
  const int slots = plan.slots;
  const uint32_t stage_bytes = plan.stage_bytes;
  const uint32_t input_bytes = 4 * kRowFloats * plan.tile_rows;
  const ResidueParams& rw = block.res_w;
  const int t = ctid & 3;
  const int row_base = compute_row_base<kMTiles>(ctid);
  // Float offset in a stage of this lane's piece of rows g and g + 8 of each m-tile
  // at the lowest shift (rows past the end read the last row: not stored).
  int tile_offset[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int local = min(row_base + 64 * mt + 8 * h, valid_rows - 1);
      tile_offset[mt][h] = segments.tile_row(local) * kRowFloats + 4 * t;
    }
  float acc[kMTiles][kAccumulators], total[kMTiles][kAccumulators];
  zero_chains(acc, total);

  // This lane's hi and lo values of one width tap: per m-tile, rows g and g + 8,
  // element 2s + half of each row belonging to k-step s (wgmma_kernel.cuh).
  struct Fragments {
    uint32_t hi[kMTiles][8], lo[kMTiles][8];
  };
  auto load_split = [&](const float* stage, int shift, Fragments& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const float4 x0 = *reinterpret_cast<const float4*>(stage + tile_offset[mt][0] + shift);
      const float4 x1 = *reinterpret_cast<const float4*>(stage + tile_offset[mt][1] + shift);
      const float v[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) split_tf32(v[i], f.hi[mt][i], f.lo[mt][i]);
    }
  };
  auto issue = [&](uint32_t weights_hi, const Fragments& f) {
    const uint32_t weights_lo = weights_hi + 4 * kN * kBlockK;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const uint64_t b_hi = chunk_weight_descriptor<kN>(weights_hi, s);
      const uint64_t b_lo = chunk_weight_descriptor<kN>(weights_lo, s);
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        split_products<kN, Cfg::kExactOperands>(acc[mt], f.hi[mt], f.lo[mt], s, b_hi, b_lo);
      }
    }
  };
  auto hold = [](Fragments& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      fence_registers(f.hi[mt]);
      if constexpr (!Cfg::kExactOperands) fence_registers(f.lo[mt]);
    }
  };
  Fragments fragments[Cfg::kFragmentSets];
  int tap_group = 0;
  for (int it = 0; it < stages; ++it) {
    const int slot = it % slots;
    mbarrier_wait(full0 + 8 * slot, (it / slots) & 1);
    const float* stage = shared + slot * (stage_bytes / 4);
    const uint32_t weights = shared_base + slot * stage_bytes + input_bytes;
    const int first_tap = tap_group * taps_per_stage;
    const int taps = min(taps_per_stage, rw.taps - first_tap);
    // Tile-row shift of width tap first_tap + tw: its shift above the lowest.
    const int shift0 = rw.first_shift + first_tap * rw.shift_step - min_shift;
    // One width tap: its fragments into `mine` while the previous tap's wgmmas run
    // (they read `other`).
    auto tap = [&](int tw, Fragments& mine, Fragments& other) {
      load_split(stage, (shift0 + tw * rw.shift_step) * kRowFloats, mine);
      fence_accumulators(acc);
      wgmma_fence();
      issue(weights + tw * kTapWeightBytes, mine);
      wgmma_commit();
      if constexpr (Cfg::kFragmentSets == 2) {
        wgmma_wait<1>();
        hold(other);
      } else {
        wgmma_wait<0>();
        hold(mine);
      }
    };
    constexpr int kOther = Cfg::kFragmentSets - 1;
    int tw = 0;
    for (; tw + 1 < taps; tw += 2) {
      tap(tw, fragments[0], fragments[kOther]);
      tap(tw + 1, fragments[kOther], fragments[0]);
    }
    if (tw < taps) tap(tw, fragments[0], fragments[kOther]);
    wgmma_wait<0>();
    fence_accumulators(acc);
    hold(fragments[0]);
    hold(fragments[kOther]);
    mbarrier_arrive(empty0 + 8 * slot);
    add_chain(total, acc);
    if (++tap_group == tap_groups) tap_group = 0;
  }

  // Epilogue (every stage has landed and been read).
  wgmma_store_tile<kN, kMTiles, Cfg::kBlockPositions, Cfg::kComputeThreads>(
      p, block, shared, total, ctid, row_base, group, channel0, bias, output);
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_reuse_phase_kernel(const __grid_constant__ PhaseProblem p, const WidthReusePlan plan,
                             const float* __restrict__ staged,
                             const float* __restrict__ packed_weight,
                             const float* __restrict__ bias, float* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles;
  extern __shared__ __align__(1024) float shared[];
  __shared__ __align__(8) uint64_t barriers[2 * Cfg::kMaxSlots];
  const int tid = threadIdx.x;
  const int group = blockIdx.z;
  const int channel0 = blockIdx.y * kN;
  const PhaseBlock block = phase_block(p, Cfg::kBlockPositions);
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[Cfg::kMaxSlots]);
  init_slot_barriers(full0, empty0, plan.slots, Cfg::kComputeThreads);

  // This block's width geometry (its width residue's taps).
  const ResidueParams& rw = block.res_w;
  const int line = p.dim[2].max_positions;
  const int first_qw = decode_row(p, block.origin, 0).qw;
  const WidthReuseSegments segments{line, min(Cfg::kBlockPositions, line - first_qw),
                                    static_cast<int>(p.row_stride[2] / p.staged_stride[2]),
                                    shift_span(rw.shift_step, rw.taps)};
  const int min_shift = lowest_shift(rw.first_shift, rw.shift_step, rw.taps);
  const int valid_rows =
      static_cast<int>(min(static_cast<int64_t>(Cfg::kBlockPositions), p.rows - block.row0));
  const int taps_per_stage = plan.taps_per_stage;
  const int tap_groups = (rw.taps + taps_per_stage - 1) / taps_per_stage;
  const int chunks_per_tap = p.cin_padded / kBlockK;
  const int stages = block.res_d.taps * block.res_h.taps * chunks_per_tap * tap_groups;

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    produce_reuse_stages<Cfg>(p, plan, block, segments, staged, packed_weight, group, channel0,
                              min_shift, valid_rows, taps_per_stage, tap_groups, chunks_per_tap,
                              stages, shared_base, full0, empty0, tid);
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  compute_reuse_stages_and_store<Cfg>(p, plan, block, segments, valid_rows, min_shift,
                                      taps_per_stage, tap_groups, stages, shared, shared_base,
                                      full0, empty0, tid - 128, group, channel0, bias, output);
#endif
}

}  // namespace ct3d::cuda
