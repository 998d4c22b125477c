#include "ops/cuda/op_operands.h"

#include <ATen/ops/empty.h>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"

namespace ct3d {
namespace {

// `tensor` where it is contiguous, else a meta stand-in for its contiguous copy.
at::Tensor as_contiguous(const at::Tensor& tensor) {
  return tensor.is_contiguous() ? tensor
                                : at::empty(tensor.sizes(), tensor.options().device(at::kMeta));
}

}  // namespace

cuda::OpOperands forward_operands(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                  const at::Tensor& weight) {
  const at::TensorOptions meta = input.options().device(at::kMeta);
  at::Tensor output = at::empty_symint(
      args.output_shape(), meta.memory_format(output_memory_format(args, input, weight)));
  if (!args.batched) output = output.unsqueeze(0);
  return {as_contiguous(args.batched ? input : input.unsqueeze(0)), output};
}

cuda::OpOperands input_gradient_operands(const ConvTranspose3dArgs& args,
                                         const at::Tensor& grad_output) {
  at::Tensor grad_input =
      at::empty_symint(args.input_shape(), grad_output.options().device(at::kMeta));
  if (!args.batched) grad_input = grad_input.unsqueeze(0);
  return {as_contiguous(grad_output.dim() == 4 ? grad_output.unsqueeze(0) : grad_output),
          grad_input};
}

cuda::OpOperands weight_gradient_operands(const ConvTranspose3dArgs& args,
                                          const at::Tensor& input) {
  return {as_contiguous(args.batched ? input : input.unsqueeze(0)), at::Tensor()};
}

cuda::ConvProblem conv_problem(cuda::ConvOp op, const ConvTranspose3dArgs& args,
                               at::ScalarType dtype, bool operands_exact_in_tf32) {
  cuda::ConvProblem problem;
  problem.op = op;
  problem.geometry = geometry_of(args);
  problem.dtype = dtype;
  problem.operands_exact_in_tf32 = operands_exact_in_tf32;
  return problem;
}

}  // namespace ct3d
