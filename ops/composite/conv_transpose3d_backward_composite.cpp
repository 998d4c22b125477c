// The all-gradients op composed of the two backward ops and a sum: its kernel for
// shapes (Meta, fake tensors), the CPU kernel's input and weight gradients, and,
// called with autograd on, its differentiable form.
#include <ATen/ops/sum.h>

#include "ops/common/conv_transpose3d_backward_args.h"
#include "ops/composite/op_handles.h"
#include "ops/conv_transpose3d_backward.h"

namespace ct3d {

Gradients conv_transpose3d_backward_composite(const at::Tensor& grad_output,
                                              const at::Tensor& input, const at::Tensor& weight,
                                              c10::SymIntArrayRef stride,
                                              c10::SymIntArrayRef padding, c10::SymInt groups,
                                              c10::SymIntArrayRef dilation,
                                              std::array<bool, 3> output_mask) {
  check_backward_args(grad_output, input, weight, stride, padding, groups, dilation);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = input_backward_op().call(grad_output, weight, input.sym_sizes().slice(2), stride,
                                          padding, groups, dilation);
  }
  if (output_mask[1]) {
    grad_weight = weight_backward_op().call(input, grad_output, weight.sym_sizes().slice(2), stride,
                                            padding, groups, dilation);
  }
  if (output_mask[2]) grad_bias = bias_gradient(grad_output);
  return {grad_input, grad_weight, grad_bias};
}

at::Tensor bias_gradient(const at::Tensor& grad_output) {
  // Differentiable and shape-only friendly (this composite also serves Meta, fake
  // tensors and the differentiable backward); the backends' own kernels sum without
  // the float64 copy (ops/cpu/channel_sums.h, ops/cuda/channel_sums.h).
  return grad_output.sum({0, 2, 3, 4}, false, at::kDouble).to(grad_output.scalar_type());
}

}  // namespace ct3d
