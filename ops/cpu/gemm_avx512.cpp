#include "ops/cpu/gemm_avx512.h"

#if defined(__x86_64__)
#include "ops/cpu/avx512_vector.h"
#else
#include <c10/util/Exception.h>
#endif

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

#include "ops/options/options.h"

namespace ct3d::cpu {

#if defined(__x86_64__)
namespace {

constexpr int kRows = 8;         // rows of C per micro-tile
constexpr int64_t kDepth = 256;  // reduction per pass over C

// One micro-tile: rows x (up to) two vectors of columns of C, the reduction over k.
// `mask0`/`mask1` cover the columns that exist (the last tile may be narrower).
template <typename T, int kTileRows>
__attribute__((target("avx512f"))) void micro_tile(const GemmRuns& k, const T* a, int64_t lda,
                                                   const T* b, int64_t ldb, T* c, int64_t ldc,
                                                   bool accumulate, unsigned mask0,
                                                   unsigned mask1) {
  using V = Vector<T>;
  constexpr int kLanes = V::kLanes;
  typename V::type acc[kTileRows][2];
#pragma GCC unroll 8
  for (int i = 0; i < kTileRows; ++i) {
    acc[i][0] = accumulate ? V::load(mask0, c + i * ldc) : V::zero();
    acc[i][1] = accumulate ? V::load(mask1, c + i * ldc + kLanes) : V::zero();
  }
  const int64_t length = k.length;  // in a register: the loops below read it every step
  for (int64_t j = 0; j < k.count; ++j, a += k.a_step) {
    const T* bj = b + (k.b_offsets != nullptr ? k.b_offsets[j] : j * k.b_step);
    for (int64_t kk = 0; kk < length; ++kk) {
      const typename V::type b0 = V::load(mask0, bj + kk * ldb);
      const typename V::type b1 = V::load(mask1, bj + kk * ldb + kLanes);
#pragma GCC unroll 8
      for (int i = 0; i < kTileRows; ++i) {
        const typename V::type ai = V::broadcast(a[i * lda + kk]);
        acc[i][0] = V::fma(ai, b0, acc[i][0]);
        acc[i][1] = V::fma(ai, b1, acc[i][1]);
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kTileRows; ++i) {
    V::store(c + i * ldc, mask0, acc[i][0]);
    V::store(c + i * ldc + kLanes, mask1, acc[i][1]);
  }
}

// The same for matrices at most one vector wide: twice the rows, so that the FMAs
// per load stay the same (a weight gradient with 16 input channels wasted half of
// every two-vector tile).
template <typename T, int kTileRows>
__attribute__((target("avx512f"))) void narrow_tile(const GemmRuns& k, const T* a, int64_t lda,
                                                    const T* b, int64_t ldb, T* c, int64_t ldc,
                                                    bool accumulate, unsigned mask) {
  using V = Vector<T>;
  typename V::type acc[kTileRows];
#pragma GCC unroll 16
  for (int i = 0; i < kTileRows; ++i) acc[i] = accumulate ? V::load(mask, c + i * ldc) : V::zero();
  const int64_t length = k.length;  // in a register: the loops below read it every step
  for (int64_t j = 0; j < k.count; ++j, a += k.a_step) {
    const T* bj = b + (k.b_offsets != nullptr ? k.b_offsets[j] : j * k.b_step);
    for (int64_t kk = 0; kk < length; ++kk) {
      const typename V::type b0 = V::load(mask, bj + kk * ldb);
#pragma GCC unroll 16
      for (int i = 0; i < kTileRows; ++i) {
        acc[i] = V::fma(V::broadcast(a[i * lda + kk]), b0, acc[i]);
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kTileRows; ++i) V::store(c + i * ldc, mask, acc[i]);
}

constexpr int kNarrowRows = 16;

template <typename T>
using MicroTile = void (*)(const GemmRuns&, const T*, int64_t, const T*, int64_t, T*, int64_t,
                           bool, unsigned, unsigned);
template <typename T>
using NarrowTile = void (*)(const GemmRuns&, const T*, int64_t, const T*, int64_t, T*, int64_t,
                            bool, unsigned);

template <typename T, int... kCounts>
constexpr std::array<MicroTile<T>, sizeof...(kCounts)> micro_tiles(
    std::integer_sequence<int, kCounts...>) {
  return {micro_tile<T, kCounts + 1>...};
}
template <typename T, int... kCounts>
constexpr std::array<NarrowTile<T>, sizeof...(kCounts)> narrow_tiles(
    std::integer_sequence<int, kCounts...>) {
  return {narrow_tile<T, kCounts + 1>...};
}

unsigned mask_of(int64_t count, int lanes) {
  if (count <= 0) return 0;
  return count >= lanes ? (1u << lanes) - 1 : (1u << count) - 1;
}

// C (m x n) [+]= A * B over the runs `k`, in blocks of about kDepth of the reduction
// (whole runs; a run longer than kDepth is split), then columns: a block's panel of B
// (kDepth x two vectors) stays in L1 while every row block of A streams past it.
template <typename T>
void gemm(int64_t m, int64_t n, const GemmRuns& k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  constexpr int kLanes = Vector<T>::kLanes;
  static constexpr auto kMicroTiles = micro_tiles<T>(std::make_integer_sequence<int, kRows>{});
  static constexpr auto kNarrowTiles =
      narrow_tiles<T>(std::make_integer_sequence<int, kNarrowRows>{});
  const int64_t block_runs = std::max<int64_t>(1, kDepth / std::max<int64_t>(1, k.length));
  const int64_t block_length = std::min(k.length, kDepth);
  bool add = accumulate;
  for (int64_t j0 = 0; j0 < k.count; j0 += block_runs) {
    for (int64_t k0 = 0; k0 < k.length; k0 += block_length) {
      GemmRuns block = k;
      block.count = std::min(block_runs, k.count - j0);
      block.length = std::min(block_length, k.length - k0);
      if (k.b_offsets != nullptr) block.b_offsets = k.b_offsets + j0;
      const T* a_block = a + j0 * k.a_step + k0;
      const T* b_block = (k.b_offsets != nullptr ? b : b + j0 * k.b_step) + k0 * ldb;
      if (n <= kLanes) {
        const unsigned mask = mask_of(n, kLanes);
        for (int64_t m0 = 0; m0 < m; m0 += kNarrowRows) {
          const int64_t rows = std::min<int64_t>(kNarrowRows, m - m0);
          kNarrowTiles[rows - 1](block, a_block + m0 * lda, lda, b_block, ldb, c + m0 * ldc, ldc,
                                 add, mask);
        }
      } else {
        for (int64_t n0 = 0; n0 < n; n0 += 2 * kLanes) {
          const int64_t width = std::min<int64_t>(2 * kLanes, n - n0);
          const unsigned mask0 = mask_of(width, kLanes);
          const unsigned mask1 = mask_of(width - kLanes, kLanes);
          for (int64_t m0 = 0; m0 < m; m0 += kRows) {
            const int64_t rows = std::min<int64_t>(kRows, m - m0);
            kMicroTiles[rows - 1](block, a_block + m0 * lda, lda, b_block + n0, ldb,
                                  c + m0 * ldc + n0, ldc, add, mask0, mask1);
          }
        }
      }
      add = true;
    }
  }
}

}  // namespace

bool has_avx512() {
  // The option cpu_isa=generic takes the BLAS path anyway (the tests run both paths).
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported && options().cpu_isa == CpuIsa::kAuto;
}

template <typename T>
void gemm_avx512(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                 T* c, int64_t ldc, bool accumulate) {
  gemm<T>(m, n, GemmRuns{1, k, 0, 0, nullptr}, a, lda, b, ldb, c, ldc, accumulate);
}

template <typename T>
void gemm_avx512_runs(int64_t m, int64_t n, const GemmRuns& runs, const T* a, int64_t lda,
                      const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  gemm<T>(m, n, runs, a, lda, b, ldb, c, ldc, accumulate);
}

#else  // not x86-64: no AVX-512; the callers use BLAS.

bool has_avx512() { return false; }

template <typename T>
void gemm_avx512(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t,
                 bool) {
  TORCH_INTERNAL_ASSERT(false, "gemm_avx512 called on a CPU without AVX-512");
}

template <typename T>
void gemm_avx512_runs(int64_t, int64_t, const GemmRuns&, const T*, int64_t, const T*, int64_t, T*,
                      int64_t, bool) {
  TORCH_INTERNAL_ASSERT(false, "gemm_avx512_runs called on a CPU without AVX-512");
}

#endif

template void gemm_avx512<float>(int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                                 int64_t, float*, int64_t, bool);
template void gemm_avx512<double>(int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                  int64_t, double*, int64_t, bool);

template void gemm_avx512_runs<float>(int64_t, int64_t, const GemmRuns&, const float*, int64_t,
                                      const float*, int64_t, float*, int64_t, bool);
template void gemm_avx512_runs<double>(int64_t, int64_t, const GemmRuns&, const double*, int64_t,
                                       const double*, int64_t, double*, int64_t, bool);

}  // namespace ct3d::cpu
