// One tile's transform along one of its two axes, for the kernels (winograd_transforms.cuh)
// and the host tests alike: out = M x in along a tile's rows or its columns, with M one
// of a plan's matrices (its first kOut rows and kIn columns); nvcc contracts each step
// into one fused multiply-add. A dimension that is not transformed (one point) is copied.
#pragma once

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/winograd/winograd_plan.h"

// Unrolled in device code, so that the tile's arrays stay in registers (the host
// compiler does not know the pragma).
#ifdef __CUDA_ARCH__
#define CT3D_UNROLL _Pragma("unroll")
#else
#define CT3D_UNROLL
#endif

namespace ct3d::cuda {

// out[r][j] = sum over i of m[j][i] in[r][i]: along each row (the width).
template <int kRows, int kIn, int kOut, class T, class M>
CT3D_HOST_DEVICE void transform_rows(const M (&m)[kMaxWinogradPoints][kMaxWinogradPoints],
                                     const T (&in)[kRows][kIn], T (&out)[kRows][kOut]) {
  CT3D_UNROLL
  for (int r = 0; r < kRows; ++r) {
    CT3D_UNROLL
    for (int j = 0; j < kOut; ++j) {
      T sum = 0;
      CT3D_UNROLL
      for (int i = 0; i < kIn; ++i) sum += static_cast<T>(m[j][i]) * in[r][i];
      out[r][j] = kIn == 1 ? in[r][0] : sum;
    }
  }
}

// out[j][c] = sum over i of m[j][i] in[i][c]: along each column (the height).
template <int kIn, int kOut, int kColumns, class T, class M>
CT3D_HOST_DEVICE void transform_columns(const M (&m)[kMaxWinogradPoints][kMaxWinogradPoints],
                                        const T (&in)[kIn][kColumns], T (&out)[kOut][kColumns]) {
  CT3D_UNROLL
  for (int j = 0; j < kOut; ++j) {
    CT3D_UNROLL
    for (int c = 0; c < kColumns; ++c) {
      T sum = 0;
      CT3D_UNROLL
      for (int i = 0; i < kIn; ++i) sum += static_cast<T>(m[j][i]) * in[i][c];
      out[j][c] = kIn == 1 ? in[0][c] : sum;
    }
  }
}

}  // namespace ct3d::cuda
