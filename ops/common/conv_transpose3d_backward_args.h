// Argument checks of the two backward ops. Each returns the ConvTranspose3dArgs of
// the forward call whose gradient it computes (always batched; output_padding is
// what makes grad_output's extents those of that forward's output), so the three
// ops share one geometry (geometry_of) and, through argument_checks.h, one set of
// error messages.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>

#include "ops/common/conv_transpose3d_args.h"

namespace ct3d {

ConvTranspose3dArgs check_input_backward_args(
    const at::Tensor& grad_output, const at::Tensor& weight, c10::SymIntArrayRef input_size,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, const c10::SymInt& groups,
    c10::SymIntArrayRef dilation);

ConvTranspose3dArgs check_weight_backward_args(
    const at::Tensor& input, const at::Tensor& grad_output, c10::SymIntArrayRef kernel_size,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, const c10::SymInt& groups,
    c10::SymIntArrayRef dilation);

// Both of the above at once: grad_output, input and weight of one forward call.
ConvTranspose3dArgs check_backward_args(const at::Tensor& grad_output, const at::Tensor& input,
                                        const at::Tensor& weight, c10::SymIntArrayRef stride,
                                        c10::SymIntArrayRef padding, const c10::SymInt& groups,
                                        c10::SymIntArrayRef dilation);

}  // namespace ct3d
