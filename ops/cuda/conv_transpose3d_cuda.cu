// CUDA entry point. Same steps as every CUDA op: check arguments, take a device guard on
// the input's device, plan (engine/planner/op_plan.h: the half forms, Winograd, the
// engine's GEMM, or the direct kernel; float16 and bfloat16 widened to float32 where no
// half form takes them, ops/common/reduced_precision.h), launch the plan on PyTorch's
// current stream, check the launch (inside the launchers).
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/common/error_message.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d.h"
#include "ops/cuda/direct_kernel.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/planner/op_plan.h"
#include "ops/cuda/engine/window/half_window.h"
#include "ops/cuda/op_operands.h"
#include "ops/cuda/winograd/winograd_forward.h"

namespace ct3d {

namespace {

// The forward's tensors as the launchers take them: the input batched and contiguous,
// the weight contiguous, the bias contiguous in their dtype (or undefined), and the
// output in the memory format PyTorch gives (output5: its batched view).
struct ForwardTensors {
  at::Tensor input5, weight, bias, output, output5;
};

// The output in the memory format PyTorch gives.
at::Tensor allocate_output(const ConvTranspose3dArgs& args, const at::Tensor& input,
                           const at::Tensor& weight) {
  return at::empty_symint(
      args.output_shape(),
      input.options().memory_format(output_memory_format(args, input, weight)));
}

ForwardTensors forward_tensors(const ConvTranspose3dArgs& args, const at::Tensor& input,
                               const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  ForwardTensors t;
  t.input5 = (args.batched ? input : input.unsqueeze(0)).contiguous();
  t.weight = weight.contiguous();
  t.bias = args.has_bias ? bias->to(input.scalar_type()).contiguous() : at::Tensor();
  t.output = allocate_output(args, input, weight);
  t.output5 = args.batched ? t.output : t.output.unsqueeze(0);
  return t;
}

// Launches the forward as `plan` says (engine/planner/op_plan.h) on `t`, the tensors in
// the plan's dtype (widened to float32 where the plan is).
void launch_forward(const cuda::OpPlan& plan, ForwardTensors& t) {
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const ConvGeometry& geometry = plan.problem.geometry;
  switch (plan.path) {
    case cuda::OpPath::kHalf:
      // The bias widened to float32 by the weight packing, added before the one rounding.
      cuda::launch_half(plan.half, plan.gather, t.input5, t.weight, t.bias, t.output5, stream,
                        plan.staging_floats);
      break;
    case cuda::OpPath::kWinograd:
      cuda::launch_winograd_forward(*plan.winograd, geometry, t.input5, t.weight, t.bias,
                                    t.output5, stream);
      break;
    case cuda::OpPath::kEngine:
      // Writes through the output's strides: contiguous or channels-last.
      cuda::launch_gemm_plan(plan.gemm, t.input5, t.weight, t.bias, t.output5, stream,
                             plan.staging_floats, [&](const int* run_only_if) {
                               cuda::launch_direct_conv_transpose3d(geometry, t.input5, t.weight,
                                                                    t.bias, t.output5, stream,
                                                                    run_only_if);
                             });
      break;
    case cuda::OpPath::kDirect:
      if (t.output5.is_contiguous()) {
        cuda::launch_direct_conv_transpose3d(geometry, t.input5, t.weight, t.bias, t.output5,
                                             stream);
      } else {
        at::Tensor dense = at::empty(t.output5.sizes(), t.output5.options());
        cuda::launch_direct_conv_transpose3d(geometry, t.input5, t.weight, t.bias, dense, stream);
        t.output5.copy_(dense);
      }
      break;
  }
}

// The plan of the forward of `t` (operands_exact_in_tf32: float32 tensors widened from
// float16 or bfloat16), made on the tensors the launch gets.
cuda::OpPlan plan_forward(const ConvTranspose3dArgs& args, const ForwardTensors& t,
                          const cuda::DeviceInfo& device, bool operands_exact_in_tf32) {
  return cuda::plan_op(conv_problem(cuda::ConvOp::kForward, args, t.input5.scalar_type(),
                                    operands_exact_in_tf32),
                       device, cuda::OpOperands{t.input5, t.output5});
}

}  // namespace

at::Tensor conv_transpose3d_cuda(const at::Tensor& input, const at::Tensor& weight,
                                 const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                 c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                                 c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  check_dtype_supported(input, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, "CUDA");
  CT3D_CHECK(input.is_cuda(), "conv_transpose3d (CUDA kernel): input must be a CUDA tensor, got ",
             input.device());
  const c10::cuda::CUDAGuard device_guard(input.device());
  const cuda::DeviceInfo device = cuda::current_device_info();
  const bool half = is_reduced_precision(input);
  if (half && device.wgmma) {
    // The half forms (sm_90a only); where none takes the layer, the plan is the widened
    // float32 one, made for the copies below (fresh: contiguous, aligned; the same
    // output strides).
    ForwardTensors t = forward_tensors(args, input, weight, bias);
    if (t.output.numel() == 0) return t.output;
    const cuda::OpPlan plan = plan_forward(args, t, device, false);
    if (plan.path == cuda::OpPath::kHalf) {
      launch_forward(plan, t);
      return t.output;
    }
    ForwardTensors wide = forward_tensors(args, widened(input), widened(weight), widened(bias));
    launch_forward(plan, wide);
    return wide.output.to(input.scalar_type());
  }
  ForwardTensors t = half ? forward_tensors(args, widened(input), widened(weight), widened(bias))
                          : forward_tensors(args, input, weight, bias);
  if (t.output.numel() > 0) launch_forward(plan_forward(args, t, device, half), t);
  return half ? t.output.to(input.scalar_type()) : t.output;
}

}  // namespace ct3d
