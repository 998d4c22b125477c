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

// The same with the reduction in `segments` runs of `length`: C [+]= sum over runs j of
// A_j (m x length: a + j * a_step, row stride lda) * B_j (length x n: b + j * b_step, row
// stride ldb). A weight gradient's reduction over input positions skips the padding
// between its window's rows this way (conv_transpose3d_backward_cpu.cpp).
template <typename T>
void gemm_avx512_rows(int64_t m, int64_t n, int64_t segments, int64_t length, const T* a,
                      int64_t lda, int64_t a_step, const T* b, int64_t ldb, int64_t b_step, T* c,
                      int64_t ldc, bool accumulate);

}  // namespace ct3d::cpu
