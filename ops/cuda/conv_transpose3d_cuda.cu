// CUDA entry point. Same four steps as every CUDA op: check arguments, take a
// device guard on the input's device, launch on PyTorch's current stream, check
// the launch (inside the launchers). float16 and bfloat16 run the engine's half forms
// where they apply (engine/half_window.h, engine/half_gather.h), else the float32
// kernels on widened operands (ops/common/reduced_precision.h).
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/common/error_message.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d.h"
#include "ops/cuda/direct_kernel.h"
#include "ops/cuda/engine/gather/half_gather.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/window/half_window.h"
#include "ops/cuda/winograd/winograd_forward.h"

namespace ct3d {

namespace {

// The forward's tensors as the launchers take them: the input batched and contiguous,
// the weight contiguous, the bias contiguous in bias_dtype (or undefined), and the
// output in the memory format PyTorch gives (output5: its batched view).
struct ForwardTensors {
  at::Tensor input5, weight, bias, output, output5;
};

ForwardTensors forward_tensors(const ConvTranspose3dArgs& args, const at::Tensor& input,
                               const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                               at::ScalarType bias_dtype) {
  ForwardTensors t;
  t.input5 = (args.batched ? input : input.unsqueeze(0)).contiguous();
  t.weight = weight.contiguous();
  t.bias = args.has_bias ? bias->to(bias_dtype).contiguous() : at::Tensor();
  t.output =
      at::empty_symint(args.output_shape(),
                       input.options().memory_format(output_memory_format(args, input, weight)));
  t.output5 = args.batched ? t.output : t.output.unsqueeze(0);
  return t;
}

// operands_exact_in_tf32: float32 tensors widened from float16 or bfloat16.
at::Tensor run_forward(const ConvTranspose3dArgs& args, const at::Tensor& input,
                       const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       bool operands_exact_in_tf32) {
  ForwardTensors t = forward_tensors(args, input, weight, bias, input.scalar_type());
  if (t.output.numel() == 0) return t.output;

  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const ConvGeometry geometry = geometry_of(args);
  cuda::GatherProblem problem = cuda::forward_gather(geometry);
  problem.operands_exact_in_tf32 = operands_exact_in_tf32;
  // Widened float16 / bfloat16 operands are exact in TF32 (one product each); the
  // transforms would make them inexact.
  const bool on_engine = cuda::implicit_gemm_supports(problem, input.scalar_type());
  if (on_engine && !operands_exact_in_tf32 && input.scalar_type() == at::kFloat &&
      cuda::launch_winograd_forward(geometry, t.input5, t.weight, t.bias, t.output5, stream)) {
    return t.output;
  }
  if (on_engine) {
    // Writes through the output's strides: contiguous or channels-last.
    cuda::launch_implicit_gemm(problem, t.input5, t.weight, t.bias, t.output5, stream,
                               cuda::kUnlimitedStaging, [&](const int* run_only_if) {
                                 cuda::launch_direct_conv_transpose3d(geometry, t.input5, t.weight,
                                                                      t.bias, t.output5, stream,
                                                                      run_only_if);
                               });
  } else if (t.output5.is_contiguous()) {
    cuda::launch_direct_conv_transpose3d(geometry, t.input5, t.weight, t.bias, t.output5, stream);
  } else {
    at::Tensor dense = at::empty(t.output5.sizes(), t.output5.options());
    cuda::launch_direct_conv_transpose3d(geometry, t.input5, t.weight, t.bias, dense, stream);
    t.output5.copy_(dense);
  }
  return t.output;
}

// float16 or bfloat16 on the engine's half forms (the bias widened to float32 by the
// weight packing, added before the one rounding): the shifted-window kernels (stride
// 1), else the half gathering GEMM;
// nullopt where neither applies. Problems neither may take (other GPUs, narrow strided
// groups) are turned away before any copy or allocation.
std::optional<at::Tensor> run_half_forward(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                           const at::Tensor& weight,
                                           const std::optional<at::Tensor>& bias) {
  const cuda::GatherProblem problem = cuda::forward_gather(geometry_of(args));
  const bool window = cuda::half_window_may_apply(problem);
  const bool gather = cuda::half_gather_may_apply(problem);
  if (!window && !gather) return std::nullopt;
  ForwardTensors t = forward_tensors(args, input, weight, bias, input.scalar_type());
  if (t.output.numel() == 0) return t.output;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  if (!cuda::launch_half_plan(problem, t.input5, t.weight, t.bias, t.output5, stream,
                              cuda::kUnlimitedStaging)) {
    return std::nullopt;
  }
  return t.output;
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
  if (is_reduced_precision(input)) {
    if (std::optional<at::Tensor> output = run_half_forward(args, input, weight, bias)) {
      return *output;
    }
    return run_forward(args, widened(input), widened(weight), widened(bias), true)
        .to(input.scalar_type());
  }
  return run_forward(args, input, weight, bias, false);
}

}  // namespace ct3d
