// 512-bit vectors of float or double for ct3d's AVX-512 CPU kernels (x86-64 only):
// the masked loads and stores, broadcasts and FMAs they use, each compiled for
// AVX-512F whatever the rest of the library targets.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

namespace ct3d::cpu {

template <typename T>
struct Vector;

template <>
struct Vector<float> {
  using type = __m512;
  static constexpr int kLanes = 16;
  static __attribute__((target("avx512f"))) type load(unsigned mask, const float* p) {
    return _mm512_maskz_loadu_ps(__mmask16(mask), p);
  }
  // v with its lanes in `mask` replaced by p's (lane i: p[i]; the others not read).
  static __attribute__((target("avx512f"))) type load_into(type v, unsigned mask,
                                                           const float* p) {
    return _mm512_mask_loadu_ps(v, __mmask16(mask), p);
  }
  static __attribute__((target("avx512f"))) void store(float* p, unsigned mask, type v) {
    _mm512_mask_storeu_ps(p, __mmask16(mask), v);
  }
  static __attribute__((target("avx512f"))) type zero() { return _mm512_setzero_ps(); }
  static __attribute__((target("avx512f"))) type broadcast(float x) { return _mm512_set1_ps(x); }
  static __attribute__((target("avx512f"))) type fma(type a, type b, type c) {
    return _mm512_fmadd_ps(a, b, c);
  }
};

template <>
struct Vector<double> {
  using type = __m512d;
  static constexpr int kLanes = 8;
  static __attribute__((target("avx512f"))) type load(unsigned mask, const double* p) {
    return _mm512_maskz_loadu_pd(__mmask8(mask), p);
  }
  static __attribute__((target("avx512f"))) type load_into(type v, unsigned mask,
                                                           const double* p) {
    return _mm512_mask_loadu_pd(v, __mmask8(mask), p);
  }
  static __attribute__((target("avx512f"))) void store(double* p, unsigned mask, type v) {
    _mm512_mask_storeu_pd(p, __mmask8(mask), v);
  }
  static __attribute__((target("avx512f"))) type zero() { return _mm512_setzero_pd(); }
  static __attribute__((target("avx512f"))) type broadcast(double x) { return _mm512_set1_pd(x); }
  static __attribute__((target("avx512f"))) type fma(type a, type b, type c) {
    return _mm512_fmadd_pd(a, b, c);
  }
};

}  // namespace ct3d::cpu

#endif
