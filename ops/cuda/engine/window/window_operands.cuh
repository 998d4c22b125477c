// How the shifted-window kernels (wgmma_shifted_window_kernel.cuh,
// wgmma_tap_rows_kernel.cuh) hold their operands, and one k-step's products:
// - SplitTf32Operands: float32 split into TF32 hi and lo (quad planes, quad_staging.h).
//   A k-step is 8 channels in 4 planes (hi and lo of two quads), the weights hi then
//   lo; three products (lo*hi, hi*lo, hi*hi), hi*hi alone where the operands are exact;
//   the weights on M.
// - HalfOperands: float16 or bfloat16 as they are (octet planes, quad_staging.h). A
//   k-step is 16 channels in 2 planes of 8, the weights once; one product.
// Both give every position and core-matrix row 16 bytes of K per plane, so the
// windows, their shifts and the weights' core matrices are the same bytes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "ops/cuda/engine/instructions/element_conversion.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"

namespace ct3d::cuda {

template <bool kExact>
struct SplitTf32Operands {
  using Output = float;
  static constexpr bool kRawQuads = false;
  static constexpr bool kHalf = false;
  static constexpr int kStepChannels = 8;
  static constexpr int kPlanesPerStep = 4;
  static constexpr int kWeightParts = 2;  // hi, lo
  template <int kN>
  using Mma = WgmmaShared<kN>;

  static __device__ __forceinline__ float to_output(float value) { return value; }

  // Small terms first; accumulate 0 starts a new chain. A: the weights' hi part at
  // `weights`, the lo part `weight_part_bytes` on (K-major core matrices, the k-step's
  // two halves 128 bytes apart, 8-row groups 256 bytes apart). B: the window's columns,
  // hi quads at `columns`, lo quads one plane (plane_bytes) on, the k-step's second
  // quad two planes on.
  template <class Mma, int kAccumulators>
  static __device__ __forceinline__ void products(float (&acc)[kAccumulators], uint32_t weights,
                                                  uint32_t weight_part_bytes, uint32_t columns,
                                                  uint32_t plane_bytes, int accumulate) {
    split_products<Mma>(acc, matrix_descriptor(weights, 128, 256),
                        matrix_descriptor(weights + weight_part_bytes, 128, 256),
                        matrix_descriptor(columns, 2 * plane_bytes, 128),
                        matrix_descriptor(columns + plane_bytes, 2 * plane_bytes, 128), accumulate);
  }

 private:
  // lo*hi, hi*lo, hi*hi of A = a_hi + a_lo and B = b_hi + b_lo (hi*hi alone where the
  // operands are exact).
  template <class Mma, int kAccumulators>
  static __device__ __forceinline__ void split_products(float (&acc)[kAccumulators], uint64_t a_hi,
                                                        uint64_t a_lo, uint64_t b_hi, uint64_t b_lo,
                                                        int accumulate) {
    if constexpr (!kExact) {
      Mma::run(acc, a_lo, b_hi, accumulate);
      Mma::run(acc, a_hi, b_lo, 1);
      accumulate = 1;
    }
    Mma::run(acc, a_hi, b_hi, accumulate);
  }
};

// - RawTf32Operands (the tap-columns form's default, A from registers; KERNEL_LOG "unsplit quad
// planes"):
//   float32 as it is, in quad planes of 4 channels (quad_staging.h, stage_quads); a
//   k-step is 8 channels in 2 planes, split into hi and lo in the compute lanes'
//   registers; the weights hi then lo, as SplitTf32Operands'.
struct RawTf32Operands {
  using Output = float;
  static constexpr bool kHalf = false;
  static constexpr bool kRawQuads = true;
  static constexpr int kStepChannels = 8;
  static constexpr int kPlanesPerStep = 2;
  static constexpr int kWeightParts = 2;
  template <int kN>
  using Mma = Wgmma<kN>;  // A from registers

  static __device__ __forceinline__ float to_output(float value) { return value; }
};

template <class Element>
struct HalfOperands {
  using Output = Element;
  static constexpr bool kHalf = true;
  static constexpr bool kRawQuads = false;
  static constexpr int kStepChannels = 16;
  static constexpr int kPlanesPerStep = 2;
  static constexpr int kWeightParts = 1;
  template <int kN>
  using Mma = WgmmaSharedHalf<Element, kN>;

  static __device__ __forceinline__ Element to_output(float value) {
    return element_from_float<Element>(value);
  }

  // A: the weights at `weights` (core matrices as SplitTf32Operands', 8 values per
  // row). B: the window's columns, channels 0-7 of the k-step at `columns`, 8-15 one
  // plane on.
  template <class Mma, int kAccumulators>
  static __device__ __forceinline__ void products(float (&acc)[kAccumulators], uint32_t weights,
                                                  uint32_t, uint32_t columns, uint32_t plane_bytes,
                                                  int accumulate) {
    Mma::run(acc, matrix_descriptor(weights, 128, 256),
             matrix_descriptor(columns, plane_bytes, 128), accumulate);
  }
};

}  // namespace ct3d::cuda
