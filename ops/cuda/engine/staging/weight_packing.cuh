// The weight-packing pass of the gathering implicit GEMM, run on every call: the
// weights packed as mma fragments and TF32-split. Memory-bound, well under a
// percent of the convolution.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/gather/wgmma_weight_layout.h"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Packs the weights (C_in, C_out/groups, kD, kH, kW), read through `layout` (the
// forward reduces over C_in, the input gradient over C_out), as the GEMM's weight
// fragments, zero in the padding: [group][tap][16-channel chunk][target channel
// tile][tile layout]. Below, "cin" is the reduced channel and "cout" the target one. The tile
// layout is the warp tile's (implicit_gemm_warp_tiles.cuh):
// - channels on M (16-channel tiles): [hi, lo][k-step][lane][4]; register e of
//   lane (g, t) in k-step s is output channel g + 8 (e % 2) and input channel
//   4 t + 2 s + e / 2 of the chunk (the mma's row-major A fragment);
// - positions on M (8-channel tiles): [hi, lo][lane][4]; element e of lane (g, t)
//   is output channel g and input channel 4 t + e (the col-major B fragments of
//   both k-steps).
// - wgmma (wgmma_n > 0): wgmma_weight_layout.h, for blocks of wgmma_n channels.
// Every way a (tap, chunk) holds 2 x 16 floats per padded output channel.
//
// With fold > 1, each GEMM group is `fold` consecutive groups of the convolution
// (cin_per_group and cout_per_group are the convolution's): the packed weights are
// block-diagonal, zero between different convolution groups. `nonfinite`, when
// set, is cleared for the staging pass (saves a fill launch).
__global__ void pack_weight_fragments_kernel(const float* __restrict__ weight,
                                             const WeightLayout layout, float* __restrict__ packed,
                                             int64_t total, int cin_per_group, int cout_per_group,
                                             int fold, int cin_padded, int cout_padded, int taps,
                                             bool positions_on_m, int wgmma_n, int* nonfinite) {
  // The staging pass, queued behind this kernel, sets the flag on a non-finite input.
  if (nonfinite != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *nonfinite = 0;
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    const int e = static_cast<int>(index & 3);
    const int lane = static_cast<int>((index >> 2) & 31);
    int col, in_chunk;
    bool lo_part;
    int64_t rest;
    if (wgmma_n > 0) {
      const int64_t per_chunk = static_cast<int64_t>(cout_padded) * kWeightFloatsPerChannel;
      const WgmmaWeightElement element =
          wgmma_weight_element(static_cast<int>(index % per_chunk), wgmma_n);
      col = element.channel;
      in_chunk = element.in_chunk;
      lo_part = element.lo;
      rest = index / per_chunk;
    } else if (positions_on_m) {
      lo_part = (index >> 7) & 1;
      rest = index >> 8;
      const int output_tiles = cout_padded / 8;
      col = static_cast<int>(rest % output_tiles) * 8 + (lane >> 2);
      rest /= output_tiles;
      in_chunk = 4 * (lane & 3) + e;
    } else {
      const int k_step = static_cast<int>((index >> 7) & 1);
      lo_part = (index >> 8) & 1;
      rest = index >> 9;
      const int output_tiles = cout_padded / 16;
      col = static_cast<int>(rest % output_tiles) * 16 + (lane >> 2) + 8 * (e & 1);
      rest /= output_tiles;
      in_chunk = 4 * (lane & 3) + 2 * k_step + (e >> 1);
    }
    const int chunks = cin_padded / kBlockK;
    const int ic = static_cast<int>(rest % chunks) * kBlockK + in_chunk;
    rest /= chunks;
    const int tap = static_cast<int>(rest % taps);
    const int64_t group = rest / taps;
    float value = 0.f;
    const bool same_group = ic / cin_per_group == col / cout_per_group;
    if (ic < fold * cin_per_group && col < fold * cout_per_group && same_group) {
      const int64_t conv_group = group * fold + ic / cin_per_group;
      value =
          weight[conv_group * layout.group_stride + (ic % cin_per_group) * layout.reduce_stride +
                 (col % cout_per_group) * layout.target_stride + tap];
    }
    const float value_hi = round_to_tf32(value);
    packed[index] = lo_part ? value - value_hi : value_hi;
  }
}

}  // namespace ct3d::cuda
