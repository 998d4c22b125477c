// The plan of the fused backward (all gradients of one call, conv_transpose3d_gradients_cuda.cu):
// whether the input gradient's gather runs on the weight gradient's staged grad_output,
// chunk by chunk, so that grad_output is staged once for both, the weight gradient's
// mainloop given that choice, and the gather's plans for those chunks.
#pragma once

#include <ATen/core/Tensor.h>

#include "ops/cuda/engine/planner/device_info.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"

namespace ct3d::cuda {

struct FusedBackwardPlan {
  bool input_gradient_on_staged_output = false;
  WgradMainloopPlan weight_gradient;
  // Where input_gradient_on_staged_output: the input gradient's GEMM on each chunk of
  // the weight gradient's staged grad_output (its chunk_samples).
  ChunkGemmPlans input_gradient;
};

// weight_gradient: the call's plan (within weight_gradient_fits' limits).
// input_gradient: the input gradient's problem (groups unfolded) where it is asked for
// and within the engine's limits (implicit_gemm_fits), else null. operands: the
// input's facts (shares_staged_output is the planner's to set). grad_input_shape: the
// contiguous grad_input's sizes (a meta tensor of them stands for it, made only where the
// tap-columns form is asked: no work on the calls that never get there).
FusedBackwardPlan plan_fused_backward(const WeightGradientPlan& weight_gradient,
                                      const GatherProblem* input_gradient, const DeviceInfo& device,
                                      WgradOperands operands, c10::SymIntArrayRef grad_input_shape);

}  // namespace ct3d::cuda
