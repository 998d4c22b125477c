#include "ops/cpu/gemm_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>
#else
#include <c10/util/Exception.h>
#endif

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

namespace ct3d::cpu {

#if defined(__x86_64__)
namespace {

constexpr int kRows = 8;      // rows of C per micro-tile
constexpr int kColumns = 32;  // columns of C per micro-tile: two 16-float vectors
constexpr int64_t kDepth = 256;  // reduction per pass over C

// One micro-tile: rows x (up to) 32 columns of C, the full reduction over k.
// `mask0`/`mask1` cover the columns that exist (the last tile may be narrower).
template <int kTileRows>
__attribute__((target("avx512f"))) void micro_tile(int64_t k, const float* a, int64_t lda,
                                                   const float* b, int64_t ldb, float* c,
                                                   int64_t ldc, bool accumulate, __mmask16 mask0,
                                                   __mmask16 mask1) {
  __m512 acc[kTileRows][2];
#pragma GCC unroll 8
  for (int i = 0; i < kTileRows; ++i) {
    if (accumulate) {
      acc[i][0] = _mm512_maskz_loadu_ps(mask0, c + i * ldc);
      acc[i][1] = _mm512_maskz_loadu_ps(mask1, c + i * ldc + 16);
    } else {
      acc[i][0] = _mm512_setzero_ps();
      acc[i][1] = _mm512_setzero_ps();
    }
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m512 b0 = _mm512_maskz_loadu_ps(mask0, b + kk * ldb);
    const __m512 b1 = _mm512_maskz_loadu_ps(mask1, b + kk * ldb + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kTileRows; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i * lda + kk]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kTileRows; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, mask0, acc[i][0]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, mask1, acc[i][1]);
  }
}

// The same for matrices at most 16 columns wide (one vector per row): twice the
// rows, so that the FMAs per load stay the same (a weight gradient with 16 input
// channels wasted half of every two-vector tile).
template <int kTileRows>
__attribute__((target("avx512f"))) void narrow_tile(int64_t k, const float* a, int64_t lda,
                                                    const float* b, int64_t ldb, float* c,
                                                    int64_t ldc, bool accumulate, __mmask16 mask) {
  __m512 acc[kTileRows];
#pragma GCC unroll 16
  for (int i = 0; i < kTileRows; ++i) {
    acc[i] = accumulate ? _mm512_maskz_loadu_ps(mask, c + i * ldc) : _mm512_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m512 b0 = _mm512_maskz_loadu_ps(mask, b + kk * ldb);
#pragma GCC unroll 16
    for (int i = 0; i < kTileRows; ++i) {
      acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + kk]), b0, acc[i]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kTileRows; ++i) _mm512_mask_storeu_ps(c + i * ldc, mask, acc[i]);
}

constexpr int kNarrowRows = 16;
using NarrowTile = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*,
                            int64_t, bool, __mmask16);
template <int... kRowCounts>
constexpr std::array<NarrowTile, sizeof...(kRowCounts)> narrow_tiles(
    std::integer_sequence<int, kRowCounts...>) {
  return {narrow_tile<kRowCounts + 1>...};
}
constexpr auto kNarrowTiles = narrow_tiles(std::make_integer_sequence<int, kNarrowRows>{});

using MicroTile = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t,
                           bool, __mmask16, __mmask16);
constexpr MicroTile kMicroTiles[kRows + 1] = {nullptr,       micro_tile<1>, micro_tile<2>,
                                              micro_tile<3>, micro_tile<4>, micro_tile<5>,
                                              micro_tile<6>, micro_tile<7>, micro_tile<8>};

__mmask16 mask_of(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

}  // namespace

bool has_avx512() {
  // CT3D_CPU_NO_AVX512=1 takes the BLAS path anyway (the tests run both paths).
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                std::getenv("CT3D_CPU_NO_AVX512") == nullptr;
  return supported;
}

void gemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  if (n <= 16) {
    const __mmask16 mask = mask_of(n);
    for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
      const int64_t depth = std::min<int64_t>(kDepth, k - k0);
      for (int64_t m0 = 0; m0 < m; m0 += kNarrowRows) {
        const int64_t rows = std::min<int64_t>(kNarrowRows, m - m0);
        kNarrowTiles[rows - 1](depth, a + m0 * lda + k0, lda, b + k0 * ldb, ldb, c + m0 * ldc,
                               ldc, accumulate || k0 > 0, mask);
      }
    }
    return;
  }
  // The reduction in blocks of kDepth, then columns: a block's 32-column panel of B
  // (kDepth x 32 floats, 32 KB) stays in L1 while every row block of A streams past.
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    const int64_t depth = std::min<int64_t>(kDepth, k - k0);
    for (int64_t n0 = 0; n0 < n; n0 += kColumns) {
      const int64_t width = std::min<int64_t>(kColumns, n - n0);
      const __mmask16 mask0 = mask_of(width), mask1 = mask_of(width - 16);
      for (int64_t m0 = 0; m0 < m; m0 += kRows) {
        const int64_t rows = std::min<int64_t>(kRows, m - m0);
        kMicroTiles[rows](depth, a + m0 * lda + k0, lda, b + k0 * ldb + n0, ldb,
                          c + m0 * ldc + n0, ldc, accumulate || k0 > 0, mask0, mask1);
      }
    }
  }
}

#else  // not x86-64: no AVX-512; the callers use BLAS.

bool has_avx512() { return false; }

void gemm_avx512(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*,
                 int64_t, bool) {
  TORCH_INTERNAL_ASSERT(false, "gemm_avx512 called on a CPU without AVX-512");
}

#endif

}  // namespace ct3d::cpu
