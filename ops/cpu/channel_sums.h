// The bias gradient on the CPU: grad_output (N, C, *positions) summed over samples
// and positions per channel, accumulated in float64 whatever the dtype. A channel's
// sum is one number, often with heavy cancellation (random gradients of either sign):
// a float32 running sum over 10^3 values erred by up to 1.7e-4 relative to it.
#pragma once

#include <ATen/core/Tensor.h>

namespace ct3d::cpu {

// (C) in grad_output's dtype; any strides, any floating dtype.
at::Tensor channel_sums(const at::Tensor& grad_output);

}  // namespace ct3d::cpu
