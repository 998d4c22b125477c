// Autograd kernels of ct3d's ops, registered for the Autograd dispatch key
// (registration/autograd.cpp), so C++ and Python callers get the same gradients.
#pragma once

#include "ops/conv_transpose3d.h"
#include "ops/conv_transpose3d_backward.h"

namespace ct3d {

at::Tensor conv_transpose3d_autograd(CT3D_CONV_TRANSPOSE3D_PARAMS);
at::Tensor conv_transpose3d_input_backward_autograd(CT3D_INPUT_BACKWARD_PARAMS);
at::Tensor conv_transpose3d_weight_backward_autograd(CT3D_WEIGHT_BACKWARD_PARAMS);
Gradients conv_transpose3d_backward_autograd(CT3D_BACKWARD_PARAMS);

}  // namespace ct3d
