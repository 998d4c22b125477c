#include "ops/common/argument_checks.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <optional>

#include "ops/common/error_message.h"

namespace ct3d {
namespace checks {

void check_same_device_and_dtype(const at::Tensor& reference, const char* reference_name,
                                 const at::Tensor& other, const char* name) {
  CT3D_CHECK(other.device() == reference.device(), "conv_transpose3d: ", name,
             " must be on the same device as ", reference_name, ": got ", other.device(),
             ", expected ", reference.device());
  CT3D_CHECK(other.scalar_type() == reference.scalar_type(), "conv_transpose3d: ", name,
             " must have the same dtype as ", reference_name, ": got ", other.scalar_type(),
             ", expected ", reference.scalar_type());
}

void check_weight_rank(const at::Tensor& weight) {
  CT3D_CHECK(weight.dim() == 5,
             "conv_transpose3d: weight must be a 5-D tensor (in_channels, out_channels / groups, "
             "kD, kH, kW), got a ",
             weight.dim(), "-D tensor of shape ", weight.sym_sizes());
}

void check_parameters(const ConvTranspose3dArgs& args, bool empty_batch) {
  CT3D_CHECK(args.groups > 0, "conv_transpose3d: groups must be positive, got ", args.groups);
  for (int i = 0; i < kSpatialDims; ++i) {
    CT3D_CHECK(args.stride[i] > 0, "conv_transpose3d: stride must be positive, got ",
               args.stride[i], " in ", kDimNames[i]);
    CT3D_CHECK(args.dilation[i] > 0, "conv_transpose3d: dilation must be positive, got ",
               args.dilation[i], " in ", kDimNames[i]);
    CT3D_CHECK(args.padding[i] >= 0, "conv_transpose3d: padding must be non-negative, got ",
               args.padding[i], " in ", kDimNames[i]);
    CT3D_CHECK(args.output_padding[i] >= 0,
               "conv_transpose3d: output_padding must be non-negative, got ",
               args.output_padding[i], " in ", kDimNames[i]);
    CT3D_CHECK(empty_batch || args.output_padding[i] < std::max(args.stride[i], args.dilation[i]),
               "conv_transpose3d: output_padding must be smaller than either stride or dilation: "
               "got output_padding ",
               args.output_padding[i], " with stride ", args.stride[i], " and dilation ",
               args.dilation[i], " in ", kDimNames[i]);
  }
}

Int3 kernel_size_of(const at::Tensor& weight) {
  Int3 kernel_size{};
  for (int i = 0; i < kSpatialDims; ++i) {
    kernel_size[i] = weight.sym_size(2 + i).guard_int(__FILE__, __LINE__);
    CT3D_CHECK(kernel_size[i] > 0, "conv_transpose3d: kernel size must be positive, got ",
               kernel_size[i], " in ", kDimNames[i], " (weight of shape ", weight.sym_sizes(), ")");
  }
  return kernel_size;
}

bool is_empty_batch(const ConvTranspose3dArgs& args) {
  const std::optional<int64_t> concrete_batch = args.batch.maybe_as_int();
  return args.batched && concrete_batch.has_value() && *concrete_batch == 0;
}

}  // namespace checks

}  // namespace ct3d
