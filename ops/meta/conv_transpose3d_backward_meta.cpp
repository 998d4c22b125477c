// Meta kernels of the backward ops: shapes and dtypes only, sizes kept symbolic.
#include <ATen/ops/empty.h>

#include "ops/common/conv_transpose3d_backward_args.h"
#include "ops/conv_transpose3d_backward.h"

namespace ct3d {

at::Tensor conv_transpose3d_input_backward_meta(const at::Tensor& grad_output,
                                                const at::Tensor& weight,
                                                c10::SymIntArrayRef input_size,
                                                c10::SymIntArrayRef stride,
                                                c10::SymIntArrayRef padding, c10::SymInt groups,
                                                c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  return at::empty_symint(args.input_shape(), grad_output.options());
}

at::Tensor conv_transpose3d_weight_backward_meta(const at::Tensor& input,
                                                 const at::Tensor& grad_output,
                                                 c10::SymIntArrayRef kernel_size,
                                                 c10::SymIntArrayRef stride,
                                                 c10::SymIntArrayRef padding, c10::SymInt groups,
                                                 c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_weight_backward_args(input, grad_output, kernel_size,
                                                              stride, padding, groups, dilation);
  return at::empty_symint(args.weight_shape(), input.options());
}

}  // namespace ct3d
