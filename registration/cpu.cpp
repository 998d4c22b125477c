// Wires ct3d's CPU kernel into the dispatcher; the kernel lives in ops/cpu/.
#include <torch/library.h>

#include "ops/conv_transpose3d.h"

TORCH_LIBRARY_IMPL(ct3d, CPU, m) {
  m.impl("conv_transpose3d", &ct3d::conv_transpose3d_cpu);
}
