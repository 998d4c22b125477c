// How the wgmma weight gradient (weight_gradient_wgmma_kernel.cuh) holds its operands:
// - WgradTf32Operands<exact>: float32. The producers split B (the input) into TF32 hi
//   and lo; each lane loads its four A values (grad_output) and splits them in
//   registers; a k-step is 8 positions, three products (hi*hi alone where exact).
// - WgradHalfOperands<T>: float16 or bfloat16 as they are. B is stored as loaded; A
//   comes by ldmatrix.trans from the channels-last segments; a k-step is 16
//   positions, one product into float32.
// Both: a 16-byte piece of B is one channel's run of K (4 or 8 positions), and a
// k-step's B is kN / 8 groups of two 8-row core matrices (chunk_weight_descriptor),
// so shared memory holds the same bytes in both.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_warp_tiles.cuh"
#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/window/shifted_window_plan.h"

namespace ct3d::cuda {

template <bool kExact>
struct WgradTf32Operands {
  using Element = float;
  using Piece = float4;  // 16 bytes of B: 4 positions of a channel
  static constexpr bool kHalf = false;
  static constexpr bool kExactOperands = kExact;
  static constexpr int kPieceElements = 4;
  static constexpr int kStepPositions = 8;
  static constexpr int kBParts = 2;  // hi, lo (lo unused where exact)
  // The chain is added into the float32 total every 128 positions (products): the
  // tensor core truncates as it accumulates.
  static constexpr int kFlushPositions = 128;
  static constexpr bool kChainFlushes = true;
  // The segments may come by bulk copies (WgradWgmmaProblem::bulk_segments), else
  // cp.async pieces into a padded pitch.
  static constexpr bool kBulkSegments = true;
  template <int kN>
  using Mma = Wgmma<kN>;

  template <int kMTiles>
  struct Fragments {
    uint32_t hi[kMTiles][4], lo[kMTiles][4];
  };

  // wgmma's rows g and g + 8 of a warp's 16 are the block's rows 2g and 2g + 1, so that
  // a lane's two A values at a position are adjacent channels of one tap (output
  // channels even: the launch checks) and come by one 8-byte load (KERNEL_LOG "A rows loaded in
  // pairs"). lane_row: the pair's first row; accumulator_row: where accumulator half `half` (rows
  // g, g + 8) belongs.
  static constexpr int kLaneRows = 1;
  static constexpr int kRowRun = 2;  // rows one lane's load covers
  static __device__ __forceinline__ int lane_row(int lane, int) { return 2 * (lane >> 2); }
  static __device__ __forceinline__ int accumulator_row(int g, int half) { return 2 * g + half; }
  static __device__ __forceinline__ int lane_position(int lane) { return lane & 3; }

  // A piece's hi at `b`, its lo part_bytes on.
  static __device__ __forceinline__ void store_b(char* b, int part_bytes, const Piece& v) {
    uint32_t hi[4], lo[4];
    split_tf32(v, hi, lo);
    *reinterpret_cast<uint4*>(b) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    if constexpr (!kExact) {  // exact operands: no lo products
      *reinterpret_cast<uint4*>(b + part_bytes) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
    }
  }

  // m-tile mt's A of one k-step: {row g, k t}, {row g + 8, k t}, {row g, k t + 4},
  // {row g + 8, k t + 4} in wgmma's rows, two 8-byte loads; `segments` at the lane's
  // first position.
  template <int kMTiles>
  static __device__ __forceinline__ void load_a(Fragments<kMTiles>& f, int mt,
                                                const float* segments, const int (&rows)[1],
                                                int position_step) {
    const float2 k_low = *reinterpret_cast<const float2*>(segments + rows[0]);
    const float2 k_high = *reinterpret_cast<const float2*>(segments + rows[0] + 4 * position_step);
    const float v[4] = {k_low.x, k_low.y, k_high.x, k_high.y};
#pragma unroll
    for (int i = 0; i < 4; ++i) split_tf32(v[i], f.hi[mt][i], f.lo[mt][i]);
  }

  template <int kN, int kMTiles>
  static __device__ __forceinline__ void products(float (&acc)[Wgmma<kN>::kAccumulators],
                                                  const Fragments<kMTiles>& f, int mt,
                                                  uint64_t b_hi, uint64_t b_lo) {
    split_products<kN, kExact>(acc, f.hi[mt], f.lo[mt], b_hi, b_lo);
  }

  template <int kMTiles>
  static __device__ __forceinline__ void hold(Fragments<kMTiles>& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      fence_registers(f.hi[mt]);
      if constexpr (!kExact) fence_registers(f.lo[mt]);
    }
  }
};

template <class T>
struct WgradHalfOperands {
  using Element = T;
  using Piece = uint4;  // 16 bytes of B: 8 positions of a channel
  static constexpr bool kHalf = true;
  static constexpr int kPieceElements = 8;
  static constexpr int kStepPositions = 16;
  static constexpr int kBParts = 1;
  // The chain runs the block's whole reduction (kHalfChainStages says why).
  static constexpr int kFlushPositions = 0;
  static constexpr bool kChainFlushes = false;
  // The segments may come by bulk copies (WgradWgmmaProblem::bulk_segments).
  static constexpr bool kBulkSegments = true;
  template <int kN>
  using Mma = WgmmaHalf<T, kN>;

  template <int kMTiles>
  struct Fragments {
    uint32_t a[kMTiles][4];
  };

  // ldmatrix.x4.trans: lane L gives the address of row L % 8 of 8 x 8 matrix L / 8;
  // matrix j holds rows 8 (j % 2) .. + 7 of the warp's 16 (8 channels of one tap,
  // 16 bytes) at positions 8 (j / 2) + 0..7 of the k-step. Transposed, lane (g, t)
  // receives from matrix j the pair (row g + 8 (j % 2), positions 2t, 2t + 1 +
  // 8 (j / 2)): wgmma's A registers in order.
  static constexpr int kLaneRows = 1;
  static constexpr int kRowRun = 8;
  static __device__ __forceinline__ int lane_row(int lane, int) { return 8 * ((lane >> 3) & 1); }
  static __device__ __forceinline__ int accumulator_row(int g, int half) { return g + 8 * half; }
  static __device__ __forceinline__ int lane_position(int lane) {
    return 8 * (lane >> 4) + (lane & 7);
  }

  static __device__ __forceinline__ void store_b(char* b, int, const Piece& v) {
    *reinterpret_cast<uint4*>(b) = v;
  }

  template <int kMTiles>
  static __device__ __forceinline__ void load_a(Fragments<kMTiles>& f, int mt, const T* segments,
                                                const int (&rows)[1], int) {
    ldmatrix_x4_trans(f.a[mt], shared_address(segments + rows[0]));
  }

  template <int kN, int kMTiles>
  static __device__ __forceinline__ void products(float (&acc)[Mma<kN>::kAccumulators],
                                                  const Fragments<kMTiles>& f, int mt, uint64_t b,
                                                  uint64_t) {
    Mma<kN>::run(acc, f.a[mt], b, 1);
  }

  template <int kMTiles>
  static __device__ __forceinline__ void hold(Fragments<kMTiles>& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) fence_registers(f.a[mt]);
  }
};

}  // namespace ct3d::cuda
