// Autograd kernels of ct3d's ops, registered for the Autograd dispatch key
// (registration/autograd.cpp), so C++ and Python callers get the same gradients.
#pragma once

#include "ops/conv_transpose3d.h"
#include "ops/conv_transpose3d_backward.h"

namespace ct3d {

at::Tensor conv_transpose3d_autograd(const at::Tensor& input, const at::Tensor& weight,
                                     const std::optional<at::Tensor>& bias,
                                     c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                     c10::SymIntArrayRef output_padding, c10::SymInt groups,
                                     c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_input_backward_autograd(const at::Tensor& grad_output,
                                                    const at::Tensor& weight,
                                                    c10::SymIntArrayRef input_size,
                                                    c10::SymIntArrayRef stride,
                                                    c10::SymIntArrayRef padding, c10::SymInt groups,
                                                    c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_weight_backward_autograd(
    const at::Tensor& input, const at::Tensor& grad_output, c10::SymIntArrayRef kernel_size,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymInt groups,
    c10::SymIntArrayRef dilation);
Gradients conv_transpose3d_backward_autograd(const at::Tensor& grad_output, const at::Tensor& input,
                                             const at::Tensor& weight, c10::SymIntArrayRef stride,
                                             c10::SymIntArrayRef padding, c10::SymInt groups,
                                             c10::SymIntArrayRef dilation,
                                             std::array<bool, 3> output_mask);

}  // namespace ct3d
