// The float32 forward through Winograd's transforms around the implicit-GEMM engine
// (winograd_plan.h): the weights and the input transformed, the engine's GEMM over
// every (group, xi_h, xi_w), the output transformed back with the bias.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <optional>

#include "ops/common/conv_geometry.h"
#include "ops/cuda/engine/planner/device_info.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/winograd/winograd_plan.h"

namespace ct3d::cuda {

// The Winograd forward's plan: the transforms' and, per chunk of samples, the engine
// GEMM's between them (on the transformed operands, groups unfolded).
struct WinogradForwardPlan {
  WinogradPlan transforms;
  // The input transform writes the GEMM's staged source itself (both dimensions
  // transformed, no halo but the depth's), else a transformed input the GEMM stages.
  bool transform_stages_input = false;
  // Chunks of samples whose transformed input and products stay within the workspace.
  ChunkGemmPlans gemm;
  int64_t chunk_samples() const { return gemm.chunk_samples; }
};

// The plan of the forward of `geometry` (its rule winograd_pays, the option winograd and
// the tests' forced form applied: force_form=winograd takes it wherever it applies, in
// both dimensions where both may be transformed), or nullopt where it does not apply
// (a non-contiguous output, sizes past the transforms' grids or the engine's limits).
// Its workspace: chunks of samples whose transformed input and products take at most
// the option winograd_workspace_mib, else half the layer's input and output (at least
// 256 MiB).
std::optional<WinogradForwardPlan> plan_winograd_forward(const ConvGeometry& geometry,
                                                         const DeviceInfo& device,
                                                         bool output_contiguous);

// The input gradient of a stride-1 layer as a forward (weights flipped, channels swapped
// in each group), or nullopt where it is not one (other strides, output padding).
std::optional<ConvGeometry> input_gradient_as_forward(const ConvGeometry& geometry);

// Runs the forward of `geometry` on `plan` (plan_winograd_forward's), every output
// written. input: contiguous (N, C_in, D, H, W) float32; weight: contiguous; bias:
// contiguous or undefined; output: (N, C_out, OD, OH, OW), contiguous. A chunk of
// plan.chunk_samples() samples at a time.
void launch_winograd_forward(const WinogradForwardPlan& plan, const ConvGeometry& geometry,
                             const at::Tensor& input, const at::Tensor& weight,
                             const at::Tensor& bias, at::Tensor& output, cudaStream_t stream);

// The float32 input gradient of a layer with stride 1 and no output padding, as the
// forward of grad_output (contiguous, batched) with the weights flipped and their
// channels swapped, into grad_input (contiguous); `plan` is the swapped forward's
// (plan_winograd_forward of input_gradient_as_forward(geometry)).
void launch_winograd_input_gradient(const WinogradForwardPlan& plan,
                                    const ConvGeometry& geometry,
                                    const at::Tensor& grad_output, const at::Tensor& weight,
                                    at::Tensor& grad_input, cudaStream_t stream);

// Where the Winograd forward measured faster than the engine alone (docs/KERNEL_LOG.md,
// "Winograd F(m, r)").
bool winograd_pays(const ConvGeometry& geometry, const DeviceInfo& device);

}  // namespace ct3d::cuda
