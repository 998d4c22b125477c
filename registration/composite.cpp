// Wires the composite all-gradients kernel into the dispatcher for every backend
// without a kernel of its own (Meta); it lives in ops/.
#include <torch/library.h>

#include "ops/conv_transpose3d_backward.h"

TORCH_LIBRARY_IMPL(ct3d, CompositeExplicitAutograd, m) {
  m.impl("conv_transpose3d_backward", &ct3d::conv_transpose3d_backward_composite);
}
