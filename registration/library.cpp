// The schema of ct3d::conv_transpose3d: the argument order and defaults of
// torch.nn.functional.conv_transpose3d. SymInt lets torch.compile keep sizes symbolic.
#include <torch/library.h>

TORCH_LIBRARY(ct3d, m) {
  m.def(
      "conv_transpose3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
      "SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) "
      "-> Tensor");
}
