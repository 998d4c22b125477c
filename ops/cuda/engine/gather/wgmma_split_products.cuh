// The block shape, the slot barriers, the accumulator chain and the 3xTF32 products
// of both wgmma mainloops (wgmma_kernel.cuh,
// wgmma_reuse_kernel.cuh) for one k-step of one m-tile: lo*hi, hi*lo, hi*hi (hi*hi
// alone where the operands are exact in TF32), A from this lane's split registers,
// B from the packed weights in shared memory.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"

namespace ct3d::cuda {

// The block shape both wgmma mainloops share: warpgroup 0 loads, warpgroups 1 and 2
// compute kMTiles m64 tiles of positions each against the block's kN output channels.
// kExact: every operand is a TF32 value (widened float16 or bfloat16): the lo parts are
// zero, and hi*hi alone is exact.
template <int kChannels, int kMTilesPerWarpgroup, bool kExact>
struct WgmmaBlock {
  static constexpr bool kExactOperands = kExact;
  static constexpr int kN = kChannels;  // output channels of a block
  static constexpr int kMTiles = kMTilesPerWarpgroup;
  static constexpr int kBlockChannels = kChannels;
  static constexpr bool kPackPositionsOnM = false;
  static constexpr int kPackWgmmaChannels = kChannels;
  static constexpr int kComputeWarpgroups = 2;
  static constexpr int kBlockPositions = 64 * kMTiles * kComputeWarpgroups;
  static constexpr int kThreads = 128 * (1 + kComputeWarpgroups);
  static constexpr int kComputeThreads = 128 * kComputeWarpgroups;
  // Registers after setmaxnreg: 128 x 56 + 256 x 224 <= 64 K.
  static constexpr int kProducerRegisters = 56;
  static constexpr int kComputeRegisters = 224;
  static_assert(kN % 8 == 0 && kN <= 128, "wgmma N");
};

// Slot s's barriers: full0 + 8 s completes when the producers' arrivals (by default the
// 128 producers' copies and one more, with the bulk copies' bytes) have come and the
// bytes have landed; empty0 + 8 s when every compute thread is done with the slot. Ends
// with a block-wide barrier.
__device__ __forceinline__ void init_slot_barriers(uint32_t full0, uint32_t empty0, int slots,
                                                   int compute_threads,
                                                   int producer_arrivals = 128 + 1) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < slots; ++s) {
      mbarrier_init(full0 + 8 * s, producer_arrivals);
      mbarrier_init(empty0 + 8 * s, compute_threads);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
}

// Row of m-tile 0 for compute thread ctid (lane g = (ctid % 32) / 4): warpgroup
// ctid / 128 owns kMTiles x 64 rows; m-tile mt's rows are this + 64 mt and + 8.
template <int kMTiles>
__device__ __forceinline__ int compute_row_base(int ctid) {
  const int warp = ctid >> 5;
  return (warp >> 2) * 64 * kMTiles + (warp & 3) * 16 + ((ctid & 31) >> 2);
}

// Keeps the compiler from moving accesses of the accumulators across wgmma_wait.
template <int kMTiles, int kAccumulators>
__device__ __forceinline__ void fence_accumulators(float (&acc)[kMTiles][kAccumulators]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) fence_registers(acc[mt]);
}

// A gathering mainloop's stages two per trip, so that each of its two fragment sets is
// a fixed set of registers (wgmma reads them asynchronously): step(it, mine, other)
// issues stage it with `mine` and lets go of `other`. Returns with no wgmma in flight.
template <class Fragments, class Step>
__device__ __forceinline__ void run_stage_pairs(int stages, Fragments (&fragments)[2],
                                                Step&& step) {
  int it = 0;
  for (; it + 1 < stages; it += 2) {
    step(it, fragments[0], fragments[1]);
    step(it + 1, fragments[1], fragments[0]);
  }
  if (it < stages) step(it, fragments[0], fragments[1]);
  wgmma_wait<0>();
}

// Both accumulator sets start at zero: the chain the wgmmas add into, and the total.
template <int kMTiles, int kAccumulators>
__device__ __forceinline__ void zero_chains(float (&acc)[kMTiles][kAccumulators],
                                            float (&total)[kMTiles][kAccumulators]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) acc[mt][i] = total[mt][i] = 0.f;
}

// The tensor core truncates as it accumulates: a finished chain (at most 128 k) is
// added into the float32 total and restarted.
template <int kMTiles, int kAccumulators>
__device__ __forceinline__ void add_chain(float (&total)[kMTiles][kAccumulators],
                                          float (&acc)[kMTiles][kAccumulators]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) {
      total[mt][i] += acc[mt][i];
      acc[mt][i] = 0.f;
    }
}

// A tile's float32 total at zero (the window kernels: their chains start with wgmma's
// accumulate flag off, so only the total needs it).
template <int kMTiles, int kAccumulators>
__device__ __forceinline__ void zero_total(float (&total)[kMTiles][kAccumulators]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[mt][i] = 0.f;
}

// The same sum for chains that restart with wgmma's accumulate flag off (the window
// kernels): the chain is left as it is.
template <int kMTiles, int kAccumulators>
__device__ __forceinline__ void add_chain_to_total(float (&total)[kMTiles][kAccumulators],
                                                   const float (&acc)[kMTiles][kAccumulators]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[mt][i] += acc[mt][i];
}

// Descriptor of k-step s of a chunk's packed hi (or lo) weights for blocks of kN
// channels (wgmma_weight_layout.h).
template <int kN>
__device__ __forceinline__ uint64_t chunk_weight_descriptor(uint32_t weights, int s) {
  return matrix_descriptor(weights + s * (kN / 8) * 256, 128, 256);
}

// One k-step's products for A = a_hi + a_lo (this lane's four TF32 values of wgmma's
// A fragment) and B's packed hi and lo descriptors.
template <int kN, bool kExact>
__device__ __forceinline__ void split_products(float (&acc)[Wgmma<kN>::kAccumulators],
                                               const uint32_t (&a_hi)[4], const uint32_t (&a_lo)[4],
                                               uint64_t b_hi, uint64_t b_lo) {
  if constexpr (!kExact) {
    Wgmma<kN>::run(acc, a_lo, b_hi, 1);
    Wgmma<kN>::run(acc, a_hi, b_lo, 1);
  }
  Wgmma<kN>::run(acc, a_hi, b_hi, 1);
}

// hi, lo: a lane's 8 values of rows g and g + 8 of one chunk, element 2s + half of
// each row belonging to k-step s; as wgmma's A: {row g, k t}, {row g + 8, k t},
// {row g, k t + 4}, {row g + 8, k t + 4}.
template <int kN, bool kExact>
__device__ __forceinline__ void split_products(float (&acc)[Wgmma<kN>::kAccumulators],
                                               const uint32_t (&hi)[8], const uint32_t (&lo)[8],
                                               int s, uint64_t b_hi, uint64_t b_lo) {
  const uint32_t a_hi[4] = {hi[2 * s], hi[4 + 2 * s], hi[2 * s + 1], hi[5 + 2 * s]};
  const uint32_t a_lo[4] = {lo[2 * s], lo[4 + 2 * s], lo[2 * s + 1], lo[5 + 2 * s]};
  split_products<kN, kExact>(acc, a_hi, a_lo, b_hi, b_lo);
}

}  // namespace ct3d::cuda
