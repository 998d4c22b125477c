// The float32 fast path: 3xTF32 tensor-core implicit GEMM over stride phases.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/conv_transpose3d_args.h"

namespace ct3d::cuda {

// Whether the implicit GEMM handles this call (float32, kernel extents within the
// per-dimension tap mask, sizes within its index types); the direct kernel
// handles the rest.
bool implicit_gemm_supports(const ConvTranspose3dArgs& args, const at::Tensor& input);

// input: contiguous float32 (N, C_in, D, H, W); weight: contiguous; bias:
// contiguous or undefined; output: any strides (contiguous or channels-last), every
// element written.
void launch_implicit_gemm_conv_transpose3d(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                           const at::Tensor& weight, const at::Tensor& bias,
                                           at::Tensor& output, cudaStream_t stream);

}  // namespace ct3d::cuda
