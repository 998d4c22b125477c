// Typed dispatcher handles of ct3d's ops, looked up once, for code that calls ct3d
// ops through the dispatcher (autograd, the composite backward).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include "ops/conv_transpose3d_backward.h"

namespace ct3d {

using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&,
                                    const std::optional<at::Tensor>&, c10::SymIntArrayRef,
                                    c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                                    c10::SymIntArrayRef);
// input_backward and weight_backward.
using BackwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, c10::SymIntArrayRef,
                                     c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                                     c10::SymIntArrayRef);
using GradientsSignature = Gradients(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                     c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                                     c10::SymIntArrayRef, std::array<bool, 3>);

const c10::TypedOperatorHandle<ForwardSignature>& forward_op();
const c10::TypedOperatorHandle<BackwardSignature>& input_backward_op();
const c10::TypedOperatorHandle<BackwardSignature>& weight_backward_op();
const c10::TypedOperatorHandle<GradientsSignature>& backward_op();

}  // namespace ct3d
