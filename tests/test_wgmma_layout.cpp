// The wgmma weight layout must be a bijection that matches the mainloop's reads:
// within a k-step's 128-byte half, 8 channels x 4 consecutive logical k.
#include <set>

#include "catch.h"
#include "ops/cuda/engine/gather/wgmma_weight_layout.h"

using ct3d::cuda::wgmma_weight_element;
using ct3d::cuda::wgmma_weight_offset;

TEST_CASE("wgmma weight offsets and elements are inverse, for every block width") {
  for (const int n : {16, 24, 32, 48, 64, 96, 128}) {
    const int padded = 2 * n;  // two channel blocks
    std::set<int> offsets;
    for (int c = 0; c < padded; ++c) {
      for (int kk = 0; kk < 16; ++kk) {
        for (const bool lo : {false, true}) {
          const int offset = wgmma_weight_offset(c, kk, lo, n);
          REQUIRE(offset >= 0);
          REQUIRE(offset < padded * 32);
          offsets.insert(offset);
          const auto element = wgmma_weight_element(offset, n);
          CHECK(element.channel == c);
          CHECK(element.in_chunk == kk);
          CHECK(element.lo == lo);
        }
      }
    }
    CHECK(static_cast<int>(offsets.size()) == padded * 32);
  }
}

TEST_CASE("a lane's four values of a k-step sit where wgmma's core matrices expect them") {
  const int n = 64;
  // Logical k j of k-step s is stage column 4 (j % 4) + 2 s + j / 4; core matrix
  // `half` = j / 4 holds k (j % 4) of 8 channels in 16-byte rows.
  for (int s = 0; s < 2; ++s) {
    for (int j = 0; j < 8; ++j) {
      const int kk = 4 * (j % 4) + 2 * s + j / 4;
      for (int c = 0; c < n; ++c) {
        const int expected = ((s * (n / 8) + c / 8) * 2 + j / 4) * 32 + (c % 8) * 4 + j % 4;
        CHECK(wgmma_weight_offset(c, kk, false, n) == expected);
      }
    }
  }
}
