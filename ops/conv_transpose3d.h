// The kernels of ct3d::conv_transpose3d, one per backend, as plain C++ functions:
// registration/ wires them into the dispatcher, and the Catch2 tests call them
// directly. All take the op's schema arguments in the schema's order.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>

#include <optional>
#include <string>

namespace ct3d {

// ct3d's own CPU kernel: float32 and float64, parallel over the machine's cores
// (float16 and bfloat16 computed in float32, ops/common/reduced_precision.h).
at::Tensor conv_transpose3d_cpu(const at::Tensor& input, const at::Tensor& weight,
                                const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                                c10::SymInt groups, c10::SymIntArrayRef dilation);

// ct3d's own CUDA kernels: a 3xTF32 tensor-core implicit GEMM for float32 (and for
// float16 and bfloat16, widened to float32), a direct kernel for float64.
at::Tensor conv_transpose3d_cuda(const at::Tensor& input, const at::Tensor& weight,
                                 const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                 c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                                 c10::SymInt groups, c10::SymIntArrayRef dilation);

// ct3d::explain: which path the forward and both gradients take for these arguments,
// one line each, computing nothing (ops/cpu/explain_cpu.cpp, ops/cuda/explain_cuda.cpp).
std::string explain_cpu(const at::Tensor& input, const at::Tensor& weight,
                        const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                        c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                        c10::SymInt groups, c10::SymIntArrayRef dilation);
std::string explain_cuda(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                         c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                         c10::SymInt groups, c10::SymIntArrayRef dilation);

// Output shape and dtype only, for fake tensors and torch.compile.
at::Tensor conv_transpose3d_meta(const at::Tensor& input, const at::Tensor& weight,
                                 const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                 c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                                 c10::SymInt groups, c10::SymIntArrayRef dilation);

}  // namespace ct3d
