// The bias gradient on CUDA where no fused kernel sums it (the fused backward's
// staging pass does, also in float64): grad_output (N, C, *positions) summed per
// channel, accumulated in float64 whatever the dtype (ops/cpu/channel_sums.h says
// why), on the given stream.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>

namespace ct3d::cuda {

// (C) in grad_output's dtype; any strides, any floating dtype.
at::Tensor channel_sums(const at::Tensor& grad_output, cudaStream_t stream);

}  // namespace ct3d::cuda
