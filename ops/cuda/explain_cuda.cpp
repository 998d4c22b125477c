// ct3d::explain on CUDA: which path each op takes for a layer's tensors, as the ops plan
// it (engine/planner/op_plan.h, on the same operands: op_operands.h; the all-gradients
// call's weight gradient by planner/fused_backward_plan.h), without computing anything.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>

#include <string>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/conv_transpose3d.h"
#include "ops/cuda/engine/planner/fused_backward_plan.h"
#include "ops/cuda/engine/planner/op_plan.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"
#include "ops/cuda/op_operands.h"

namespace ct3d {

std::string explain_cuda(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                         c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                         c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  const c10::cuda::CUDAGuard device_guard(input.device());
  const cuda::DeviceInfo device = cuda::current_device_info();
  const at::ScalarType dtype = input.scalar_type();
  // The tensors as the ops pass them; meta tensors stand for the outputs and copies they
  // make (explain copies nothing).
  const cuda::OpOperands forward = forward_operands(args, input, weight);
  const at::Tensor& output = forward.target;
  const cuda::OpOperands backward =
      input_gradient_operands(args, at::empty(output.sizes(), output.options()));
  const at::Tensor& grad_input = backward.target;
  const bool empty = output.numel() == 0;
  // Text by concatenation, not iostreams (ops/common/error_message.h says why).
  std::string text = "forward: ";
  text += empty ? "nothing to compute"
                : cuda::describe(cuda::plan_op(conv_problem(cuda::ConvOp::kForward, args, dtype),
                                               device, forward));
  text += "\ninput gradient: ";
  const cuda::OpPlan input_gradient =
      empty || grad_input.numel() == 0
          ? cuda::OpPlan{}
          : cuda::plan_op(conv_problem(cuda::ConvOp::kInputGradient, args, dtype), device,
                          backward);
  text += empty || grad_input.numel() == 0 ? "nothing to compute" : cuda::describe(input_gradient);

  text += "\nweight gradient: ";
  if (weight.numel() == 0 || empty) return text + "nothing to compute\n";
  const cuda::OpPlan weight_gradient =
      cuda::plan_op(conv_problem(cuda::ConvOp::kWeightGradient, args, dtype), device,
                    weight_gradient_operands(args, input));
  if (weight_gradient.path != cuda::OpPath::kEngine) {
    return text + cuda::describe(weight_gradient) + "\n";
  }
  // As the all-gradients call (autograd's, with the input gradient asked for) plans it:
  // the input gradient shares its staged grad_output where it runs on the engine too.
  const bool input_gradient_on_engine = input_gradient.path == cuda::OpPath::kEngine ||
                                        input_gradient.path == cuda::OpPath::kWinograd;
  const at::Tensor wgrad_source =
      weight_gradient.widened
          ? at::empty(forward.source.sizes(), input.options().device(at::kMeta).dtype(at::kFloat))
          : forward.source;
  const cuda::FusedBackwardPlan fused = cuda::plan_fused_backward(
      weight_gradient.weight_gradient, input_gradient_on_engine ? &input_gradient.gather : nullptr,
      device, cuda::wgrad_operands_of(wgrad_source, false), grad_input.sym_sizes());
  if (weight_gradient.widened) text += "widened to float32: ";
  text += cuda::describe(fused.weight_gradient) +
          cuda::describe_staging(weight_gradient.staging_floats);
  if (fused.input_gradient_on_staged_output) {
    text += "; in the all-gradients call the input gradient runs on its staged grad_output";
  }
  return text + "\n";
}

}  // namespace ct3d
