// Argument checking for ct3d::conv_transpose3d (the checked call: conv_args.h).
// Backend-free: the CPU, CUDA and Meta kernels all start here, so a bad argument
// gets the same message on every device.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>

#include <optional>

#include "ops/common/conv_args.h"

namespace ct3d {

// Checks every argument as torch.nn.functional.conv_transpose3d would and throws a
// c10::Error naming the argument (got vs expected) on the first problem found.
// Dtype support differs per backend and is checked by each backend.
ConvTranspose3dArgs check_conv_transpose3d_args(
    const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
    const c10::SymInt& groups, c10::SymIntArrayRef dilation);

// A parameter list is one value for all three dimensions or one per dimension, as
// in torch.nn.functional.conv_transpose3d; `name` goes into the error message.
Int3 expand_parameter(c10::SymIntArrayRef values, const char* name);

// The output's memory format, as torch.nn.functional.conv_transpose3d chooses it:
// channels_last_3d for a batched call whose input or weight is channels_last_3d.
at::MemoryFormat output_memory_format(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                      const at::Tensor& weight);

// Throws unless `dtype` is one of `supported`, naming the backend in the message.
void check_dtype_supported(const at::Tensor& input, c10::ArrayRef<at::ScalarType> supported,
                           const char* backend);

}  // namespace ct3d
