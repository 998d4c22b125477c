// The schemas of ct3d::conv_transpose3d and its backward ops. The forward has
// the argument order and defaults of torch.nn.functional.conv_transpose3d. SymInt
// lets torch.compile keep sizes symbolic.
#include <torch/library.h>

TORCH_LIBRARY(ct3d, m) {
  m.def(
      "conv_transpose3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
      "SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) "
      "-> Tensor");
  // The backward ops (ops/conv_transpose3d_backward.h), batched (5-D) only.
  m.def(
      "conv_transpose3d_input_backward(Tensor grad_output, Tensor weight, SymInt[3] input_size, "
      "SymInt[3] stride, SymInt[3] padding, SymInt groups, SymInt[3] dilation) -> Tensor");
  m.def(
      "conv_transpose3d_weight_backward(Tensor input, Tensor grad_output, SymInt[3] kernel_size, "
      "SymInt[3] stride, SymInt[3] padding, SymInt groups, SymInt[3] dilation) -> Tensor");
  // All three gradients in one call, those output_mask asks for (the others None).
  m.def(
      "conv_transpose3d_backward(Tensor grad_output, Tensor input, Tensor weight, "
      "SymInt[3] stride, SymInt[3] padding, SymInt groups, SymInt[3] dilation, "
      "bool[3] output_mask) -> (Tensor, Tensor, Tensor)");
  // Which path each op takes for the forward's arguments, one line each (ct3d.explain).
  m.def(
      "explain(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
      "SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) "
      "-> str");
}
