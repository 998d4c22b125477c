// Wires ct3d's Meta kernel into the dispatcher; the kernel lives in ops/meta/.
#include <torch/library.h>

#include "ops/conv_transpose3d.h"
#include "ops/conv_transpose3d_backward.h"

TORCH_LIBRARY_IMPL(ct3d, Meta, m) {
  m.impl("conv_transpose3d", &ct3d::conv_transpose3d_meta);
  m.impl("conv_transpose3d_input_backward", &ct3d::conv_transpose3d_input_backward_meta);
  m.impl("conv_transpose3d_weight_backward", &ct3d::conv_transpose3d_weight_backward_meta);
}
