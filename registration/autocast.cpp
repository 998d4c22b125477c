// Wires ct3d's autocast kernels into the dispatcher; they live in ops/autocast/.
// The backward ops need none: they receive the forward's already-cast tensors.
#include <torch/library.h>

#include "ops/autocast/conv_transpose3d_autocast.h"

TORCH_LIBRARY_IMPL(ct3d, AutocastCUDA, m) {
  m.impl("conv_transpose3d", &ct3d::conv_transpose3d_autocast_cuda);
}

TORCH_LIBRARY_IMPL(ct3d, AutocastCPU, m) {
  m.impl("conv_transpose3d", &ct3d::conv_transpose3d_autocast_cpu);
}
