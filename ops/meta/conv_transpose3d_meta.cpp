// Meta kernel: the same checks as the real kernels, then an empty tensor of the
// output's shape and dtype. Sizes stay symbolic so torch.compile(dynamic=True)
// can trace the op without specialising the batch or spatial sizes.
#include <ATen/ops/empty.h>

#include "ops/common/conv_transpose3d_args.h"
#include "ops/conv_transpose3d.h"

namespace ct3d {

at::Tensor conv_transpose3d_meta(const at::Tensor& input, const at::Tensor& weight,
                                 const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                 c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                                 c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  check_dtype_supported(input, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, "Meta");
  return at::empty_symint(args.output_shape(),
                          input.options().memory_format(output_memory_format(args, input, weight)));
}

}  // namespace ct3d
