// The shifted-window GEMM (shifted_window_plan.h): stride-1 problems with output
// channels on wgmma's M and output positions on N, both operands in shared memory.
// A tile: 64 target channels (the half form: 64 x kMTiles) x 2 * kN columns of one
// (sample, depth) plane; warpgroup 0 loads, warpgroups 1 and 2 each compute kN of the
// columns for all the tile's channels. The grid is
// persistent (a block per multiprocessor walks tiles gridDim.x apart), so the loader
// fills the next tile's stages while the compute warpgroups store the last one.
//
// A pipeline stage is (depth tap, height tap, k-step): one thread bulk-copies the
// window of staged rows (quad_staging.h: for float32 8 channels as 2 quads x hi, lo;
// for float16 and bfloat16 16 channels as 2 octets) and the packed weights of every
// width tap (float32: wgmma_weight_layout.h, hi and lo of the k-step; otherwise
// half_window_weights.h). Width tap tw reads the same window at a descriptor shifted
// by its row offset, so the mainloop has no gather and no split: per tap, the
// k-step's products (window_operands.cuh) with A = the weights and B = the window.
// float32's chain is added into a float32 total every flush_stages stages, as in the
// other wgmma mainloops; the half form's chain runs the whole tile (kHalfChainStages)
// and is the total.
#pragma once

#include "ops/cuda/engine/epilogue/window_epilogue.cuh"
#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"
#include "ops/cuda/engine/window/shifted_window_stage.cuh"

namespace ct3d::cuda {

template <int kColumns, class Operands, int kMTileCount = 1, int kWidthTaps = 0>
struct ShiftedWindowConfig : WindowBlockShape<kColumns, Operands> {
  static constexpr int kMTiles = kMTileCount;
  // The problem's width taps where the kernel is built for them (a stage's wgmmas one
  // unrolled run), else 0: a loop over the plan's.
  static constexpr int kFixedWidthTaps = kWidthTaps;
  // Two m-tiles need the half layout (one part, rows contiguous) and no chain flushes
  // (a total per m-tile would not fit the registers).
  static_assert(kMTiles == 1 || (Operands::kHalf && kMTiles == kWindowMaxMTiles), "m-tiles");
  // Per width tap in a stage: the k-step's packed weights (64 rows x 32 bytes per
  // m-tile), for float32 hi then lo.
  static constexpr int kTapWeightBytes = kMTiles * kWindowBlockChannels * 32;
  static constexpr int kTapBytes = Operands::kWeightParts * kTapWeightBytes;
};

// Warpgroup 0's first thread, the producer: for each of the block's tiles, every
// stage's window of staged rows (produce_window_stages) and the packed weights of every
// width tap for the stage's k-step (of `chunks` k-chunks of 16 source channels).
template <class Cfg>
__device__ __forceinline__ void produce_shifted_window_tiles(const PhaseProblem& p,
                                                             const ShiftedWindowPlan& plan,
                                                             const void* __restrict__ planes,
                                                             const void* __restrict__ packed_weight,
                                                             uint32_t shared_base, uint32_t full0,
                                                             uint32_t empty0, int chunks) {
  using Ops = typename Cfg::Ops;
  constexpr int kMTiles = Cfg::kMTiles;
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  const ResidueParams& rw = p.dim[2].residue[0];
  // The packed weights, in bytes: float32's layout (wgmma_weight_layout.h: per (tap,
  // chunk) cout_padded x 32 floats, k-step s of the chunk 2 KB on, its lo part 4 KB
  // on), or the half form's [group][tap][chunk][target channels x 32 bytes]
  // (half_window_weights.h: a group is taps x cin_padded x cout_padded x 2 bytes, the
  // number packed_group_stride counts in floats for float32).
  constexpr int kChannelBytes = Ops::kHalf ? 32 : kWeightFloatsPerChannel * 4;
  const int64_t weight_chunk_step = static_cast<int64_t>(p.cout_padded) * kChannelBytes;
  RingPosition ring;  // over all the block's tiles
  for (int64_t index = blockIdx.x; index < plan.tiles; index += gridDim.x) {
    const WindowTile tile = window_tile<kMTiles>(plan, index);
    const char* weights = static_cast<const char*>(packed_weight) +
                          tile.group * p.packed_group_stride * (Ops::kHalf ? 1 : 4) +
                          tile.channel0 * kChannelBytes;
    // The packed weights of every width tap for the k-step (float32: hi and lo).
    const auto copy_weights = [&](uint32_t destination, int, int td, int th, int k_step,
                                  uint32_t full) {
      const int chunk = Ops::kHalf ? k_step : k_step >> 1;
      const int s = Ops::kHalf ? 0 : k_step & 1;
      const int64_t tap_dh =
          (rd.first_tap + td * rd.tap_step) * p.kernel_h + rh.first_tap + th * rh.tap_step;
      for (int tw = 0; tw < rw.taps; ++tw) {
        const int64_t tap = tap_dh * p.kernel_w + rw.first_tap + tw * rw.tap_step;
        const char* hi =
            weights + (tap * chunks + chunk) * weight_chunk_step + s * Cfg::kTapWeightBytes;
        const uint32_t tap_destination = destination + tw * Cfg::kTapBytes;
        bulk_copy(tap_destination, hi, Cfg::kTapWeightBytes, full);
        if constexpr (!Ops::kHalf) {
          // The lo part: the chunk's second 64 x 16 floats.
          bulk_copy(tap_destination + Cfg::kTapWeightBytes, hi + 2 * Cfg::kTapWeightBytes,
                    Cfg::kTapWeightBytes, full);
        }
      }
    };
    produce_window_stages<Ops, 1>(p, plan, tile,
                                  window_columns_tile_taps(p, plan, tile.qd, tile.column0),
                                  planes, shared_base, full0, empty0, rw.taps * Cfg::kTapBytes,
                                  ring, copy_weights);
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_shifted_window_kernel(const __grid_constant__ PhaseProblem p,
                                const ShiftedWindowPlan plan, const void* __restrict__ planes,
                                const void* __restrict__ packed_weight,
                                const float* __restrict__ bias,
                                typename Cfg::Ops::Output* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ops = typename Cfg::Ops;
  constexpr int kN = Cfg::kN;
  constexpr int kMTiles = Cfg::kMTiles;
  using Mma = typename Cfg::Mma;
  extern __shared__ __align__(1024) float shared[];
  __shared__ __align__(8) uint64_t barriers[2 * Cfg::kMaxSlots];
  const int tid = threadIdx.x;
  const int slots = plan.slots;
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[Cfg::kMaxSlots]);
  // One producer thread: its arrival and the bulk copies' bytes fill a slot.
  init_slot_barriers(full0, empty0, slots, Cfg::kComputeThreads, 1);

  const ResidueParams& rw = p.dim[2].residue[0];
  const int chunks = p.cin_padded / 16;  // k-chunks of 16 source channels
  const uint32_t plane_window_bytes = 16 * plan.window_pitch;
  const uint32_t window_bytes = Ops::kPlanesPerStep * plane_window_bytes;

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    if (tid != 0) return;
    produce_shifted_window_tiles<Cfg>(p, plan, planes, packed_weight, shared_base, full0, empty0,
                                      chunks);
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  const int ctid = tid - 128;
  const int warpgroup = ctid >> 7;
  // The chain restarts with the accumulate flag off rather than with zeroed
  // registers: only wgmmas write acc, so ptxas does not wait for them to drain at
  // the loop's back edge (it did, C7517, when the flush zeroed acc).
  // (total unused, and dropped, in the half form: its chain is the whole tile.)
  float acc[kMTiles][Mma::kAccumulators], total[kMTiles][Mma::kAccumulators];
  // Stages consumed by this block, over all its tiles: counters, not a division by the
  // slot count per stage (ncu: a quarter of the half form's stage loop, on its critical
  // path between one stage's wait and the next stage's wgmmas).
  RingPosition ring;
  // Width tap tw's products: its weights, the stage's window `shift` bytes on.
  const auto tap_products = [&](uint32_t stage, uint32_t columns, int tw, uint32_t shift,
                                int accumulate) {
  // m-tile mt's weights: 64 rows (8 core-matrix groups of 256 bytes) per m-tile on.
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      Ops::template products<Mma>(
          acc[mt], stage + window_bytes + tw * Cfg::kTapBytes + mt * kWindowBlockChannels * 32,
          Cfg::kTapWeightBytes, columns + shift, plane_window_bytes, accumulate);
    }
  };
  // The fixed taps' shifts, the same every stage.
  const uint32_t first_shift = 16 * (rw.first_shift - plan.min_width_shift);
  const uint32_t shift_step = 16 * rw.shift_step;
  for (int64_t index = blockIdx.x; index < plan.tiles; index += gridDim.x) {
    const WindowTile tile = window_tile<kMTiles>(plan, index);
    // The producer's walk: the tile's taps (tile_taps.h).
    const int stages = window_tile_stages<Ops, 1>(
        p, window_columns_tile_taps(p, plan, tile.qd, tile.column0));
    zero_total(total);
    // The half form's total is its chain, which a tile of no stages (output padding past
    // the source) never starts.
    if constexpr (Ops::kHalf) {
      if (stages == 0) zero_total(acc);
    }
    int pending_slot = -1, chain_stages = 0;
    for (int stage_index = 0; stage_index < stages; ++stage_index, ring.advance(slots)) {
      const int slot = ring.slot;
      mbarrier_wait(full0 + 8 * slot, ring.phase);
      const uint32_t stage = shared_base + slot * plan.stage_bytes;
      const uint32_t columns = stage + 16 * warpgroup * kN;
      wgmma_fence();
      int accumulate = chain_stages == 0 ? 0 : 1;
      if constexpr (Cfg::kFixedWidthTaps > 0) {
#pragma unroll
        for (int tw = 0; tw < Cfg::kFixedWidthTaps; ++tw) {
          tap_products(stage, columns, tw, first_shift + tw * shift_step, tw > 0 || accumulate);
        }
      } else {
        for (int tw = 0; tw < rw.taps; ++tw) {
          const uint32_t shift = 16 * (rw.first_shift + tw * rw.shift_step - plan.min_width_shift);
          tap_products(stage, columns, tw, shift, accumulate);
          accumulate = 1;
        }
      }
      wgmma_commit();
      if (++chain_stages == plan.flush_stages || stage_index + 1 == stages) {
        wgmma_wait<0>();
        fence_accumulators(acc);
        if (pending_slot >= 0) mbarrier_arrive(empty0 + 8 * pending_slot);
        mbarrier_arrive(empty0 + 8 * slot);
        pending_slot = -1;
        chain_stages = 0;
        if constexpr (!Ops::kHalf) add_chain_to_total(total, acc);
      } else {
        // The previous stage's wgmmas are done: its slot can be refilled.
        wgmma_wait<1>();
        if (pending_slot >= 0) mbarrier_arrive(empty0 + 8 * pending_slot);
        pending_slot = slot;
      }
    }
    // (The last stage flushed: nothing is in flight. Said again for ptxas, which
    // otherwise drains the wgmmas at every iteration's exit test.)
    wgmma_wait<0>();

    if constexpr (Ops::kHalf) {
      if (plan.park_bytes > 0) {  // only where the output lines are aligned
        store_parked_window_tile<Cfg>(p, plan, tile, acc, ctid, bias, output,
                                      reinterpret_cast<uint16_t*>(reinterpret_cast<char*>(shared) +
                                                                  plan.slots * plan.stage_bytes));
        continue;
      }
    }
    store_window_tile<Cfg>(p, plan, tile, Ops::kHalf ? acc : total, ctid, bias, output);
  }
#endif
}

}  // namespace ct3d::cuda
