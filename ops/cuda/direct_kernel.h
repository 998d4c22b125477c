// The direct CUDA kernel: one thread per output element, gathering every tap that
// lands on it. Simple and exact; it runs float64, and float32 where the implicit
// GEMM (ops/cuda/engine/gather/implicit_gemm.h) cannot (below sm_80, past its index limits,
// its exact rerun). float16 and bfloat16 arrive widened to float32.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/common/conv_geometry.h"

namespace ct3d::cuda {

// input: contiguous (N, C_in, D, H, W); weight: contiguous; bias: contiguous or
// undefined; output: contiguous (N, C_out, OD, OH, OW), fully written.
// With run_only_if set, the kernel reads that device flag first and does nothing
// when it is 0 (an exactness guard the implicit GEMM launches behind itself).
void launch_direct_conv_transpose3d(const ConvGeometry& geometry, const at::Tensor& input,
                                    const at::Tensor& weight, const at::Tensor& bias,
                                    at::Tensor& output, cudaStream_t stream,
                                    const int* run_only_if = nullptr);

}  // namespace ct3d::cuda
