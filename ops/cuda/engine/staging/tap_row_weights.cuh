// What the packing kernels of the (width tap, channel) row forms share (tap_rows_launch.cu,
// strided_lines_launch.cu): where a packed element lies among a k-step's wgmma K-major
// core matrices (8 rows x 4 values; the k-step's two halves 128 bytes apart, 8-row groups
// 256 bytes apart; hi then lo), and the TF32 split of the value written there.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/instructions/ptx_helpers.cuh"  // round_to_tf32

namespace ct3d::cuda {

// Element `index` of weights packed [...][hi, lo][rows][8]: value e of its half's 4,
// `half` (k 0-3 or 4-7), its row, the hi or lo part, and `rest`, the index of its k-step
// in what the caller packs above.
struct TapRowElement {
  int e, half, row;
  bool lo;
  int64_t rest;
};
__device__ __forceinline__ TapRowElement tap_row_element(int64_t index, int rows) {
  TapRowElement element;
  element.e = static_cast<int>(index & 3);
  const int row_in_group = static_cast<int>((index >> 2) & 7);
  element.half = static_cast<int>((index >> 5) & 1);
  int64_t rest = index >> 6;
  element.row = static_cast<int>(rest % (rows / 8)) * 8 + row_in_group;
  rest /= rows / 8;
  element.lo = rest & 1;
  element.rest = rest >> 1;
  return element;
}

// The part of `value` a packed element holds: its TF32 value, or the rest (exact).
__device__ __forceinline__ float tf32_part(float value, bool lo) {
  const float value_hi = round_to_tf32(value);
  return lo ? value - value_hi : value_hi;
}

}  // namespace ct3d::cuda
