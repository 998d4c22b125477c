// The shifted-window GEMM's launch (shifted_window_plan.h): stride-1 problems of
// the gathering implicit GEMM, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Runs the problem (groups folded `fold` at a time; arguments as launch_implicit_gemm)
// on the shifted-window GEMM where it applies and pays (shifted_window_pays) and
// returns true; returns false, having done nothing, where it does not (not sm_90a,
// folded groups, not stride 1, narrow blocks). The tests force it on or off (forced_form.h).
bool launch_shifted_window(const GatherProblem& problem, int fold, const at::Tensor& source,
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
