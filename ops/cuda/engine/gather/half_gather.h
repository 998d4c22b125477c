// The gathering implicit GEMM on float16 / bfloat16 operands (wgmma_half_gather_kernel.cuh):
// any stride, dilation and padding, the source staged and the weights packed as they
// are, one float16 or bfloat16 wgmma per multiply-add into float32, the output rounded
// once. sm_90a; the half forms' second choice after the shifted-window kernels
// (half_window.h), which take stride-1 problems only.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Runs the problem on the half gather (the planner's HalfForm::kGather: gemm_plan.h);
// tensors as launch_half's (half_window.h), staged whole, or in chunks of samples
// within staging_budget elements.
void launch_half_gather(const GatherProblem& problem, const at::Tensor& source,
                        const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                        cudaStream_t stream, int64_t staging_budget);

}  // namespace ct3d::cuda
