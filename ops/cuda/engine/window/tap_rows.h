// The tap-rows form of the shifted-window GEMM's launch (tap_rows_plan.h): stride-1
// problems whose groups have few target channels, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/planner/gemm_plan.h"

namespace ct3d::cuda {

// Runs a plan of the tap-rows form or its tap-columns form (gemm_plan.h); a staged
// source is staged a chunk of samples at a time within staging_budget_floats (staging.h).
void launch_tap_rows(const GemmPlan& plan, const at::Tensor& source, const at::Tensor& weight,
                     const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                     int64_t staging_budget_floats);

// Runs a plan of the half tap-rows form (gemm_plan.h: plan_half_gemm); tensors as
// launch_half_shifted_window's.
void launch_half_tap_rows(const HalfPlan& plan, const GatherProblem& problem,
                          const at::Tensor& source, const at::Tensor& weight,
                          const at::Tensor& bias, at::Tensor& output, cudaStream_t stream);

}  // namespace ct3d::cuda
