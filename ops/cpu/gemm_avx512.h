// A GEMM micro-kernel (float32 and float64) for CPUs with AVX-512 (chosen at run time). The BLAS
// torch ships (MKL) takes its AVX2 path on AMD CPUs: on the development machine's
// Zen 5 it peaks at 108 GFLOPS a core, half of what 512-bit FMAs give, and oneDNN,
// which compiles its own AVX-512 code, ran 2x faster than ct3d's GEMMs.
#pragma once

#include <cstdint>

namespace ct3d::cpu {

// Whether this CPU runs AVX-512F and the option cpu_isa leaves it to (ops/options/options.h).
bool has_avx512();

// C (m x n, row stride ldc) = [C +] A (m x k, row stride lda) * B (k x n, row stride
// ldb), all row-major, column stride 1. Single-threaded, deterministic. Call only
// where has_avx512().
template <typename T>
void gemm_avx512(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                 T* c, int64_t ldc, bool accumulate);

// A reduction in runs: run j multiplies `length` consecutive columns of A from
// a + j * a_step by as many rows of B from b + b_offsets[j] (b + j * b_step where
// b_offsets is null). A weight gradient's reduction over input positions skips the
// padding between its window's rows this way, a gradient's over taps reads each tap's
// window where it lies (conv_transpose3d_backward_cpu.cpp, shifted_gemm.cpp).
struct GemmRuns {
  int64_t count = 1, length = 0, a_step = 0, b_step = 0;
  const int64_t* b_offsets = nullptr;
};

// C (m x n, row stride ldc) = [C +] sum over the runs of A_j (m x length, row stride
// lda) * B_j (length x n, row stride ldb). As gemm_avx512 otherwise.
template <typename T>
void gemm_avx512_runs(int64_t m, int64_t n, const GemmRuns& runs, const T* a, int64_t lda,
                      const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate);

}  // namespace ct3d::cpu
