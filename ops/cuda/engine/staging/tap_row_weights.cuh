// What the packing kernels of the (width tap, channel) row forms share (tap_rows_launch.cu,
// strided_lines_launch.cu): where a packed element lies among a k-step's wgmma K-major
// core matrices (8 rows x 4 values; the k-step's two halves 128 bytes apart, 8-row groups
// 256 bytes apart; hi then lo), the weight it holds, the TF32 split of the value written
// there, and the launch. The kernels differ only in how they name a k-step's taps and
// channels.
#pragma once

#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ops/cuda/engine/instructions/ptx_helpers.cuh"     // round_to_tf32
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"  // WeightLayout

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

// The weight of `group`'s source channel `in_channel` and target channel `channel` at tap
// (kd, kh, kw) of a kernel kernel_h x kernel_w high and wide (the caller checks that all
// lie inside).
__device__ __forceinline__ float weight_at_tap(const float* __restrict__ weight,
                                               const WeightLayout& layout, int64_t group,
                                               int in_channel, int channel, int kd, int kh, int kw,
                                               int kernel_h, int kernel_w) {
  const int64_t tap = (kd * int64_t{kernel_h} + kh) * kernel_w + kw;
  return weight[group * layout.group_stride + in_channel * layout.reduce_stride +
                channel * layout.target_stride + tap];
}

// Launches `kernel(weight, packed, total, params)`, a grid-stride loop over the `total`
// packed floats, on `stream`; returns the packed weights.
template <class Params>
at::Tensor launch_tap_row_packing(void (*kernel)(const float*, float*, int64_t, Params),
                                  const Params& params, int64_t total, const at::Tensor& weight,
                                  cudaStream_t stream) {
  at::Tensor packed = at::empty({total}, weight.options());
  constexpr int kPackThreads = 256;
  const int64_t blocks = std::min<int64_t>((total + kPackThreads - 1) / kPackThreads, 4096);
  kernel<<<blocks, kPackThreads, 0, stream>>>(weight.const_data_ptr<float>(),
                                              packed.mutable_data_ptr<float>(), total, params);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return packed;
}

}  // namespace ct3d::cuda
