// ct3d::conv_transpose3d under torch.autocast, by PyTorch's own policy for
// conv_transpose3d ("lower_precision_fp" on CUDA and on the CPU): floating-point
// operands on the autocast device, except float64 ones, are cast to the autocast
// dtype (float16 or bfloat16), so the output has the dtype nn.ConvTranspose3d's
// has in the same context. Its gradients flow back through the casts, so every
// gradient reaches the parameters in their own dtype.
#pragma once

#include "ops/conv_transpose3d.h"

namespace ct3d {

at::Tensor conv_transpose3d_autocast_cuda(const at::Tensor& input, const at::Tensor& weight,
                                          const std::optional<at::Tensor>& bias,
                                          c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                          c10::SymIntArrayRef output_padding, c10::SymInt groups,
                                          c10::SymIntArrayRef dilation);
at::Tensor conv_transpose3d_autocast_cpu(const at::Tensor& input, const at::Tensor& weight,
                                         const std::optional<at::Tensor>& bias,
                                         c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                         c10::SymIntArrayRef output_padding, c10::SymInt groups,
                                         c10::SymIntArrayRef dilation);

}  // namespace ct3d
