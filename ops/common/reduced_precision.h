// float16 and bfloat16: the operands widened to float32, ct3d's float32 kernels, the
// result rounded once. Every float16 or bfloat16 value is exact in TF32 (11 and 8
// significant bits, TF32 has 11), so on CUDA the engine's products are exact and only
// the float32 sums and the final rounding err: no less accurate than cuDNN's half
// path. PyTorch's CPU convolutions also accumulate these types in float32. Costs a
// float32 copy of each operand and of the result.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace ct3d {

inline bool is_reduced_precision(at::ScalarType dtype) {
  return dtype == at::kHalf || dtype == at::kBFloat16;
}

inline bool is_reduced_precision(const at::Tensor& tensor) {
  return is_reduced_precision(tensor.scalar_type());
}

inline at::Tensor widened(const at::Tensor& tensor) { return tensor.to(at::kFloat); }

inline std::optional<at::Tensor> widened(const std::optional<at::Tensor>& tensor) {
  if (!tensor.has_value() || !tensor->defined()) return tensor;
  return tensor->to(at::kFloat);
}

}  // namespace ct3d
