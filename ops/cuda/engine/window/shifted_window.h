// The shifted-window GEMM's launch (shifted_window_plan.h): stride-1 problems of
// the gathering implicit GEMM, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/planner/gemm_plan.h"

namespace ct3d::cuda {

// Runs a plan of the shifted-window GEMM (gemm_plan.h); the source is staged a chunk of
// samples at a time within staging_budget_floats (staging.h).
void launch_shifted_window(const GemmPlan& plan, const at::Tensor& source, const at::Tensor& weight,
                           const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                           int64_t staging_budget_floats);

// Runs a plan of the half shifted window (gemm_plan.h: plan_half_gemm): source, weight
// contiguous float16 or bfloat16 (the same), bias in their dtype or undefined, output in
// the source's dtype.
void launch_half_shifted_window(const HalfPlan& plan, const GatherProblem& problem,
                                const at::Tensor& source, const at::Tensor& weight,
                                const at::Tensor& bias, at::Tensor& output, cudaStream_t stream);

}  // namespace ct3d::cuda
