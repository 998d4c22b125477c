// The forward of float16 and bfloat16 tensors on the shifted-window kernels' half
// form (window_operands.cuh): the source staged and the weights packed as they are,
// one float16 or bfloat16 wgmma per multiply-add into float32, the output rounded
// once. Stride-1 problems on sm_90a; everything else widens to float32
// (ops/common/reduced_precision.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Whether the half form may apply, checked before anything is allocated: not turned off
// (forced_form.h: half-gather, half-widened), wgmma available, one stride phase in every
// dimension. The kernels' plans may still turn a problem away (plan_half_gemm).
bool half_window_may_apply(const GatherProblem& problem);

// Runs the problem on the half form the planner picks (plan_half_gemm: the shifted
// window, its tap-rows form or the half gather) and returns true; returns false, having
// done nothing, where it picks none (the op then widens to float32). source, weight:
// contiguous float16 or bfloat16 (the same); bias: contiguous in their dtype, or
// undefined; output: the source's dtype, contiguous or channels-last. staging_budget:
// the half gather's chunks of samples (staging.h).
bool launch_half_plan(const GatherProblem& problem, const at::Tensor& source,
                      const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                      cudaStream_t stream, int64_t staging_budget);

}  // namespace ct3d::cuda
