// Argument checking and output-size arithmetic for ct3d::conv_transpose3d.
// Backend-free: the CPU, CUDA and Meta kernels all start here, so a bad argument
// gets the same message on every device.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>

#include <array>
#include <optional>

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

// Checks every argument as torch.nn.functional.conv_transpose3d would and throws a
// c10::Error naming the argument (got vs expected) on the first problem found.
// Dtype support differs per backend and is checked by each backend.
ConvTranspose3dArgs check_conv_transpose3d_args(
    const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
    const c10::SymInt& groups, c10::SymIntArrayRef dilation);

// A parameter list is one value for all three dimensions or one per dimension, as
// in torch.nn.functional.conv_transpose3d; `name` goes into the error message.
Int3 expand_parameter(c10::SymIntArrayRef values, const char* name);

// The output's memory format, as torch.nn.functional.conv_transpose3d chooses it:
// channels_last_3d for a batched call whose input or weight is channels_last_3d.
at::MemoryFormat output_memory_format(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                      const at::Tensor& weight);

// Throws unless `dtype` is one of `supported`, naming the backend in the message.
void check_dtype_supported(const at::Tensor& input, c10::ArrayRef<at::ScalarType> supported,
                           const char* backend);

}  // namespace ct3d
