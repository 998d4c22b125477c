#include "ops/conv_transpose3d_backward_args.h"

#include "ops/error_message.h"

namespace ct3d {
namespace {

void check_parameters(BackwardProblem& p, c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                      const c10::SymInt& groups, c10::SymIntArrayRef dilation) {
  p.stride = expand_parameter(stride, "stride");
  p.padding = expand_parameter(padding, "padding");
  p.dilation = expand_parameter(dilation, "dilation");
  p.groups = groups.guard_int(__FILE__, __LINE__);
  CT3D_CHECK(p.groups > 0, "conv_transpose3d backward: groups must be positive, got ", p.groups);
  for (int i = 0; i < kSpatialDims; ++i) {
    CT3D_CHECK(p.stride[i] > 0 && p.dilation[i] > 0 && p.padding[i] >= 0,
               "conv_transpose3d backward: stride and dilation must be positive and padding "
               "non-negative");
  }
}

void check_same_tensor_kind(const at::Tensor& first, const at::Tensor& second,
                            const char* second_name) {
  CT3D_CHECK(second.device() == first.device() && second.scalar_type() == first.scalar_type(),
             "conv_transpose3d backward: ", second_name,
             " must match the other tensor's device and dtype, got ", second.device(), " ",
             second.scalar_type(), ", expected ", first.device(), " ", first.scalar_type());
}

}  // namespace

std::vector<c10::SymInt> BackwardProblem::input_shape() const {
  return {batch, c10::SymInt(in_channels), in_size[0], in_size[1], in_size[2]};
}

std::vector<c10::SymInt> BackwardProblem::weight_shape() const {
  return {c10::SymInt(in_channels), c10::SymInt(out_channels_per_group()), c10::SymInt(kernel[0]),
          c10::SymInt(kernel[1]), c10::SymInt(kernel[2])};
}

Int3 BackwardProblem::concrete_in_size() const {
  return {in_size[0].expect_int(), in_size[1].expect_int(), in_size[2].expect_int()};
}

Int3 BackwardProblem::concrete_out_size() const {
  return {out_size[0].expect_int(), out_size[1].expect_int(), out_size[2].expect_int()};
}

BackwardProblem check_input_backward_args(const at::Tensor& grad_output, const at::Tensor& weight,
                                          c10::SymIntArrayRef input_size,
                                          c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                          const c10::SymInt& groups, c10::SymIntArrayRef dilation) {
  CT3D_CHECK(grad_output.dim() == 5 && weight.dim() == 5,
             "conv_transpose3d input backward: grad_output and weight must be 5-D, got ",
             grad_output.dim(), "-D and ", weight.dim(), "-D");
  CT3D_CHECK(input_size.size() == kSpatialDims,
             "conv_transpose3d input backward: input_size must have 3 values, got ",
             input_size.size());
  check_same_tensor_kind(grad_output, weight, "weight");
  BackwardProblem p;
  check_parameters(p, stride, padding, groups, dilation);
  p.batch = grad_output.sym_size(0);
  p.in_channels = weight.sym_size(0).guard_int(__FILE__, __LINE__);
  p.out_channels = weight.sym_size(1).guard_int(__FILE__, __LINE__) * p.groups;
  CT3D_CHECK(p.in_channels % p.groups == 0 &&
                 grad_output.sym_size(1).guard_int(__FILE__, __LINE__) == p.out_channels,
             "conv_transpose3d input backward: grad_output has ", grad_output.sym_size(1),
             " channels, expected weight.size(1) * groups = ", p.out_channels);
  for (int i = 0; i < kSpatialDims; ++i) {
    p.in_size[i] = input_size[i];
    p.out_size[i] = grad_output.sym_size(2 + i);
    p.kernel[i] = weight.sym_size(2 + i).guard_int(__FILE__, __LINE__);
  }
  return p;
}

BackwardProblem check_weight_backward_args(const at::Tensor& input, const at::Tensor& grad_output,
                                           c10::SymIntArrayRef kernel_size,
                                           c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                           const c10::SymInt& groups,
                                           c10::SymIntArrayRef dilation) {
  CT3D_CHECK(input.dim() == 5 && grad_output.dim() == 5,
             "conv_transpose3d weight backward: input and grad_output must be 5-D, got ",
             input.dim(), "-D and ", grad_output.dim(), "-D");
  check_same_tensor_kind(input, grad_output, "grad_output");
  BackwardProblem p;
  check_parameters(p, stride, padding, groups, dilation);
  p.kernel = expand_parameter(kernel_size, "kernel_size");
  p.batch = input.sym_size(0);
  p.in_channels = input.sym_size(1).guard_int(__FILE__, __LINE__);
  p.out_channels = grad_output.sym_size(1).guard_int(__FILE__, __LINE__);
  CT3D_SYM_CHECK(grad_output.sym_size(0).sym_eq(p.batch),
                 "conv_transpose3d weight backward: input and grad_output batch sizes differ");
  CT3D_CHECK(p.in_channels % p.groups == 0 && p.out_channels % p.groups == 0,
             "conv_transpose3d weight backward: channels ", p.in_channels, " and ", p.out_channels,
             " must be divisible by groups ", p.groups);
  for (int i = 0; i < kSpatialDims; ++i) {
    p.in_size[i] = input.sym_size(2 + i);
    p.out_size[i] = grad_output.sym_size(2 + i);
    CT3D_CHECK(p.kernel[i] > 0, "conv_transpose3d weight backward: kernel_size must be positive");
  }
  return p;
}

}  // namespace ct3d
