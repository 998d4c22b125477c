// An independent float64 reference for the tests: the textbook scatter form of a
// transposed convolution (every input element adds weight * value to the outputs
// its taps reach), written with plain loops, sharing no code with ct3d's kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>

namespace ct3d::test {

struct ConvCase {
  int64_t batch, in_channels, out_channels, groups;
  std::array<int64_t, 3> input, kernel, stride, padding, output_padding, dilation;
  bool bias;
};

// input (N, C_in, D, H, W), weight (C_in, C_out / groups, kD, kH, kW), bias (C_out)
// or undefined; any floating dtype, any device. Returns float64 on the CPU.
at::Tensor naive_conv_transpose3d(const at::Tensor& input, const at::Tensor& weight,
                                  const at::Tensor& bias, const ConvCase& c);

// Fresh random tensors for a case: (input, weight, bias-or-undefined).
std::array<at::Tensor, 3> random_tensors(const ConvCase& c, at::ScalarType dtype, uint64_t seed);

// ||a - b|| / ||b|| in float64.
double relative_error(const at::Tensor& a, const at::Tensor& b);

// A valid random case (output extent positive in every dimension).
ConvCase random_case(uint64_t seed);

}  // namespace ct3d::test
