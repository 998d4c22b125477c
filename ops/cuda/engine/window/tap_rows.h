// The tap-rows form of the shifted-window GEMM's launch (tap_rows_plan.h): stride-1
// problems whose groups have few target channels, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Runs the problem (groups folded `fold` at a time; arguments as launch_implicit_gemm)
// on the tap-rows form or its tap-columns form where they apply and pay (tap_rows_pays,
// tap_columns_pays) and returns true; returns false, having done nothing, where they do
// not (not sm_90a, folded groups, not stride 1, more than 128 rows of (width tap,
// channel), or for the tap-columns form rows other than tap_rows_plan.h's choices).
// The tests force them on or off (forced_form.h).
bool launch_tap_rows(const GatherProblem& problem, int fold, const at::Tensor& source,
                     const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                     cudaStream_t stream, int64_t staging_budget_floats);

// Whether launch_tap_rows runs the problem (groups unfolded) on the tap-columns form;
// `output` gives only its strides (a meta tensor will do).
bool tap_columns_takes(const GatherProblem& problem, const at::Tensor& output);

// The forward of float16 or bfloat16 tensors (as launch_half_shifted_window's) on the
// tap-rows form's half form (window_operands.cuh), where it applies; false, having
// done nothing, elsewhere.
bool launch_half_tap_rows(const GatherProblem& problem, const at::Tensor& source,
                          const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                          cudaStream_t stream);

}  // namespace ct3d::cuda
