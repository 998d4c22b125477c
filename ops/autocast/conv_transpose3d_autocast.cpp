#include "ops/autocast/conv_transpose3d_autocast.h"

#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "ops/op_handles.h"

namespace ct3d {
namespace {

template <c10::DeviceType kDevice, c10::DispatchKey kAutocastKey>
at::Tensor cast_and_call(CT3D_CONV_TRANSPOSE3D_PARAMS) {
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(kAutocastKey);
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(kDevice);
  return forward_op().call(at::autocast::cached_cast(dtype, input, kDevice),
                           at::autocast::cached_cast(dtype, weight, kDevice),
                           at::autocast::cached_cast(dtype, bias, kDevice), stride, padding,
                           output_padding, std::move(groups), dilation);
}

}  // namespace

at::Tensor conv_transpose3d_autocast_cuda(CT3D_CONV_TRANSPOSE3D_PARAMS) {
  return cast_and_call<c10::DeviceType::CUDA, c10::DispatchKey::AutocastCUDA>(
      input, weight, bias, stride, padding, output_padding, std::move(groups), dilation);
}

at::Tensor conv_transpose3d_autocast_cpu(CT3D_CONV_TRANSPOSE3D_PARAMS) {
  return cast_and_call<c10::DeviceType::CPU, c10::DispatchKey::AutocastCPU>(
      input, weight, bias, stride, padding, output_padding, std::move(groups), dilation);
}

}  // namespace ct3d
