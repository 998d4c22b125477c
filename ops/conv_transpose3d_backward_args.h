// Checks and sizes shared by the backward kernels of every backend.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>

#include <array>
#include <vector>

#include "ops/conv_transpose3d_args.h"

namespace ct3d {

// One backward problem: y = conv_transpose3d(x, w) with x (N, C_in, in_size),
// w (C_in, C_out / groups, kernel), y (N, C_out, out_size).
struct BackwardProblem {
  c10::SymInt batch;
  int64_t in_channels = 0, out_channels = 0, groups = 1;
  std::array<c10::SymInt, kSpatialDims> in_size, out_size;
  Int3 kernel{}, stride{}, padding{}, dilation{};

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  std::vector<c10::SymInt> input_shape() const;   // (N, C_in, in_size)
  std::vector<c10::SymInt> weight_shape() const;  // (C_in, C_out / groups, kernel)
  Int3 concrete_in_size() const;
  Int3 concrete_out_size() const;
};

BackwardProblem check_input_backward_args(const at::Tensor& grad_output, const at::Tensor& weight,
                                          c10::SymIntArrayRef input_size,
                                          c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                          const c10::SymInt& groups, c10::SymIntArrayRef dilation);

BackwardProblem check_weight_backward_args(const at::Tensor& input, const at::Tensor& grad_output,
                                           c10::SymIntArrayRef kernel_size,
                                           c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                           const c10::SymInt& groups, c10::SymIntArrayRef dilation);

}  // namespace ct3d
