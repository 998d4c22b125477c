#include "ops/common/conv_transpose3d_backward_args.h"

#include <algorithm>

#include "ops/common/argument_checks.h"
#include "ops/common/error_message.h"

namespace ct3d {
namespace {

using namespace checks;

void check_batched(const at::Tensor& tensor, const char* name) {
  CT3D_CHECK(tensor.dim() == 5, "conv_transpose3d backward: ", name,
             " must be a 5-D (N, C, D, H, W) tensor, got a ", tensor.dim(), "-D tensor of shape ",
             tensor.sym_sizes());
}

// The forward's parameter checks; output_padding is checked afterwards, against
// grad_output's extents (output_extents_from).
ConvTranspose3dArgs parameters_of(c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                  const c10::SymInt& groups, c10::SymIntArrayRef dilation) {
  ConvTranspose3dArgs args;
  args.stride = expand_parameter(stride, "stride");
  args.padding = expand_parameter(padding, "padding");
  args.dilation = expand_parameter(dilation, "dilation");
  args.groups = groups.guard_int(__FILE__, __LINE__);
  check_parameters(args, /*empty_batch=*/true);
  return args;
}

void check_channels_divisible(const ConvTranspose3dArgs& args) {
  CT3D_CHECK(args.in_channels % args.groups == 0 && args.out_channels % args.groups == 0,
             "conv_transpose3d backward: input channels ", args.in_channels,
             " and output channels ", args.out_channels, " must be divisible by groups ",
             args.groups);
}

// Input extents (positive unless the batch is empty) and grad_output's extents,
// which must be the forward's output extents for some valid output_padding.
void set_extents(ConvTranspose3dArgs& args, const at::Tensor& grad_output,
                 const std::array<c10::SymInt, kSpatialDims>& input_size) {
  const bool empty_batch = is_empty_batch(args);
  const int64_t smallest_extent = empty_batch ? 0 : 1;
  for (int i = 0; i < kSpatialDims; ++i) {
    args.input_size[i] = input_size[i];
    CT3D_SYM_CHECK(args.input_size[i].sym_ge(smallest_extent), "conv_transpose3d backward: input ",
                   kDimNames[i], " must be positive, got ", args.input_size[i]);
    args.output_size[i] = grad_output.sym_size(2 + i);
    const c10::SymInt natural =
        transposed_output_extent(args.input_size[i], args.kernel_size[i], args.stride[i],
                                 args.padding[i], 0, args.dilation[i]);
    const int64_t largest_padding =
        empty_batch ? INT64_MAX : std::max(args.stride[i], args.dilation[i]) - 1;
    args.output_padding[i] = (args.output_size[i] - natural).guard_int(__FILE__, __LINE__);
    CT3D_CHECK(args.output_padding[i] >= 0 && args.output_padding[i] <= largest_padding,
               "conv_transpose3d backward: grad_output ", kDimNames[i], " is ", args.output_size[i],
               ", expected the forward's output ", kDimNames[i], " for input ", args.input_size[i],
               ", kernel ", args.kernel_size[i], ", stride ", args.stride[i], ", padding ",
               args.padding[i], " and dilation ", args.dilation[i], ": ", natural,
               " plus an output_padding below max(stride, dilation)");
  }
}

}  // namespace

ConvTranspose3dArgs check_input_backward_args(
    const at::Tensor& grad_output, const at::Tensor& weight, c10::SymIntArrayRef input_size,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, const c10::SymInt& groups,
    c10::SymIntArrayRef dilation) {
  check_batched(grad_output, "grad_output");
  check_weight_rank(weight);
  check_same_device_and_dtype(grad_output, "grad_output", weight, "weight");
  CT3D_CHECK(input_size.size() == kSpatialDims,
             "conv_transpose3d backward: input_size must have 3 values (depth, height, width), "
             "got ",
             input_size.size());
  ConvTranspose3dArgs args = parameters_of(stride, padding, groups, dilation);
  args.batch = grad_output.sym_size(0);
  args.in_channels = weight.sym_size(0).guard_int(__FILE__, __LINE__);
  args.out_channels = weight.sym_size(1).guard_int(__FILE__, __LINE__) * args.groups;
  check_channels_divisible(args);
  const int64_t grad_channels = grad_output.sym_size(1).guard_int(__FILE__, __LINE__);
  CT3D_CHECK(grad_channels == args.out_channels, "conv_transpose3d backward: grad_output has ",
             grad_channels, " channels, expected weight.size(1) * groups = ", args.out_channels);
  args.kernel_size = kernel_size_of(weight);
  set_extents(args, grad_output, {input_size[0], input_size[1], input_size[2]});
  return args;
}

ConvTranspose3dArgs check_weight_backward_args(
    const at::Tensor& input, const at::Tensor& grad_output, c10::SymIntArrayRef kernel_size,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, const c10::SymInt& groups,
    c10::SymIntArrayRef dilation) {
  check_batched(input, "input");
  check_batched(grad_output, "grad_output");
  check_same_device_and_dtype(input, "input", grad_output, "grad_output");
  ConvTranspose3dArgs args = parameters_of(stride, padding, groups, dilation);
  args.kernel_size = expand_parameter(kernel_size, "kernel_size");
  for (int i = 0; i < kSpatialDims; ++i) {
    CT3D_CHECK(args.kernel_size[i] > 0, "conv_transpose3d: kernel size must be positive, got ",
               args.kernel_size[i], " in ", kDimNames[i]);
  }
  args.batch = input.sym_size(0);
  CT3D_SYM_CHECK(grad_output.sym_size(0).sym_eq(args.batch),
                 "conv_transpose3d backward: grad_output batch ", grad_output.sym_size(0),
                 " must equal input batch ", args.batch);
  args.in_channels = input.sym_size(1).guard_int(__FILE__, __LINE__);
  args.out_channels = grad_output.sym_size(1).guard_int(__FILE__, __LINE__);
  check_channels_divisible(args);
  set_extents(args, grad_output, {input.sym_size(2), input.sym_size(3), input.sym_size(4)});
  return args;
}

ConvTranspose3dArgs check_backward_args(const at::Tensor& grad_output, const at::Tensor& input,
                                        const at::Tensor& weight, c10::SymIntArrayRef stride,
                                        c10::SymIntArrayRef padding, const c10::SymInt& groups,
                                        c10::SymIntArrayRef dilation) {
  check_batched(input, "input");
  const ConvTranspose3dArgs args = check_input_backward_args(
      grad_output, weight, input.sym_sizes().slice(2), stride, padding, groups, dilation);
  check_same_device_and_dtype(grad_output, "grad_output", input, "input");
  CT3D_SYM_CHECK(input.sym_size(0).sym_eq(args.batch), "conv_transpose3d backward: input batch ",
                 input.sym_size(0), " must equal grad_output batch ", args.batch);
  const int64_t in_channels = input.sym_size(1).guard_int(__FILE__, __LINE__);
  CT3D_CHECK(in_channels == args.in_channels, "conv_transpose3d backward: input has ", in_channels,
             " channels, expected weight.size(0) = ", args.in_channels);
  return args;
}

}  // namespace ct3d
