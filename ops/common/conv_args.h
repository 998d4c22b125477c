// One call of ct3d::conv_transpose3d, its arguments checked (conv_transpose3d_args.h
// checks them), and the output-size arithmetic.
#pragma once

#include <c10/core/SymInt.h>

#include <array>
#include <cstdint>
#include <vector>

namespace ct3d {

// The spatial dimensions are always (depth, height, width), in that order.
constexpr int kSpatialDims = 3;
using Int3 = std::array<int64_t, kSpatialDims>;

// Output extent of one spatial dimension of a transposed convolution, the same
// formula torch.nn.ConvTranspose3d documents. A template so the Meta kernel can
// run it on symbolic sizes.
template <typename T>
T transposed_output_extent(const T& input, int64_t kernel, int64_t stride, int64_t padding,
                           int64_t output_padding, int64_t dilation) {
  return (input - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1;
}

// Everything a kernel needs to know about one call, validated.
struct ConvTranspose3dArgs {
  bool batched = true;       // false for 4-D (C, D, H, W) input
  c10::SymInt batch;         // N (1 when unbatched)
  int64_t in_channels = 0;   // C_in
  int64_t out_channels = 0;  // C_out = weight.size(1) * groups
  int64_t groups = 1;
  std::array<c10::SymInt, kSpatialDims> input_size;
  std::array<c10::SymInt, kSpatialDims> output_size;
  Int3 kernel_size{};
  Int3 stride{};
  Int3 padding{};
  Int3 output_padding{};
  Int3 dilation{};
  bool has_bias = false;

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  // Input and output shapes with the batch dimension only when the input had one.
  std::vector<c10::SymInt> input_shape() const;
  std::vector<c10::SymInt> output_shape() const;
  // (C_in, C_out / groups, kD, kH, kW)
  std::vector<c10::SymInt> weight_shape() const;
  // Concrete sizes for the CPU and CUDA kernels (never called on symbolic shapes).
  Int3 concrete_input_size() const;
  Int3 concrete_output_size() const;
};

}  // namespace ct3d
