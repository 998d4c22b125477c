// The tensors each CUDA op passes its kernels, for asking the planner's entry
// (engine/planner/op_plan.h) without making them: the real tensors where the op passes
// them as they are, meta stand-ins for the copies and outputs it makes (contiguous and
// aligned, as the caching allocator gives them; the same strides). ct3d.explain plans
// on them, so it sees what the op's own plan sees; the entry points plan on the tensors
// they launch with, already made (no meta tensor in their path), but for the half weight
// gradient's non-contiguous input, planned before its copy.
#pragma once

#include <ATen/core/Tensor.h>

#include "ops/common/conv_args.h"
#include "ops/cuda/engine/planner/op_plan.h"

namespace ct3d {

// The forward: the batched input as the op passes it (contiguous: itself, else a copy)
// and the batched output in the memory format the op allocates.
cuda::OpOperands forward_operands(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                  const at::Tensor& weight);

// The input gradient: grad_output (batched; contiguous: itself, else a copy) and
// grad_input (batched, contiguous).
cuda::OpOperands input_gradient_operands(const ConvTranspose3dArgs& args,
                                         const at::Tensor& grad_output);

// The weight gradient: the batched input as the op passes it (contiguous: itself, else a
// copy).
cuda::OpOperands weight_gradient_operands(const ConvTranspose3dArgs& args, const at::Tensor& input);

// The planner's problem of one op of the call whose arguments are `args`, for operands of
// `dtype` (operands_exact_in_tf32: float32 operands widened from float16 or bfloat16).
cuda::ConvProblem conv_problem(cuda::ConvOp op, const ConvTranspose3dArgs& args,
                               at::ScalarType dtype, bool operands_exact_in_tf32 = false);

}  // namespace ct3d
