// float16 and bfloat16 on the CPU: the operands widened to float32, ct3d's float32
// kernel, the result rounded once (PyTorch's CPU convolutions also accumulate these
// types in float32). They arrive here mostly from torch.autocast("cpu").
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace ct3d::cpu {

inline bool is_reduced_precision(const at::Tensor& tensor) {
  return tensor.scalar_type() == at::kHalf || tensor.scalar_type() == at::kBFloat16;
}

inline at::Tensor widened(const at::Tensor& tensor) { return tensor.to(at::kFloat); }

inline std::optional<at::Tensor> widened(const std::optional<at::Tensor>& tensor) {
  if (!tensor.has_value() || !tensor->defined()) return tensor;
  return tensor->to(at::kFloat);
}

}  // namespace ct3d::cpu
