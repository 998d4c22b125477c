#include <ATen/ATen.h>

#include "catch.h"
#include "kernel_call.h"

using namespace ct3d::test;

TEST_CASE("CPU kernel matches the naive loop reference on random cases") {
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    const ConvCase c = random_case(seed);
    auto [x, w, b] = random_tensors(c, at::kDouble, seed);
    const at::Tensor ref = naive_conv_transpose3d(x, w, b, c);
    const at::Tensor out64 = call_kernel(ct3d::conv_transpose3d_cpu, x, w, b, c);
    REQUIRE(out64.sizes() == ref.sizes());
    CHECK(relative_error(out64, ref) < 1e-12);

    const at::Tensor out32 = call_kernel(ct3d::conv_transpose3d_cpu, x.to(at::kFloat),
                                         w.to(at::kFloat), b.defined() ? b.to(at::kFloat) : b, c);
    CHECK(out32.scalar_type() == at::kFloat);
    CHECK(relative_error(out32, ref) < 1e-6);
  }
}

TEST_CASE("CPU kernel on odd sizes with groups, dilation, output_padding and bias") {
  const ConvCase c{2,         6,         9,         3,         {5, 7, 3}, {3, 2, 4},
                   {2, 3, 1}, {1, 0, 2}, {1, 2, 0}, {2, 1, 3}, true};
  auto [x, w, b] = random_tensors(c, at::kDouble, 99);
  CHECK(relative_error(call_kernel(ct3d::conv_transpose3d_cpu, x, w, b, c),
                       naive_conv_transpose3d(x, w, b, c)) < 1e-12);
}

TEST_CASE("CPU kernel accepts unbatched input and non-contiguous tensors") {
  const ConvCase c{1,         4,         6,         2,         {3, 4, 5}, {2, 2, 3},
                   {2, 1, 2}, {0, 1, 1}, {1, 0, 0}, {1, 1, 1}, false};
  auto [x, w, b] = random_tensors(c, at::kDouble, 7);
  const at::Tensor ref = naive_conv_transpose3d(x, w, b, c);
  const at::Tensor unbatched = call_kernel(ct3d::conv_transpose3d_cpu, x[0], w, b, c);
  CHECK(unbatched.dim() == 4);
  CHECK(relative_error(unbatched, ref[0]) < 1e-12);
  const at::Tensor x_strided = x.transpose(2, 4).contiguous().transpose(2, 4);
  CHECK_FALSE(x_strided.is_contiguous());
  CHECK(relative_error(call_kernel(ct3d::conv_transpose3d_cpu, x_strided, w, b, c), ref) < 1e-12);
}

TEST_CASE("CPU kernel writes the outputs of phases that no tap reaches") {
  // Found by the differential harness (issue 49). Width: stride 2, dilation 2 and
  // padding 1 leave residue 0 (two positions) without taps, wider than the one-column
  // box the other residue needs; output_padding adds a height row no tap reaches.
  const ConvCase phases{3,         2,         6,         2,         {2, 4, 1}, {2, 1, 3},
                        {1, 1, 2}, {0, 0, 1}, {0, 1, 0}, {2, 2, 2}, true};
  // No tap reaches any output position along the width: the answer is the bias alone.
  const ConvCase none{2,         16,        16,        4,         {5, 2, 1}, {4, 2, 4},
                      {1, 2, 1}, {2, 1, 4}, {0, 1, 0}, {2, 1, 3}, true};
  for (const ConvCase& c : {phases, none}) {
    auto [x, w, b] = random_tensors(c, at::kDouble, 49);
    const at::Tensor ref = naive_conv_transpose3d(x, w, b, c);
    // Twice: memory left by the first call is what a tile that reads past its end sees.
    for (int run = 0; run < 2; ++run) {
      CHECK(relative_error(call_kernel(ct3d::conv_transpose3d_cpu, x, w, b, c), ref) < 1e-12);
    }
  }
}
