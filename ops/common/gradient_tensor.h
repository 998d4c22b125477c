// A backward op's result tensor, allocated, and whether it is already the answer, so that
// the CPU and CUDA entry points answer empty cases alike before any kernel: a gradient
// with no elements, or zeros where grad_output has none (an empty batch, or an output
// extent of 0: no term reaches the gradient).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

namespace ct3d {

struct GradientTensor {
  at::Tensor tensor;
  bool answered = false;  // empty, or zero-filled: no kernel needed
};

inline GradientTensor allocate_gradient(c10::SymIntArrayRef shape,
                                        const at::TensorOptions& options,
                                        const at::Tensor& grad_output) {
  at::Tensor tensor = at::empty_symint(shape, options);
  if (tensor.numel() == 0) return {tensor, true};
  if (grad_output.numel() == 0) return {tensor.zero_(), true};
  return {tensor, false};
}

}  // namespace ct3d
