// Calls a ct3d kernel function with a test case's parameters.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/SymIntArrayRef.h>

#include <optional>

#include "naive_reference.h"
#include "ops/conv_transpose3d.h"

namespace ct3d::test {

template <typename KernelFn>
at::Tensor call_kernel(KernelFn kernel, const at::Tensor& x, const at::Tensor& w,
                       const at::Tensor& b, const ConvCase& c) {
  const std::optional<at::Tensor> bias = b.defined() ? std::optional<at::Tensor>(b) : std::nullopt;
  return kernel(x, w, bias, c10::fromIntArrayRefSlow(c.stride), c10::fromIntArrayRefSlow(c.padding),
                c10::fromIntArrayRefSlow(c.output_padding), c10::SymInt(c.groups),
                c10::fromIntArrayRefSlow(c.dilation));
}

// ct3d::conv_transpose3d as registered with the dispatcher (no Python involved).
inline c10::TypedOperatorHandle<at::Tensor(
    const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, c10::SymIntArrayRef,
    c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt, c10::SymIntArrayRef)>
dispatcher_op() {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow("ct3d::conv_transpose3d", "")
      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                        c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                        c10::SymIntArrayRef)>();
}

}  // namespace ct3d::test
