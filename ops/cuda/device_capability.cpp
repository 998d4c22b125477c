#include "ops/cuda/device_capability.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ops/error_message.h"

#ifndef CT3D_CUDA_ARCH_LIST
#define CT3D_CUDA_ARCH_LIST "unknown"
#endif

namespace ct3d::cuda {
namespace {

// "8.0" or "80" -> 80; anything unreadable -> no cap.
int capability_cap() {
  const char* value = std::getenv("CT3D_MAX_CAPABILITY");
  if (value == nullptr || value[0] == '\0') return 1000;
  int major = 0, minor = 0;
  if (std::sscanf(value, "%d.%d", &major, &minor) == 2) return 10 * major + minor;
  const int plain = std::atoi(value);
  return plain > 0 ? plain : 1000;
}

}  // namespace

int device_capability() {
  const int device = c10::cuda::current_device();
  int major = 0, minor = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const int capability = 10 * major + minor;
  const int cap = capability_cap();
  return capability < cap ? capability : cap;
}

bool has_kernel_image(const void* kernel) {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error this call leaves
    return false;
  }
  return true;
}

void check_kernel_image(const void* kernel, const char* what) {
  if (has_kernel_image(kernel)) return;
  const int device = c10::cuda::current_device();
  cudaDeviceProp properties{};
  C10_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  CT3D_CHECK(false, "ct3d has no ", what, " for ", std::string(properties.name),
             " (compute capability ", properties.major, ".", properties.minor,
             "): this libct3d.so was built for TORCH_CUDA_ARCH_LIST=\"", CT3D_CUDA_ARCH_LIST,
             "\"; rebuild it with that device's architecture in the list");
}

}  // namespace ct3d::cuda
