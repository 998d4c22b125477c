// The block shape and the 3xTF32 products of both wgmma mainloops (wgmma_kernel.cuh,
// wgmma_reuse_kernel.cuh) for one k-step of one m-tile: lo*hi, hi*lo, hi*hi (hi*hi
// alone where the operands are exact in TF32), A from this lane's split registers,
// B from the packed weights in shared memory.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/hopper_ptx.cuh"
#include "ops/cuda/engine/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/wgmma_instructions.cuh"

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

// Descriptor of k-step s of a chunk's packed hi (or lo) weights for blocks of kN
// channels (wgmma_weight_layout.h).
template <int kN>
__device__ __forceinline__ uint64_t chunk_weight_descriptor(uint32_t weights, int s) {
  return matrix_descriptor(weights + s * (kN / 8) * 256, 128, 256);
}

// hi, lo: a lane's 8 values of rows g and g + 8 of one chunk, element 2s + half of
// each row belonging to k-step s; as wgmma's A: {row g, k t}, {row g + 8, k t},
// {row g, k t + 4}, {row g + 8, k t + 4}.
template <int kN, bool kExact>
__device__ __forceinline__ void split_products(float (&acc)[Wgmma<kN>::kAccumulators],
                                               const uint32_t (&hi)[8], const uint32_t (&lo)[8],
                                               int s, uint64_t b_hi, uint64_t b_lo) {
  const uint32_t a_hi[4] = {hi[2 * s], hi[4 + 2 * s], hi[2 * s + 1], hi[5 + 2 * s]};
  if constexpr (!kExact) {
    const uint32_t a_lo[4] = {lo[2 * s], lo[4 + 2 * s], lo[2 * s + 1], lo[5 + 2 * s]};
    Wgmma<kN>::run(acc, a_lo, b_hi, 1);
    Wgmma<kN>::run(acc, a_hi, b_lo, 1);
  }
  Wgmma<kN>::run(acc, a_hi, b_hi, 1);
}

}  // namespace ct3d::cuda
