// Wires ct3d's CUDA kernel into the dispatcher; the kernel lives in ops/cuda/.
#include <torch/library.h>

#include "ops/conv_transpose3d.h"
#include "ops/conv_transpose3d_backward.h"

TORCH_LIBRARY_IMPL(ct3d, CUDA, m) {
  m.impl("conv_transpose3d", &ct3d::conv_transpose3d_cuda);
  m.impl("conv_transpose3d_input_backward", &ct3d::conv_transpose3d_input_backward_cuda);
  m.impl("conv_transpose3d_weight_backward", &ct3d::conv_transpose3d_weight_backward_cuda);
  m.impl("conv_transpose3d_backward", &ct3d::conv_transpose3d_backward_cuda);
  m.impl("explain", &ct3d::explain_cuda);
}
