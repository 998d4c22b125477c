// The two gradients on CUDA after their argument checks, shared by the backward ops
// and the all-gradients op (conv_transpose3d_gradients_cuda.cu), on the current
// device: float32 or float64 tensors, except half_input_gradient_cuda's.
#pragma once

#include <ATen/core/Tensor.h>

#include "ops/common/conv_transpose3d_args.h"

namespace ct3d {

// The device and dtype check of every CUDA backward op, after its argument checks
// (which already made all its tensors agree in device and dtype).
void check_backward_tensor_cuda(const at::Tensor& tensor);

// operands_exact_in_tf32: float32 widened from float16 or bfloat16 (one TF32
// product per multiply-add is exact).
at::Tensor input_gradient_cuda(const ConvTranspose3dArgs& args, const at::Tensor& grad_output,
                               const at::Tensor& weight, bool operands_exact_in_tf32);

// float16 or bfloat16: the input gradient on the engine's half forms where they apply
// (sm_90a: engine/half_window.h for stride 1, else engine/half_gather.h); undefined
// elsewhere.
at::Tensor half_input_gradient_cuda(const ConvTranspose3dArgs& args, const at::Tensor& grad_output,
                                    const at::Tensor& weight);

at::Tensor weight_gradient_cuda(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                const at::Tensor& grad_output, bool operands_exact_in_tf32);

// float16 or bfloat16: the weight gradient, and with `bias` the bias gradient from the
// same staging pass, on the engine's half form where the weight gradient's planner takes it
// (engine/planner/weight_gradient_mainloop.h: wgmma, sm_90a); both undefined elsewhere.
struct HalfWeightGradients {
  at::Tensor weight, bias;
};
HalfWeightGradients half_weight_gradient_cuda(const ConvTranspose3dArgs& args,
                                              const at::Tensor& input,
                                              const at::Tensor& grad_output, bool bias);

}  // namespace ct3d
