// The float32 gathering implicit GEMM (3xTF32 tensor cores): the forward over
// stride phases, and the input gradient as a strided convolution.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <functional>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/staging/staging.h"

namespace ct3d::cuda {

struct GemmPlan;  // planner/gemm_plan.h

// Whether the engine handles this problem: strides within the per-launch residue limit,
// sizes within its index types (the direct kernels handle the rest); the device's part
// (a tensor-core GPU with this library's code for it) is DeviceInfo::engine.
bool implicit_gemm_fits(const GatherProblem& problem);

// Runs an exact fallback on the stream when the device flag it is given is set
// (see launch_gemm_plan).
using ExactRerun = std::function<void(const int* run_only_if)>;

// Launches the form `plan` names (plan_gemm's: plan_op for an op's whole call,
// plan_chunk_gemms for a chunk of samples). source: contiguous float32 (N, groups *
// reduce_channels, *source extents); weight: contiguous; bias: contiguous or undefined;
// output: (N, groups * target_channels, *target extents), any strides (contiguous or
// channels-last), every element written. Where the plan folded small groups into one
// tile (block-diagonal weights), a non-finite source value would leak across groups, so
// the launch flags it and queues exact_rerun (which must be set) behind the GEMM. The
// source is staged in chunks of at most staging_budget_floats (staging.h), unless
// `staged` is given: the whole source already staged in gather_staged_layout(problem)
// (Winograd's input transform, the fused backward's grad_output staged once for both
// gradients), which the plan was made for (GemmOperands::prestaged: groups unfolded).
void launch_gemm_plan(const GemmPlan& plan, const at::Tensor& source, const at::Tensor& weight,
                      const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                      int64_t staging_budget_floats, const ExactRerun& exact_rerun = nullptr,
                      const at::Tensor& staged = at::Tensor());

}  // namespace ct3d::cuda
