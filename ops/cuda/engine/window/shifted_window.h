// The shifted-window GEMM's launch (shifted_window_plan.h): stride-1 problems of
// the gathering implicit GEMM, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/planner/gemm_plan.h"

namespace ct3d::cuda {

// Runs a plan of the shifted-window GEMM (gemm_plan.h); the source is staged a chunk of
// samples at a time within staging_budget_floats (staging.h).
void launch_shifted_window(const GemmPlan& plan, const at::Tensor& source,
                           const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                           cudaStream_t stream, int64_t staging_budget_floats);

// The forward of float16 or bfloat16 tensors (contiguous source, weight and bias in
// one dtype; no bias: undefined; output in the source's dtype, groups not folded) on the
// shifted-window GEMM's half form (window_operands.cuh), where it applies (and, with
// only_where_float_pays, where the float32 form pays); false, having done nothing,
// elsewhere.
bool launch_half_shifted_window(const GatherProblem& problem, const at::Tensor& source,
                                const at::Tensor& weight, const at::Tensor& bias,
                                at::Tensor& output, cudaStream_t stream,
                                bool only_where_float_pays);

}  // namespace ct3d::cuda
