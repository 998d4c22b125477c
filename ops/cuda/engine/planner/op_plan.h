// The planner's entry for one op of a call: the path it takes (the half forms,
// Winograd's transforms, the engine's GEMM on float32 or widened operands, the direct
// kernels) and that path's plan, from the problem, the device and the tensors as the op
// will pass them. The CUDA entry points launch what it returns and ct3d.explain prints
// it (on stand-ins with the same strides and alignment: op_operands.h), so the two
// agree. The form inside a path is its own planner's:
// plan_half_gemm and plan_gemm (gemm_plan.h), plan_winograd_forward
// (winograd_forward.h), plan_weight_gradient_mainloop (weight_gradient_mainloop.h); the
// all-gradients call adds plan_fused_backward (fused_backward_plan.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "ops/common/conv_geometry.h"
#include "ops/cuda/engine/planner/device_info.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"
#include "ops/cuda/winograd/winograd_forward.h"

namespace ct3d::cuda {

enum class ConvOp { kForward, kInputGradient, kWeightGradient };

// One problem for the three ops: the layer, the op and the operands' dtype. The op
// assigns the GEMM's roles, as CUTLASS swaps A, B and C: the forward gathers the input
// into the output (forward_gather), the input gradient gathers grad_output into
// grad_input (input_gradient_gather: a strided convolution), the weight gradient
// reduces input x grad_output over positions into the weight's shape
// (plan_weight_gradient).
struct ConvProblem {
  ConvOp op = ConvOp::kForward;
  ConvGeometry geometry;
  at::ScalarType dtype = at::kFloat;
  // float32 operands the op widened from float16 or bfloat16 (the half forms declined
  // them): the widened path's plan.
  bool operands_exact_in_tf32 = false;
};

// The tensors as the op passes them to its kernels, for their strides and alignment:
// real tensors, or meta tensors standing for those the op will allocate or copy (the
// caching allocator aligns them). The forward: source the batched input (contiguous),
// target the batched output; the input gradient: grad_output and grad_input; the weight
// gradient: source the input (target unused). Half operands that take the widened path
// are planned as their float32 copy (fresh: contiguous, aligned), from these facts alone.
struct OpOperands {
  at::Tensor source, target;
};

enum class OpPath {
  kHalf,      // float16 / bfloat16 on the half forms: `half`, or the weight gradient's `mainloop`
  kWinograd,  // float32 through Winograd's transforms: `winograd`
  kEngine,    // the implicit-GEMM engine (`gemm` or `mainloop`), on float32 or widened operands
  kDirect,    // the direct kernels: float64, or sizes past the engine's limits
};

struct OpPlan {
  ConvProblem problem;
  OpPath path = OpPath::kDirect;
  // float16 / bfloat16 operands widened to float32 (exact in TF32: one product per
  // multiply-add, no Winograd), for kEngine or kDirect.
  bool widened = false;
  // The forward's and the input gradient's GEMM problem (operands_exact_in_tf32 where
  // widened), and the plan of their path.
  GatherProblem gather;
  HalfPlan half;
  std::optional<WinogradForwardPlan> winograd;  // the input gradient's: of its swapped forward
  GemmPlan gemm;
  // The weight gradient's call plan (operands_exact_in_tf32 where widened) and mainloop.
  WeightGradientPlan weight_gradient;
  WgradMainloopPlan mainloop;
  // The workspace of the staged copies (the source in the GEMM's channels-last layout;
  // both operands for the weight gradient): a chunk of samples at a time within this many
  // floats, kUnlimitedStaging for the whole batch at once. The forward stages whole, the
  // backward ops within backward_staging_budget (staging.h says why). Winograd's
  // transformed tensors: winograd->chunk_samples(); the weight gradient's partial tiles: at
  // most kWeightGradientWorkspaceFloats.
  int64_t staging_floats = kUnlimitedStaging;
};

// The op's plan; the op's output must have elements (the entry points and explain
// answer empty outputs before asking).
OpPlan plan_op(const ConvProblem& problem, const DeviceInfo& device, const OpOperands& operands);

// One line, as ct3d.explain prints it: the path, its form and tiles, its workspace.
std::string describe(const OpPlan& plan);

// The staged copies' workspace where it is bounded ("; staged within N Mi values a
// chunk"), else nothing.
std::string describe_staging(int64_t staging_floats);

}  // namespace ct3d::cuda
