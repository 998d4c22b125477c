// The launch of a float16 / bfloat16 plan: the shifted-window kernels' half form and
// its tap-rows form (window_operands.cuh), or the half gather (half_gather.h): the
// source staged and the weights packed as they are, one float16 or bfloat16 wgmma per
// multiply-add into float32, the output rounded once. sm_90a; the rest widens to
// float32 (ops/common/reduced_precision.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

namespace ct3d::cuda {

struct GatherProblem;  // problem/implicit_gemm_problem.h
struct HalfPlan;       // planner/gemm_plan.h

// Runs the half form `plan` names (plan_half_gemm, through plan_op: the shifted window,
// its tap-rows form or the half gather; not kWidened) on `problem`, the one it was
// planned for (OpPlan::gather). source, weight: contiguous float16
// or bfloat16 (the same); bias: contiguous in their dtype, or undefined; output: the
// source's dtype, contiguous or channels-last, as planned. staging_budget: the half
// gather's chunks of samples (staging.h).
void launch_half(const HalfPlan& plan, const GatherProblem& problem, const at::Tensor& source,
                 const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                 cudaStream_t stream, int64_t staging_budget);

}  // namespace ct3d::cuda
