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
// (see launch_implicit_gemm).
using ExactRerun = std::function<void(const int* run_only_if)>;

// source: contiguous float32 (N, groups * reduce_channels, *source extents);
// weight: contiguous; bias: contiguous or undefined; output: (N, groups *
// target_channels, *target extents), any strides (contiguous or channels-last),
// every element written. With exact_rerun set, small groups may be folded into one
// tile (block-diagonal weights); a non-finite source value would then leak across
// groups, so the launch flags it and queues exact_rerun behind the GEMM. The
// source is staged in chunks of at most staging_budget_floats (staging.h), unless
// `staged` is given: the whole source already staged in gather_staged_layout(problem)
// (the fused backward stages grad_output once for both gradients); groups are then
// not folded.
void launch_implicit_gemm(const GatherProblem& problem, const at::Tensor& source,
                          const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                          cudaStream_t stream, int64_t staging_budget_floats,
                          const ExactRerun& exact_rerun = nullptr,
                          const at::Tensor& staged = at::Tensor());

// The same with the plan made (plan_gemm, or plan_op for an op's whole call): launches
// the form it names. exact_rerun must be set where the plan folded groups.
void launch_gemm_plan(const GemmPlan& plan, const at::Tensor& source, const at::Tensor& weight,
                      const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                      int64_t staging_budget_floats, const ExactRerun& exact_rerun = nullptr,
                      const at::Tensor& staged = at::Tensor());

}  // namespace ct3d::cuda
