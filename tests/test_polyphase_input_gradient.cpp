// The polyphase form of the input gradient (ops/polyphase_input_gradient.h) on the CPU,
// in float64, with ct3d's CPU forward as its stride-1 engine: against the adjoint of
// the naive loop reference (<forward(x), dy> = <x, grad_input(dy)>, independent of
// ct3d's kernels) and against ct3d's CPU input gradient, element by element.
#include <ATen/ATen.h>

#include <vector>

#include "catch.h"
#include "kernel_call.h"
#include "ops/conv_geometry.h"
#include "ops/conv_transpose3d_args.h"
#include "ops/conv_transpose3d_backward.h"
#include "ops/polyphase_input_gradient.h"

using namespace ct3d::test;

namespace {

ct3d::ConvGeometry geometry_of_case(const at::Tensor& x, const at::Tensor& w, const ConvCase& c) {
  return ct3d::geometry_of(ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(c.stride), c10::fromIntArrayRefSlow(c.padding),
      c10::fromIntArrayRefSlow(c.output_padding), c10::SymInt(c.groups),
      c10::fromIntArrayRefSlow(c.dilation)));
}

at::Tensor cpu_stride_one_forward(const at::Tensor& input, const at::Tensor& weight,
                                  const ct3d::Int3& padding, int64_t groups) {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const std::vector<int64_t> pad(padding.begin(), padding.end());
  return ct3d::conv_transpose3d_cpu(input, weight, std::nullopt, c10::fromIntArrayRefSlow(one),
                                    c10::fromIntArrayRefSlow(pad), c10::fromIntArrayRefSlow(zero),
                                    c10::SymInt(groups), c10::fromIntArrayRefSlow(one));
}

void check_case(const ConvCase& c, uint64_t seed) {
  auto [x, w, b] = random_tensors(c, at::kDouble, seed);
  const ct3d::ConvGeometry geometry = geometry_of_case(x, w, c);
  REQUIRE(ct3d::polyphase_input_gradient_applies(geometry));
  const at::Tensor y = naive_conv_transpose3d(x, w, at::Tensor(), c);
  const at::Tensor dy = at::randn(y.sizes(), y.options());
  const at::Tensor got = ct3d::polyphase_input_gradient(geometry, dy, w, cpu_stride_one_forward);
  REQUIRE(got.sizes() == x.sizes());
  // The adjoint identity, with the naive forward.
  const double lhs = (y * dy).sum().item<double>();
  const double rhs = (x * got).sum().item<double>();
  CHECK(std::abs(lhs - rhs) <= 1e-10 * std::max(1.0, std::abs(lhs)));
  // Element by element against ct3d's CPU input gradient.
  const std::vector<int64_t> size{c.input[0], c.input[1], c.input[2]};
  const at::Tensor ref = ct3d::conv_transpose3d_input_backward_cpu(
      dy, w, c10::fromIntArrayRefSlow(size), c10::fromIntArrayRefSlow(c.stride),
      c10::fromIntArrayRefSlow(c.padding), c10::SymInt(c.groups),
      c10::fromIntArrayRefSlow(c.dilation));
  CHECK(relative_error(got, ref) < 1e-12);
}

}  // namespace

TEST_CASE(
    "polyphase input gradient: stride-2 layers, groups, odd strides, kernels below the stride",
    "[polyphase]") {
  const std::array<int64_t, 3> one{1, 1, 1}, zero{0, 0, 0}, two{2, 2, 2};
  // (batch, C_in, C_out, groups, input, kernel, stride, padding, output_padding, dilation)
  const std::vector<ConvCase> cases = {
      {2, 8, 4, 1, {6, 5, 7}, {3, 3, 3}, two, one, zero, one, false},       // as L1-73
      {1, 6, 6, 1, {4, 5, 6}, {4, 4, 4}, two, one, zero, one, false},       // k4 stride 2
      {1, 8, 8, 4, {3, 4, 5}, {3, 5, 7}, two, {1, 2, 3}, one, one, false},  // as L1-72
      {2, 4, 6, 2, {3, 4, 5}, {3, 2, 4}, {1, 3, 2}, {0, 1, 2}, {0, 2, 1}, one, false},
      {1, 3, 5, 1, {2, 3, 2}, {2, 2, 2}, {3, 3, 3}, zero, {0, 2, 1}, one, false},
      {1, 2, 2, 1, {3, 3, 3}, {1, 1, 1}, two, zero, one, one, false},  // taps < stride
  };
  uint64_t seed = 11;
  for (const ConvCase& c : cases) check_case(c, seed++);
}

TEST_CASE("polyphase input gradient: applies only with dilation 1 and some stride", "[polyphase]") {
  const std::array<int64_t, 3> one{1, 1, 1}, zero{0, 0, 0}, two{2, 2, 2};
  const auto applies = [&](const ConvCase& c) {
    auto [x, w, b] = random_tensors(c, at::kDouble, 3);
    return ct3d::polyphase_input_gradient_applies(geometry_of_case(x, w, c));
  };
  CHECK(applies({1, 2, 2, 1, {3, 3, 3}, {3, 3, 3}, two, one, zero, one, false}));
  CHECK_FALSE(applies({1, 2, 2, 1, {3, 3, 3}, {3, 3, 3}, one, one, zero, one, false}));
  CHECK_FALSE(applies({1, 2, 2, 1, {3, 3, 3}, {3, 3, 3}, two, one, zero, {1, 2, 1}, false}));
}
