// Meta kernels of the backward ops: shapes and dtypes only, sizes kept symbolic.
#include <ATen/ops/empty.h>

#include "ops/conv_transpose3d_backward.h"
#include "ops/conv_transpose3d_backward_args.h"

namespace ct3d {

at::Tensor conv_transpose3d_input_backward_meta(CT3D_INPUT_BACKWARD_PARAMS) {
  const ConvTranspose3dArgs args =
      check_input_backward_args(grad_output, weight, input_size, stride, padding, groups, dilation);
  return at::empty_symint(args.input_shape(), grad_output.options());
}

at::Tensor conv_transpose3d_weight_backward_meta(CT3D_WEIGHT_BACKWARD_PARAMS) {
  const ConvTranspose3dArgs args = check_weight_backward_args(input, grad_output, kernel_size,
                                                              stride, padding, groups, dilation);
  return at::empty_symint(args.weight_shape(), input.options());
}

}  // namespace ct3d
