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

#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"

namespace ct3d::cuda {

// The engine's limits (indices, grid, the staged halo), the same for every element
// size; the device's part (a tensor-core GPU with this library's code for it) is
// DeviceInfo::engine.
bool weight_gradient_fits(const WeightGradientPlan& plan);

// The facts of a call's input for the planner: its dtype's size and, as the kernels read
// it (contiguous: a fresh copy where it is not), whether its data is 16-byte aligned (a
// meta tensor by its storage offset, standing for an allocation).
WgradOperands wgrad_operands_of(const at::Tensor& input, bool shares_staged_output);

// input: contiguous (N, C_in, *input); grad_output: contiguous (N, C_out, *output);
// grad_weight: contiguous (C_in, C_out / groups, *kernel), float32, every element
// written. The mainloop as `plan` names it (planner/weight_gradient_mainloop.h; not
// kWidened): float32 operands on either, float16 or bfloat16 on wgmma (products exact
// in float32, partial tiles and their sum in float32, for the caller to round once).
// Workspace: the per-split partial tiles, at most kWeightGradientWorkspaceFloats
// (or one split's tiles per launch, when those alone are larger: a line's short last
// tile may run as a second launch), and the staged operands in
// chunks of samples (staging.h). With grad_bias defined (C_out floats), it is
// summed from the same read of grad_output that stages it. after_chunk: only where the
// plan was made with shares_staged_output.
void launch_weight_gradient(const WgradMainloopPlan& plan, const at::Tensor& input,
                            const at::Tensor& grad_output, at::Tensor& grad_weight,
                            cudaStream_t stream, at::Tensor grad_bias = at::Tensor(),
                            const StagedChunkHook& after_chunk = nullptr);

}  // namespace ct3d::cuda
