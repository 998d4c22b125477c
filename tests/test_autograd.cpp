// Autograd is registered in C++: a libtorch program with no Python gets gradients
// from the dispatcher. Checked against the gradient of the naive reference, which
// ATen's autograd differentiates through its plain tensor ops.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>

#include "catch.h"
#include "kernel_call.h"
#include "naive_reference.h"

TEST_CASE("gradients flow through ct3d::conv_transpose3d from C++") {
  const auto op = ct3d::test::dispatcher_op();
  const ct3d::test::ConvCase c{2,         4,         6,         2,         {3, 2, 3}, {2, 3, 2},
                               {2, 1, 2}, {1, 0, 1}, {1, 0, 0}, {1, 2, 1}, true};
  auto [x, w, b] = ct3d::test::random_tensors(c, at::kDouble, 11);
  for (at::Tensor* t : {&x, &w, &b}) t->requires_grad_(true);
  const at::Tensor out =
      op.call(x, w, b, c10::fromIntArrayRefSlow(c.stride), c10::fromIntArrayRefSlow(c.padding),
              c10::fromIntArrayRefSlow(c.output_padding), c10::SymInt(c.groups),
              c10::fromIntArrayRefSlow(c.dilation));
  const at::Tensor upstream = at::randn_like(out);
  const auto grads = torch::autograd::grad({out}, {x, w, b}, {upstream});

  // The reference's gradient, by finite differences of its (linear) output along
  // one random direction per tensor: <grad, d> = <upstream, f(t + d) - f(t)>.
  const auto reference = [&](const at::Tensor& xx, const at::Tensor& ww, const at::Tensor& bb) {
    return ct3d::test::naive_conv_transpose3d(xx, ww, bb, c);
  };
  const at::NoGradGuard no_grad;
  const at::Tensor base = reference(x, w, b);
  const at::Tensor dx = at::randn_like(x), dw = at::randn_like(w), db = at::randn_like(b);
  const double along_x = (upstream * (reference(x + dx, w, b) - base)).sum().item<double>();
  const double along_w = (upstream * (reference(x, w + dw, b) - base)).sum().item<double>();
  const double along_b = (upstream * (reference(x, w, b + db) - base)).sum().item<double>();
  CHECK((grads[0] * dx).sum().item<double>() == Approx(along_x).epsilon(1e-9));
  CHECK((grads[1] * dw).sum().item<double>() == Approx(along_w).epsilon(1e-9));
  CHECK((grads[2] * db).sum().item<double>() == Approx(along_b).epsilon(1e-9));
}
