// The op is reachable through the dispatcher from plain C++ (no Python), which
// also proves the library's registrations survived linking.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "catch.h"
#include "kernel_call.h"
#include "naive_reference.h"

TEST_CASE("ct3d::conv_transpose3d is registered and dispatches to the CPU kernel") {
  const auto op = ct3d::test::dispatcher_op();
  const ct3d::test::ConvCase c{1,         4,         4,         2,         {3, 3, 3}, {3, 2, 1},
                               {2, 2, 2}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}, true};
  auto [x, w, b] = ct3d::test::random_tensors(c, at::kDouble, 5);
  const at::Tensor out =
      op.call(x, w, b, c10::fromIntArrayRefSlow(c.stride), c10::fromIntArrayRefSlow(c.padding),
              c10::fromIntArrayRefSlow(c.output_padding), c10::SymInt(c.groups),
              c10::fromIntArrayRefSlow(c.dilation));
  CHECK(ct3d::test::relative_error(out, ct3d::test::naive_conv_transpose3d(x, w, b, c)) < 1e-12);
}

TEST_CASE("the Meta kernel gives shape and dtype without data") {
  const auto op = ct3d::test::dispatcher_op();
  const auto meta = at::TensorOptions().device(at::kMeta);
  const std::vector<int64_t> stride{2}, zero{0}, one{1};
  const at::Tensor out =
      op.call(at::empty({2, 4, 5, 6, 7}, meta), at::empty({4, 3, 3, 3, 3}, meta), std::nullopt,
              c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(zero),
              c10::fromIntArrayRefSlow(one), c10::SymInt(1), c10::fromIntArrayRefSlow(one));
  CHECK(out.is_meta());
  CHECK(out.sizes() == at::IntArrayRef({2, 3, 12, 14, 16}));
}
