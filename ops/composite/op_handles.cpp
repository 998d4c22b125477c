#include "ops/composite/op_handles.h"

namespace ct3d {
namespace {

template <class Signature>
c10::TypedOperatorHandle<Signature> find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

}  // namespace

const c10::TypedOperatorHandle<ForwardSignature>& forward_op() {
  static const auto op = find_op<ForwardSignature>("ct3d::conv_transpose3d");
  return op;
}

const c10::TypedOperatorHandle<BackwardSignature>& input_backward_op() {
  static const auto op = find_op<BackwardSignature>("ct3d::conv_transpose3d_input_backward");
  return op;
}

const c10::TypedOperatorHandle<BackwardSignature>& weight_backward_op() {
  static const auto op = find_op<BackwardSignature>("ct3d::conv_transpose3d_weight_backward");
  return op;
}

const c10::TypedOperatorHandle<GradientsSignature>& backward_op() {
  static const auto op = find_op<GradientsSignature>("ct3d::conv_transpose3d_backward");
  return op;
}

}  // namespace ct3d
