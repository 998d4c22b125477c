// The implicit GEMM decodes rows with FastDivider; it must equal `/` for every
// numerator it can see (below 2^31) and every divisor.
#include <random>

#include "catch.h"
#include "ops/cuda/engine/problem/fast_divider.h"

TEST_CASE("FastDivider divides exactly below 2^31") {
  std::mt19937 rng(7);
  for (uint32_t divisor :
       {1u,  2u,   3u,   5u,    7u,    31u,    32u,    33u,      63u,        64u,
        65u, 127u, 255u, 1000u, 4097u, 65535u, 65536u, 1u << 20, 123456789u, (1u << 31) - 1}) {
    const ct3d::cuda::FastDivider divider(divisor);
    CHECK(divider.divisor == divisor);
    for (uint32_t n = 0; n < 3000; ++n) REQUIRE(divider.divide(n) == n / divisor);
    for (uint32_t n = 0x7fffffffu - 3000; n <= 0x7fffffffu - 1; ++n) {
      REQUIRE(divider.divide(n) == n / divisor);
    }
    for (int i = 0; i < 100000; ++i) {
      const uint32_t n = rng() & 0x7fffffffu;
      REQUIRE(divider.divide(n) == n / divisor);
    }
  }
}
