// The backward ops of ct3d::conv_transpose3d, one kernel per backend, as plain
// C++ functions (registration/ wires them into the dispatcher).
//
// With y = conv_transpose3d(x, w) and g = dL/dy:
//   input_backward(g, w)  = dL/dx, a strided convolution of g with w;
//   weight_backward(x, g) = dL/dw, the correlation of x with g.
// Both are bilinear, and their own derivatives are again one of the three ops,
// so autograd (ops/autograd/) differentiates any number of times. Both take
// batched (5-D) tensors; the autograd layer adds the batch dimension for 4-D input.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>

#include <array>
#include <tuple>

namespace ct3d {

// dL/dx: (N, C_in, *input_size) from grad_output (N, C_out, D', H', W') and the
// weight (C_in, C_out / groups, kD, kH, kW).
at::Tensor conv_transpose3d_input_backward_cpu(const at::Tensor& grad_output,
                                               const at::Tensor& weight,
                                               c10::SymIntArrayRef input_size,
                                               c10::SymIntArrayRef stride,
                                               c10::SymIntArrayRef padding, c10::SymInt groups,
                                               c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_input_backward_cuda(const at::Tensor& grad_output,
                                                const at::Tensor& weight,
                                                c10::SymIntArrayRef input_size,
                                                c10::SymIntArrayRef stride,
                                                c10::SymIntArrayRef padding, c10::SymInt groups,
                                                c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_input_backward_meta(const at::Tensor& grad_output,
                                                const at::Tensor& weight,
                                                c10::SymIntArrayRef input_size,
                                                c10::SymIntArrayRef stride,
                                                c10::SymIntArrayRef padding, c10::SymInt groups,
                                                c10::SymIntArrayRef dilation);

// dL/dw: (C_in, C_out / groups, *kernel_size) from input (N, C_in, D, H, W) and
// grad_output (N, C_out, D', H', W').
at::Tensor conv_transpose3d_weight_backward_cpu(const at::Tensor& input,
                                                const at::Tensor& grad_output,
                                                c10::SymIntArrayRef kernel_size,
                                                c10::SymIntArrayRef stride,
                                                c10::SymIntArrayRef padding, c10::SymInt groups,
                                                c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_weight_backward_cuda(const at::Tensor& input,
                                                 const at::Tensor& grad_output,
                                                 c10::SymIntArrayRef kernel_size,
                                                 c10::SymIntArrayRef stride,
                                                 c10::SymIntArrayRef padding, c10::SymInt groups,
                                                 c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_weight_backward_meta(const at::Tensor& input,
                                                 const at::Tensor& grad_output,
                                                 c10::SymIntArrayRef kernel_size,
                                                 c10::SymIntArrayRef stride,
                                                 c10::SymIntArrayRef padding, c10::SymInt groups,
                                                 c10::SymIntArrayRef dilation);

// All three gradients of one forward call, each only where output_mask asks for it
// (undefined otherwise): (dL/dx, dL/dw, dL/db). autograd calls this one op, so a
// backend can share work between the gradients (CUDA: grad_output is staged once,
// and dL/db summed in that pass). Composite: the two ops above and a sum.
using Gradients = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

Gradients conv_transpose3d_backward_composite(const at::Tensor& grad_output,
                                              const at::Tensor& input, const at::Tensor& weight,
                                              c10::SymIntArrayRef stride,
                                              c10::SymIntArrayRef padding, c10::SymInt groups,
                                              c10::SymIntArrayRef dilation,
                                              std::array<bool, 3> output_mask);

// dL/db as ATen's sum of grad_output over batch and positions in float64 (a sum with
// heavy cancellation; a float32 one missed one-channel gradients by up to 1.7e-4):
// differentiable, for the composite.
at::Tensor bias_gradient(const at::Tensor& grad_output);
// The backends' all-gradients kernels: the CPU's is the composite's input and weight
// gradients and ct3d's own float64 channel sums (no float64 copy of grad_output).
Gradients conv_transpose3d_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input,
                                        const at::Tensor& weight, c10::SymIntArrayRef stride,
                                        c10::SymIntArrayRef padding, c10::SymInt groups,
                                        c10::SymIntArrayRef dilation,
                                        std::array<bool, 3> output_mask);
Gradients conv_transpose3d_backward_cuda(const at::Tensor& grad_output, const at::Tensor& input,
                                         const at::Tensor& weight, c10::SymIntArrayRef stride,
                                         c10::SymIntArrayRef padding, c10::SymInt groups,
                                         c10::SymIntArrayRef dilation,
                                         std::array<bool, 3> output_mask);

}  // namespace ct3d
