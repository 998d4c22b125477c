#include <ATen/ATen.h>

#include "catch.h"
#include "ops/common/conv_transpose3d_args.h"

using ct3d::transposed_output_extent;

TEST_CASE("output extent follows the documented formula") {
  // (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
  CHECK(transposed_output_extent<int64_t>(16, 3, 1, 0, 0, 1) == 18);
  CHECK(transposed_output_extent<int64_t>(12, 3, 2, 1, 1, 1) == 24);  // KernelBench 72, depth
  CHECK(transposed_output_extent<int64_t>(48, 7, 2, 3, 1, 1) == 96);  // KernelBench 72, width
  CHECK(transposed_output_extent<int64_t>(32, 3, 2, 1, 0, 1) == 63);  // KernelBench 73
  CHECK(transposed_output_extent<int64_t>(16, 3, 2, 1, 0, 2) == 33);  // KernelBench 77
  CHECK(transposed_output_extent<int64_t>(1, 1, 5, 0, 0, 1) == 1);
  CHECK(transposed_output_extent<int64_t>(1, 1, 1, 5, 0, 1) == -9);
}

TEST_CASE("checked arguments carry the output shape, batched and unbatched") {
  const at::Tensor w = at::zeros({4, 3, 2, 3, 4});
  const std::vector<int64_t> stride{2, 1, 3}, padding{0, 1, 1}, output_padding{1, 0, 2},
      dilation{1, 2, 1};
  const auto args5 = ct3d::check_conv_transpose3d_args(
      at::zeros({2, 4, 5, 6, 7}), w, std::nullopt, c10::fromIntArrayRefSlow(stride),
      c10::fromIntArrayRefSlow(padding), c10::fromIntArrayRefSlow(output_padding), 1,
      c10::fromIntArrayRefSlow(dilation));
  CHECK(args5.batched);
  CHECK(args5.out_channels == 3);
  CHECK(args5.concrete_output_size() == ct3d::Int3{11, 8, 22});
  CHECK(args5.output_shape().size() == 5);

  const auto args4 = ct3d::check_conv_transpose3d_args(
      at::zeros({4, 5, 6, 7}), w, std::nullopt, c10::fromIntArrayRefSlow(stride),
      c10::fromIntArrayRefSlow(padding), c10::fromIntArrayRefSlow(output_padding), 1,
      c10::fromIntArrayRefSlow(dilation));
  CHECK_FALSE(args4.batched);
  CHECK(args4.output_shape().size() == 4);
  CHECK(args4.concrete_output_size() == args5.concrete_output_size());
}

TEST_CASE("a single value applies to all three dimensions") {
  const std::vector<int64_t> two{2}, zero{0}, one{1};
  const auto args = ct3d::check_conv_transpose3d_args(
      at::zeros({1, 2, 3, 4, 5}), at::zeros({2, 2, 3, 3, 3}), std::nullopt,
      c10::fromIntArrayRefSlow(two), c10::fromIntArrayRefSlow(one), c10::fromIntArrayRefSlow(one),
      2, c10::fromIntArrayRefSlow(one));
  CHECK(args.stride == ct3d::Int3{2, 2, 2});
  CHECK(args.concrete_output_size() == ct3d::Int3{6, 8, 10});
  CHECK(args.out_channels == 4);
}
