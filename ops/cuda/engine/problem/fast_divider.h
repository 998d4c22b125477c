// Division by a run-time constant as a multiply-high, an add and a shift (the
// round-up method of Granlund and Montgomery). A 32-bit `/` or `%` by a run-time
// value compiles to a ~20-instruction subroutine; the implicit GEMM decodes every
// row it gathers with three of them, which was most of the per-block setup on the
// short-reduction stride-2 shapes.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define CT3D_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CT3D_HOST_DEVICE inline
#endif

namespace ct3d::cuda {

struct FastDivider {
  uint32_t divisor = 1;
  uint32_t multiplier = 0;
  uint32_t shift = 0;

  FastDivider() = default;

  // divisor in [1, 2^31).
  explicit FastDivider(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;
    multiplier =
        static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }

  // n / divisor for n < 2^31 (host code too, so the unit tests can check it).
  CT3D_HOST_DEVICE uint32_t divide(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = static_cast<uint32_t>((uint64_t{n} * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
};

}  // namespace ct3d::cuda
