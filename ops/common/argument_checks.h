// Checks shared by the forward's and the backward ops' argument validation
// (conv_transpose3d_args.cpp, conv_transpose3d_backward_args.cpp), so a bad
// argument gets the same message from all three ops.
#pragma once

#include <ATen/core/Tensor.h>

#include "ops/common/conv_args.h"

namespace ct3d::checks {

constexpr const char* kDimNames[kSpatialDims] = {"depth", "height", "width"};

// `other` must be on the device and have the dtype of `reference`.
void check_same_device_and_dtype(const at::Tensor& reference, const char* reference_name,
                                 const at::Tensor& other, const char* name);

void check_weight_rank(const at::Tensor& weight);

// groups, stride, dilation, padding and output_padding. An empty batch skips the
// output_padding bound, as PyTorch does (it never reaches the backend that checks it).
void check_parameters(const ConvTranspose3dArgs& args, bool empty_batch);

// Kernel extents, each positive, from a 5-D weight.
Int3 kernel_size_of(const at::Tensor& weight);

// An empty batch: a concrete batch of 0 (then spatial extents may be 0 too).
bool is_empty_batch(const ConvTranspose3dArgs& args);

}  // namespace ct3d::checks
