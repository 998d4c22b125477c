// The CUDA kernels against the naive reference; skipped when no GPU is present.
#include <ATen/ATen.h>
#include <ATen/Context.h>

#include "catch.h"
#include "kernel_call.h"

using namespace ct3d::test;

namespace {
bool have_gpu() { return at::hasCUDA(); }
}  // namespace

TEST_CASE("CUDA kernels match the naive loop reference") {
  if (!have_gpu()) {
    WARN("no CUDA GPU: CUDA kernel tests skipped");
    return;
  }
  for (uint64_t seed = 500; seed < 560; ++seed) {
    const ConvCase c = random_case(seed);
    auto [x, w, b] = random_tensors(c, at::kDouble, seed);
    const at::Tensor ref = naive_conv_transpose3d(x, w, b, c);
    const at::Tensor out64 =
        call_kernel(ct3d::conv_transpose3d_cuda, x.cuda(), w.cuda(), b.defined() ? b.cuda() : b, c);
    CHECK(out64.is_cuda());
    CHECK(relative_error(out64, ref) < 1e-12);
    const at::Tensor out32 =
        call_kernel(ct3d::conv_transpose3d_cuda, x.to(at::kFloat).cuda(), w.to(at::kFloat).cuda(),
                    b.defined() ? b.to(at::kFloat).cuda() : b, c);
    CHECK(relative_error(out32, ref) <= 1e-5);
  }
}

TEST_CASE("CUDA float32 fast path across tile edges") {
  if (!have_gpu()) {
    WARN("no CUDA GPU: CUDA kernel tests skipped");
    return;
  }
  const ConvCase c{2,         40,        70,        2,         {5, 6, 19}, {3, 2, 3},
                   {2, 1, 2}, {1, 0, 1}, {1, 0, 0}, {1, 2, 1}, true};
  auto [x, w, b] = random_tensors(c, at::kDouble, 3);
  const at::Tensor out = call_kernel(ct3d::conv_transpose3d_cuda, x.to(at::kFloat).cuda(),
                                     w.to(at::kFloat).cuda(), b.to(at::kFloat).cuda(), c);
  CHECK(relative_error(out, naive_conv_transpose3d(x, w, b, c)) <= 1e-5);
}
