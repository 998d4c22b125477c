#include "ops/common/conv_transpose3d_args.h"

#include <c10/core/SymBool.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "ops/common/argument_checks.h"
#include "ops/common/error_message.h"

namespace ct3d {
using namespace checks;

Int3 expand_parameter(c10::SymIntArrayRef values, const char* name) {
  CT3D_CHECK(values.size() == 1 || values.size() == kSpatialDims, "conv_transpose3d: ", name,
             " must be a single integer or a list of 3 integers (depth, height, width), got ",
             values.size(), " values");
  Int3 expanded{};
  for (int i = 0; i < kSpatialDims; ++i) {
    const c10::SymInt& value = values[values.size() == 1 ? 0 : i];
    expanded[i] = value.guard_int(__FILE__, __LINE__);
  }
  return expanded;
}

ConvTranspose3dArgs check_conv_transpose3d_args(
    const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
    const c10::SymInt& groups, c10::SymIntArrayRef dilation) {
  CT3D_CHECK(input.dim() == 4 || input.dim() == 5,
             "conv_transpose3d: input must be a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) tensor, "
             "got a ",
             input.dim(), "-D tensor of shape ", input.sym_sizes());
  check_weight_rank(weight);
  check_same_device_and_dtype(input, "input", weight, "weight");
  CT3D_CHECK(at::isFloatingType(input.scalar_type()),
             "conv_transpose3d: input must have a floating-point dtype, got ", input.scalar_type());

  ConvTranspose3dArgs args;
  args.batched = input.dim() == 5;
  const int64_t channel_dim = args.batched ? 1 : 0;
  args.batch = args.batched ? input.sym_size(0) : c10::SymInt(1);
  args.in_channels = input.sym_size(channel_dim).guard_int(__FILE__, __LINE__);
  args.groups = groups.guard_int(__FILE__, __LINE__);
  args.stride = expand_parameter(stride, "stride");
  args.padding = expand_parameter(padding, "padding");
  args.output_padding = expand_parameter(output_padding, "output_padding");
  args.dilation = expand_parameter(dilation, "dilation");
  const bool empty_batch = is_empty_batch(args);
  check_parameters(args, empty_batch);

  const int64_t weight_in_channels = weight.sym_size(0).guard_int(__FILE__, __LINE__);
  const int64_t weight_out_channels = weight.sym_size(1).guard_int(__FILE__, __LINE__);
  CT3D_CHECK(weight_in_channels > 0,
             "conv_transpose3d: weight.size(0) (input channels) must be positive, got weight of "
             "shape ",
             weight.sym_sizes());
  CT3D_CHECK(weight_in_channels % args.groups == 0,
             "conv_transpose3d: weight.size(0) (input channels) must be divisible by groups: "
             "got ",
             weight_in_channels, " with groups=", args.groups);
  CT3D_CHECK(args.in_channels == weight_in_channels,
             "conv_transpose3d: input channels must equal weight.size(0): got ", args.in_channels,
             " (input of shape ", input.sym_sizes(), "), expected ", weight_in_channels);
  args.out_channels = weight_out_channels * args.groups;
  args.kernel_size = kernel_size_of(weight);

  if (bias.has_value() && bias->defined()) {
    check_same_device_and_dtype(input, "input", *bias, "bias");
    CT3D_CHECK(bias->dim() == 1 && bias->sym_size(0) == args.out_channels,
               "conv_transpose3d: bias must be a 1-D tensor of out_channels elements: got shape ",
               bias->sym_sizes(), ", expected [", args.out_channels, "]");
    args.has_bias = true;
  }

  // As in PyTorch, an empty batch may have empty spatial extents (and then gives an
  // empty output); otherwise every input extent must be positive. An output extent
  // of exactly 0 gives an empty output on every device (PyTorch 2.14's CPU path
  // raises there instead); a negative one is an error.
  for (int i = 0; i < kSpatialDims; ++i) {
    args.input_size[i] = input.sym_size(channel_dim + 1 + i);
    CT3D_SYM_CHECK(args.input_size[i].sym_ge(empty_batch ? 0 : 1), "conv_transpose3d: input ",
                   kDimNames[i], " must be positive, got input of shape ", input.sym_sizes());
    args.output_size[i] =
        transposed_output_extent(args.input_size[i], args.kernel_size[i], args.stride[i],
                                 args.padding[i], args.output_padding[i], args.dilation[i]);
    CT3D_SYM_CHECK(args.output_size[i].sym_ge(0), "conv_transpose3d: output ", kDimNames[i],
                   " would be ", args.output_size[i], " (input ", args.input_size[i], ", kernel ",
                   args.kernel_size[i], ", stride ", args.stride[i], ", padding ", args.padding[i],
                   ", output_padding ", args.output_padding[i], ", dilation ", args.dilation[i],
                   "); it must not be negative");
  }
  return args;
}

at::MemoryFormat output_memory_format(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                      const at::Tensor& weight) {
  // An unbatched (4-D) output has no channels_last_3d format: PyTorch returns it
  // contiguous whatever the weight's format.
  const bool channels_last =
      args.batched && (input.suggest_memory_format() == at::MemoryFormat::ChannelsLast3d ||
                       weight.suggest_memory_format() == at::MemoryFormat::ChannelsLast3d);
  return channels_last ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::Contiguous;
}

void check_dtype_supported(const at::Tensor& input, c10::ArrayRef<at::ScalarType> supported,
                           const char* backend) {
  const bool ok =
      std::find(supported.begin(), supported.end(), input.scalar_type()) != supported.end();
  CT3D_CHECK(ok, "conv_transpose3d: dtype ", input.scalar_type(), " is not supported on ", backend,
             "; supported: ", supported);
}

}  // namespace ct3d
