// The two warp tiles of the implicit GEMM: what one warp multiplies per pipeline
// stage (16 input channels of one tap) and how it parks its result for the
// epilogue. Both use 3xTF32 (hi*hi + hi*lo + lo*hi, float32 accumulation) and read
// every fragment with one 16-byte shared-memory load straight into the registers
// the mma reads: the input rows are staged channels-last (implicit_gemm_layout.cuh)
// and the weights packed in the mma's register order (pack_weight_fragments_kernel).
//
// k order: a thread's input fragment of k-step s holds channels 4*lane_k + 2s and
// 4*lane_k + 2s + 1 of the chunk (mma k indices lane_k and lane_k + 4), so one
// 16-byte load of a row chunk gives both k-steps; the weights are packed likewise.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"

namespace ct3d::cuda {

// x = hi + lo, hi x's TF32 bits (x truncated toward zero), lo the exact float32
// remainder (below one TF32 unit of x, the sign of x), of which the tensor core reads
// the TF32 bits. One LOP3 and a FADD: the split sits in the consumers' k-step, per A
// value (rounding hi to nearest halved |lo|'s bound for a third instruction; KERNEL_LOG
// "the TF32 split truncates hi").
__device__ __forceinline__ void split_tf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = __float_as_uint(x) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

__device__ __forceinline__ void split_tf32(const float4& x, uint32_t (&hi)[4], uint32_t (&lo)[4]) {
  split_tf32(x.x, hi[0], lo[0]);
  split_tf32(x.y, hi[1], lo[1]);
  split_tf32(x.z, hi[2], lo[2]);
  split_tf32(x.w, hi[3], lo[3]);
}

__device__ __forceinline__ void as_registers(const float4& v, uint32_t (&r)[4]) {
  r[0] = __float_as_uint(v.x);
  r[1] = __float_as_uint(v.y);
  r[2] = __float_as_uint(v.z);
  r[3] = __float_as_uint(v.w);
}

// One k-step pair of 3xTF32 products into acc. The tensor core truncates when it
// adds into its accumulator, a bias that grows with the reduction length (2e-5 at
// K = 3360). So each stage's products (small terms first) go into a fresh partial,
// added to the running sum by an ordinary round-to-nearest FADD. kExactOperands:
// every operand is a TF32 value (widened float16 or bfloat16), so every lo part is
// zero and hi*hi alone is the exact product.
template <bool kExactOperands>
__device__ __forceinline__ void mma_3xtf32_two_steps(float (&acc)[4], const uint32_t (&a_hi)[2][4],
                                                     const uint32_t (&a_lo)[2][4],
                                                     const uint32_t (&b_hi)[2][2],
                                                     const uint32_t (&b_lo)[2][2]) {
  float partial[4] = {0.f, 0.f, 0.f, 0.f};
  if constexpr (!kExactOperands) {
    mma_tf32_16x8x8(partial, a_lo[0], b_hi[0]);
    mma_tf32_16x8x8(partial, a_hi[0], b_lo[0]);
    mma_tf32_16x8x8(partial, a_lo[1], b_hi[1]);
    mma_tf32_16x8x8(partial, a_hi[1], b_lo[1]);
  }
  mma_tf32_16x8x8(partial, a_hi[0], b_hi[0]);
  mma_tf32_16x8x8(partial, a_hi[1], b_hi[1]);
#pragma unroll
  for (int e = 0; e < 4; ++e) acc[e] += partial[e];
}

// Output channels on the mma's M side (A = weights, 16-channel tiles), positions
// on N (B = input, 8-position tiles): kChannelTiles x kPositionTiles mma tiles.
// A B fragment is two channels of one position, adjacent in a staged row.
// kExact: operands exact in TF32 (mma_3xtf32_two_steps).
template <int kChannelTiles, int kPositionTiles, bool kExact = false>
struct ChannelsOnM {
  static constexpr bool kPositionsOnM = false;
  static constexpr int kChannels = kChannelTiles * 16;
  static constexpr int kPositions = kPositionTiles * 8;
  // Packed weights of one 16-channel tile: [hi, lo][k-step][lane][4].
  static constexpr int kWeightTileFloats = 2 * 2 * 32 * 4;
  // Parked as [channel][position]; a pitch of 8 (mod 32) words makes the float2
  // fragment writes (half a warp at a time) conflict-free.
  static constexpr int kPitch = kPositions + 8;

  float acc[kChannelTiles][kPositionTiles][4] = {};

  // Offset of this lane's fragment in the warp's first input row: rows nt * 8
  // further share bits 1-2 of the row, hence the swizzle.
  static __device__ __forceinline__ int fragment_offset(int lane) {
    return row_chunk_offset(lane >> 2, lane & 3);
  }

  // input: the warp's rows at fragment_offset; weights: the block's weight tile.
  __device__ __forceinline__ void multiply(const float* input, const float* weights, int lane) {
    uint32_t x_hi[kPositionTiles][4], x_lo[kPositionTiles][4];
#pragma unroll
    for (int nt = 0; nt < kPositionTiles; ++nt) {
      split_tf32(*reinterpret_cast<const float4*>(input + nt * 8 * kRowFloats), x_hi[nt], x_lo[nt]);
    }
#pragma unroll
    for (int mt = 0; mt < kChannelTiles; ++mt) {
      const float* fragments = weights + mt * kWeightTileFloats + lane * 4;
      uint32_t w_hi[2][4], w_lo[2][4];
      as_registers(*reinterpret_cast<const float4*>(fragments), w_hi[0]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 128), w_hi[1]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 256), w_lo[0]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 384), w_lo[1]);
#pragma unroll
      for (int nt = 0; nt < kPositionTiles; ++nt) {
        const uint32_t b_hi[2][2] = {{x_hi[nt][0], x_hi[nt][1]}, {x_hi[nt][2], x_hi[nt][3]}};
        const uint32_t b_lo[2][2] = {{x_lo[nt][0], x_lo[nt][1]}, {x_lo[nt][2], x_lo[nt][3]}};
        mma_3xtf32_two_steps<kExact>(acc[mt][nt], w_hi, w_lo, b_hi, b_lo);
      }
    }
  }

  // Accumulator registers 2 half, 2 half + 1: channel lane_row + 8 half, positions
  // 2 lane_k and 2 lane_k + 1.
  __device__ __forceinline__ void park(float* parked, int lane) const {
    const int lane_row = lane >> 2, lane_k = lane & 3;
#pragma unroll
    for (int mt = 0; mt < kChannelTiles; ++mt) {
#pragma unroll
      for (int nt = 0; nt < kPositionTiles; ++nt) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int channel = mt * 16 + lane_row + 8 * half;
          *reinterpret_cast<float2*>(parked + channel * kPitch + nt * 8 + 2 * lane_k) =
              make_float2(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
        }
      }
    }
  }
};

// Positions on the mma's M side (A = input, 16-position tiles), output channels on
// N (B = weights, 8-channel tiles): for channel counts that are a multiple of 8
// but not of 16 (24 would pad to 32 on M: a quarter of the products on zeros).
// An A fragment is rows g and g + 8 of the tile, one 16-byte load each.
template <int kPositionTiles, int kChannelTiles, bool kExact = false>
struct PositionsOnM {
  static constexpr bool kPositionsOnM = true;
  static constexpr int kChannels = kChannelTiles * 8;
  static constexpr int kPositions = kPositionTiles * 16;
  // Packed weights of one 8-channel tile: [hi, lo][lane][4], element e of lane
  // (g, t) being input channel 4t + e to output channel g.
  static constexpr int kWeightTileFloats = 2 * 32 * 4;
  // Parked as [channel][position] by scalar writes: lanes (g, t) hit channel 2t,
  // position g; a pitch of 4 (mod 32) words spreads them over all 32 banks.
  static constexpr int kPitch = kPositions + 4;

  float acc[kPositionTiles][kChannelTiles][4] = {};

  static __device__ __forceinline__ int fragment_offset(int lane) {
    return row_chunk_offset(lane >> 2, lane & 3);
  }

  __device__ __forceinline__ void multiply(const float* input, const float* weights, int lane) {
    uint32_t w_hi[kChannelTiles][4], w_lo[kChannelTiles][4];
#pragma unroll
    for (int nt = 0; nt < kChannelTiles; ++nt) {
      const float* fragments = weights + nt * kWeightTileFloats + lane * 4;
      as_registers(*reinterpret_cast<const float4*>(fragments), w_hi[nt]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 128), w_lo[nt]);
    }
#pragma unroll
    for (int mt = 0; mt < kPositionTiles; ++mt) {
      // Rows g and g + 8 (same swizzle: 8 rows apart).
      uint32_t top_hi[4], top_lo[4], bottom_hi[4], bottom_lo[4];
      split_tf32(*reinterpret_cast<const float4*>(input + mt * 16 * kRowFloats), top_hi, top_lo);
      split_tf32(*reinterpret_cast<const float4*>(input + (mt * 16 + 8) * kRowFloats), bottom_hi,
                 bottom_lo);
      // k-step s: {row g col t, row g+8 col t, row g col t+4, row g+8 col t+4}.
      const uint32_t a_hi[2][4] = {{top_hi[0], bottom_hi[0], top_hi[1], bottom_hi[1]},
                                   {top_hi[2], bottom_hi[2], top_hi[3], bottom_hi[3]}};
      const uint32_t a_lo[2][4] = {{top_lo[0], bottom_lo[0], top_lo[1], bottom_lo[1]},
                                   {top_lo[2], bottom_lo[2], top_lo[3], bottom_lo[3]}};
#pragma unroll
      for (int nt = 0; nt < kChannelTiles; ++nt) {
        const uint32_t b_hi[2][2] = {{w_hi[nt][0], w_hi[nt][1]}, {w_hi[nt][2], w_hi[nt][3]}};
        const uint32_t b_lo[2][2] = {{w_lo[nt][0], w_lo[nt][1]}, {w_lo[nt][2], w_lo[nt][3]}};
        mma_3xtf32_two_steps<kExact>(acc[mt][nt], a_hi, a_lo, b_hi, b_lo);
      }
    }
  }

  // Accumulator register e: position g + 8 (e / 2), channel 2t + e % 2.
  __device__ __forceinline__ void park(float* parked, int lane) const {
    const int lane_row = lane >> 2, lane_k = lane & 3;
#pragma unroll
    for (int mt = 0; mt < kPositionTiles; ++mt) {
#pragma unroll
      for (int nt = 0; nt < kChannelTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int channel = nt * 8 + 2 * lane_k + (e & 1);
          const int position = mt * 16 + lane_row + 8 * (e >> 1);
          parked[channel * kPitch + position] = acc[mt][nt][e];
        }
      }
    }
  }
};

}  // namespace ct3d::cuda
