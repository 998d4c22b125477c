// The float32 weight gradient on tensor cores (3xTF32): an implicit GEMM whose
// reduction runs over batch x input positions, split across blocks and summed in
// a fixed order (deterministic, no atomics).
//
// grad_weight[ci][co][k] = sum over (n, i) of input[n][ci][i] *
//                          grad_output[n][co][i * stride - padding + k * dilation]
// GEMM view, per (folded) group and tap: input channels on M, output channels on
// N, positions on K. Both operands are staged channels-last (staging.h), the
// grad_output with a zero halo so that every tap of every position reads inside.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"

namespace ct3d::cuda {

bool weight_gradient_supports(const WeightGradientPlan& plan, at::ScalarType dtype);

// input: contiguous (N, C_in, *input); grad_output: contiguous (N, C_out, *output);
// grad_weight: contiguous (C_in, C_out / groups, *kernel), every element written.
// Workspace: the per-split partial tiles, at most kWeightGradientWorkspaceFloats
// (or one split's tiles per launch, when those alone are larger: a line's short last
// tile may run as a second launch), and the staged operands in
// chunks of samples (staging.h). With grad_bias defined (C_out floats), it is
// summed from the same read of grad_output that stages it.
void launch_weight_gradient(const WeightGradientPlan& plan, const at::Tensor& input,
                            const at::Tensor& grad_output, at::Tensor& grad_weight,
                            cudaStream_t stream, at::Tensor grad_bias = at::Tensor(),
                            const StagedChunkHook& after_chunk = nullptr);

// float16 or bfloat16 input and grad_output as they are, on the wgmma mainloop's half
// form (sm_90a, weight_gradient_operands.cuh): products exact in float32, partial
// tiles and their sum in float32. grad_weight (and grad_bias, when defined) are
// float32, to be rounded once by the caller. Returns false, having done nothing,
// where that form does not apply.
// The cheap part of its checks, for before any copy or allocation: not turned off
// (forced_form.h: half-widened), wgmma available, the engine's limits, widths a multiple of 8 (its
// 16-byte input loads) and a multiple of 8 output channels per folded group (its
// ldmatrix rows). The launch may still turn a plan away (shared memory, grid).
bool half_weight_gradient_may_apply(const WeightGradientPlan& plan);
bool launch_half_weight_gradient(const WeightGradientPlan& plan, const at::Tensor& input,
                                 const at::Tensor& grad_output, at::Tensor& grad_weight,
                                 cudaStream_t stream, at::Tensor grad_bias = at::Tensor());

// Whether handing the staged grad_output to the input gradient (after_chunk) pays on
// this device: there the wgmma weight gradient reads it in cp.async pieces, not at its
// own segments' pitch by one bulk copy a pair, which only strided layers below 64
// input channels make up for (blocks of 64, or several blocks, which then fall back to
// mma.sync, lose more than the staging pass saves; KERNEL_LOG "shares its staged grad_output").
bool sharing_staged_output_pays(const WeightGradientPlan& plan);

}  // namespace ct3d::cuda
