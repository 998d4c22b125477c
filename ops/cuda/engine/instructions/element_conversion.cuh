// float32 <-> the kernels' element types (float, float16, bfloat16), spelled out so
// that no build flag that hides the half types' implicit conversions matters.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace ct3d::cuda {

__device__ __forceinline__ float element_to_float(float v) { return v; }
__device__ __forceinline__ float element_to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float element_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Rounded to nearest (ties to even): the one rounding of a half result.
template <class Element>
__device__ __forceinline__ Element element_from_float(float v) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return v;
  }
}

__device__ __forceinline__ uint32_t element_bits(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ uint32_t element_bits(__nv_bfloat16 v) {
  return __bfloat16_as_ushort(v);
}

template <class Element>
__device__ __forceinline__ Element element_from_bits(uint32_t bits) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __ushort_as_half(static_cast<unsigned short>(bits));
  } else {
    return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
  }
}

// Two neighbouring outputs rounded once and stored together; `destination` is aligned
// to two elements.
template <class Element>
__device__ __forceinline__ void store_element_pair(Element* destination, float first,
                                                   float second) {
  if constexpr (std::is_same_v<Element, float>) {
    *reinterpret_cast<float2*>(destination) = make_float2(first, second);
  } else {
    *reinterpret_cast<uint32_t*>(destination) =
        element_bits(element_from_float<Element>(first)) |
        (element_bits(element_from_float<Element>(second)) << 16);
  }
}

}  // namespace ct3d::cuda
