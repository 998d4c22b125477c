#include "ops/autocast/conv_transpose3d_autocast.h"

#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "ops/composite/op_handles.h"

namespace ct3d {
namespace {

template <c10::DeviceType kDevice, c10::DispatchKey kAutocastKey>
at::Tensor cast_and_call(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                         c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                         c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(kAutocastKey);
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(kDevice);
  return forward_op().call(at::autocast::cached_cast(dtype, input, kDevice),
                           at::autocast::cached_cast(dtype, weight, kDevice),
                           at::autocast::cached_cast(dtype, bias, kDevice), stride, padding,
                           output_padding, std::move(groups), dilation);
}

}  // namespace

at::Tensor conv_transpose3d_autocast_cuda(const at::Tensor& input, const at::Tensor& weight,
                                          const std::optional<at::Tensor>& bias,
                                          c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                          c10::SymIntArrayRef output_padding, c10::SymInt groups,
                                          c10::SymIntArrayRef dilation) {
  return cast_and_call<c10::DeviceType::CUDA, c10::DispatchKey::AutocastCUDA>(
      input, weight, bias, stride, padding, output_padding, std::move(groups), dilation);
}

at::Tensor conv_transpose3d_autocast_cpu(const at::Tensor& input, const at::Tensor& weight,
                                         const std::optional<at::Tensor>& bias,
                                         c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                         c10::SymIntArrayRef output_padding, c10::SymInt groups,
                                         c10::SymIntArrayRef dilation) {
  return cast_and_call<c10::DeviceType::CPU, c10::DispatchKey::AutocastCPU>(
      input, weight, bias, stride, padding, output_padding, std::move(groups), dilation);
}

}  // namespace ct3d
