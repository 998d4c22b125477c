// All gradients of one forward call on CUDA (conv_transpose3d_backward). With the
// weight gradient on the float32 engine, grad_output is read once: the weight
// gradient's staging pass also sums dL/db, and when the input gradient's GEMM reads
// grad_output in the same staged layout it runs on that copy, chunk by chunk. The
// rest (other dtypes, other layouts) runs the two backward ops' own kernels.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/conv_geometry.h"
#include "ops/conv_transpose3d_backward.h"
#include "ops/conv_transpose3d_backward_args.h"
#include "ops/cuda/engine/implicit_gemm.h"
#include "ops/cuda/engine/weight_gradient.h"
#include "ops/error_message.h"

namespace ct3d {
namespace {

// The two backward ops' own CUDA kernels and a sum: nothing shared.
Gradients separate_gradients(CT3D_BACKWARD_PARAMS) {
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = conv_transpose3d_input_backward_cuda(grad_output, weight, input.sym_sizes().slice(2),
                                                      stride, padding, groups, dilation);
  }
  if (output_mask[1]) {
    grad_weight = conv_transpose3d_weight_backward_cuda(
        input, grad_output, weight.sym_sizes().slice(2), stride, padding, groups, dilation);
  }
  if (output_mask[2]) grad_bias = bias_gradient(grad_output);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

Gradients conv_transpose3d_backward_cuda(CT3D_BACKWARD_PARAMS) {
  const ConvTranspose3dArgs args =
      check_backward_args(grad_output, input, weight, stride, padding, groups, dilation);
  CT3D_CHECK(grad_output.is_cuda(), "conv_transpose3d backward (CUDA kernel): expected CUDA "
             "tensors, got ", grad_output.device());
  const c10::cuda::CUDAGuard device_guard(grad_output.device());
  const ConvGeometry geometry = geometry_of(args);
  const cuda::WeightGradientPlan plan = cuda::plan_weight_gradient(geometry);
  const bool fused = output_mask[1] && geometry.batch > 0 &&
                     weight.numel() > 0 && input.numel() > 0 &&
                     cuda::weight_gradient_supports(plan, grad_output.scalar_type());
  if (!fused) {
    return separate_gradients(grad_output, input, weight, stride, padding, groups, dilation,
                              output_mask);
  }
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const at::Tensor x = input.contiguous(), g = grad_output.contiguous(), w = weight.contiguous();
  at::Tensor grad_weight = at::empty_symint(args.weight_shape(), input.options());
  at::Tensor grad_bias;
  if (output_mask[2]) grad_bias = at::empty({args.out_channels}, input.options());
  at::Tensor grad_input;
  cuda::StagedChunkHook input_gradient_on_chunk;
  if (output_mask[0]) {
    const cuda::GatherProblem problem = cuda::input_gradient_gather(geometry);
    if (cuda::implicit_gemm_supports(problem, at::kFloat) &&
        cuda::gather_staged_layout(problem) == plan.output) {
      grad_input = at::empty_symint(args.input_shape(), input.options());
      // `problem` by value: the hook runs after this block ends.
      input_gradient_on_chunk = [&, problem](int64_t first, int64_t samples,
                                             const at::Tensor& staged) {
        cuda::GatherProblem chunk = problem;
        chunk.batch = samples;
        at::Tensor grad_input_chunk = grad_input.narrow(0, first, samples);
        cuda::launch_implicit_gemm(chunk, g.narrow(0, first, samples), w, at::Tensor(),
                                   grad_input_chunk, stream, cuda::kUnlimitedStaging, nullptr,
                                   staged);
      };
    } else {
      grad_input = conv_transpose3d_input_backward_cuda(g, w, input.sym_sizes().slice(2), stride,
                                                        padding, groups, dilation);
    }
  }
  cuda::launch_weight_gradient(plan, x, g, grad_weight, stream, grad_bias,
                               input_gradient_on_chunk);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace ct3d
