// Wires ct3d's autograd kernels into the dispatcher; they live in ops/autograd/.
#include <torch/library.h>

#include "ops/autograd/conv_transpose3d_autograd.h"

TORCH_LIBRARY_IMPL(ct3d, Autograd, m) {
  m.impl("conv_transpose3d", &ct3d::conv_transpose3d_autograd);
  m.impl("conv_transpose3d_input_backward", &ct3d::conv_transpose3d_input_backward_autograd);
  m.impl("conv_transpose3d_weight_backward", &ct3d::conv_transpose3d_weight_backward_autograd);
  m.impl("conv_transpose3d_backward", &ct3d::conv_transpose3d_backward_autograd);
}
