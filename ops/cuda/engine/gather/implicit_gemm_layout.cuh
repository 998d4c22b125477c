// Shared-memory layout of the implicit GEMM's input tiles, common to the pipeline
// that fills them and the warp tiles that read them.
#pragma once

#include "ops/cuda/engine/problem/block_k.h"

namespace ct3d::cuda {

constexpr int kRowFloats = kBlockK;            // a row of one stage: 16 channels
constexpr int kChunksPerRow = kRowFloats / 4;  // 16-byte chunks in a row
// Packed weights of one stage, per output channel: 16 input channels x {hi, lo}.
constexpr int kWeightFloatsPerChannel = 2 * kBlockK;

// Offset of 16-byte chunk `chunk` of row `row` in an input tile. The chunk index
// is XOR-swizzled with bits 1-2 of the row: 8 consecutive rows copying the same
// chunk, and 2 consecutive rows loading 4 chunks as fragments, both cover all 32
// banks. Rows a multiple of 8 apart share the swizzle.
__device__ __forceinline__ int row_chunk_offset(int row, int chunk) {
  return row * kRowFloats + ((chunk ^ ((row >> 1) & 3)) << 2);
}

}  // namespace ct3d::cuda
