// Every invalid argument gets a c10::Error whose message names it.
#include <ATen/ATen.h>

#include "catch.h"
#include "kernel_call.h"
#include "ops/common/conv_transpose3d_args.h"

namespace {

struct Call {
  at::Tensor input = at::zeros({1, 4, 3, 3, 3});
  at::Tensor weight = at::zeros({4, 2, 3, 3, 3});
  std::optional<at::Tensor> bias;
  std::vector<int64_t> stride{1}, padding{0}, output_padding{0}, dilation{1};
  int64_t groups = 1;

  void run() const {
    ct3d::check_conv_transpose3d_args(
        input, weight, bias, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
        c10::fromIntArrayRefSlow(output_padding), groups, c10::fromIntArrayRefSlow(dilation));
  }
};

}  // namespace

TEST_CASE("a valid call passes") { REQUIRE_NOTHROW(Call{}.run()); }

TEST_CASE("wrong ranks") {
  Call c;
  c.input = at::zeros({4, 3, 3});
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("input must be a 4-D"));
  c = Call{};
  c.weight = at::zeros({4, 2, 3, 3});
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("weight must be a 5-D tensor"));
}

TEST_CASE("channel and weight mismatch") {
  Call c;
  c.input = at::zeros({1, 3, 3, 3, 3});
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("input channels must equal weight.size(0): got 3"));
}

TEST_CASE("groups must be positive and divide the channels") {
  Call c;
  c.groups = 3;
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("must be divisible by groups"));
  c.groups = 0;
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("groups must be positive"));
}

TEST_CASE("stride, dilation, padding and output_padding ranges") {
  Call c;
  c.stride = {1, 0, 1};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("stride must be positive, got 0 in height"));
  c = Call{};
  c.dilation = {-1};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("dilation must be positive"));
  c = Call{};
  c.padding = {0, 0, -2};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("padding must be non-negative, got -2 in width"));
  c = Call{};
  c.output_padding = {-1};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("output_padding must be non-negative"));
  c = Call{};
  c.output_padding = {1};
  REQUIRE_THROWS_WITH(
      c.run(), CT3D_CONTAINS("output_padding must be smaller than either stride or dilation"));
  c.stride = {2};
  REQUIRE_NOTHROW(c.run());
  c.stride = {1};
  c.dilation = {2};
  REQUIRE_NOTHROW(c.run());
}

TEST_CASE("parameter lists need 1 or 3 values") {
  Call c;
  c.stride = {1, 2};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("stride must be a single integer or a list of 3"));
  c = Call{};
  c.dilation = {};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("dilation must be a single integer or a list of 3"));
}

TEST_CASE("bias of the wrong size or rank") {
  Call c;
  c.bias = at::zeros({3});
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("bias must be a 1-D tensor of out_channels elements"));
  c.bias = at::zeros({1, 2});
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("bias must be a 1-D tensor"));
  c.bias = at::zeros({2});
  REQUIRE_NOTHROW(c.run());
}

TEST_CASE("mixed dtypes and non-floating dtypes") {
  Call c;
  c.weight = at::zeros({4, 2, 3, 3, 3}, at::kDouble);
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("weight must have the same dtype as input"));
  c = Call{};
  c.bias = at::zeros({2}, at::kDouble);
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("bias must have the same dtype as input"));
  c = Call{};
  c.input = at::zeros({1, 4, 3, 3, 3}, at::kInt);
  c.weight = at::zeros({4, 2, 3, 3, 3}, at::kInt);
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("floating-point dtype"));
}

TEST_CASE("mixed devices") {
  Call c;
  c.weight = at::zeros({4, 2, 3, 3, 3}, at::TensorOptions().device(at::kMeta));
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("weight must be on the same device as input"));
}

TEST_CASE("an output size that would be zero or negative") {
  Call c;
  c.input = at::zeros({1, 4, 1, 1, 1});
  c.padding = {2};
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("output depth would be -1"));
}

TEST_CASE("empty spatial input is rejected, empty batch is not") {
  Call c;
  c.input = at::zeros({1, 4, 0, 3, 3});
  REQUIRE_THROWS_WITH(c.run(), CT3D_CONTAINS("input depth must be positive"));
  c.input = at::zeros({0, 4, 3, 3, 3});
  REQUIRE_NOTHROW(c.run());
}

TEST_CASE("the CPU kernel names unsupported dtypes") {
  const ct3d::test::ConvCase cc{1,         2,         2,         1,         {2, 2, 2}, {1, 1, 1},
                                {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, false};
  const at::Tensor x = at::zeros({1, 2, 2, 2, 2}, at::kFloat8_e4m3fn);
  const at::Tensor w = at::zeros({2, 2, 1, 1, 1}, at::kFloat8_e4m3fn);
  REQUIRE_THROWS_WITH(ct3d::test::call_kernel(ct3d::conv_transpose3d_cpu, x, w, at::Tensor(), cc),
                      CT3D_CONTAINS("dtype Float8_e4m3fn is not supported on CPU"));
}
