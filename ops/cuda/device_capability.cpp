#include "ops/cuda/device_capability.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "ops/common/error_message.h"
#include "ops/options/options.h"

#ifndef CT3D_CUDA_ARCH_LIST
#define CT3D_CUDA_ARCH_LIST "unknown"
#endif

namespace ct3d::cuda {
namespace {

// The option max_capability (ops/options/options.h), or no cap.
int capability_cap() {
  const int cap = options().max_capability;
  return cap > 0 ? cap : 1000;
}

// Answers that cannot change while the process runs, asked once per device: every
// op call consults them, and each question is a CUDA runtime call.
constexpr int kMaxDevices = 64;
std::mutex answers_mutex;
int capabilities[kMaxDevices] = {};                         // 0: not asked yet
int multiprocessors[kMaxDevices] = {};                      // 0: not asked yet
std::map<std::pair<const void*, int>, bool> kernel_images;  // (kernel, device) -> has code

}  // namespace

int device_capability() {
  const int device = c10::cuda::current_device();
  TORCH_INTERNAL_ASSERT(device >= 0 && device < kMaxDevices);
  std::lock_guard<std::mutex> lock(answers_mutex);
  if (capabilities[device] == 0) {
    int major = 0, minor = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    capabilities[device] = 10 * major + minor;
  }
  return std::min(capabilities[device], capability_cap());
}

bool has_kernel_image(const void* kernel) {
  const int device = c10::cuda::current_device();
  std::lock_guard<std::mutex> lock(answers_mutex);
  const auto key = std::make_pair(kernel, device);
  const auto known = kernel_images.find(key);
  if (known != kernel_images.end()) return known->second;
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  if (status != cudaSuccess) (void)cudaGetLastError();  // not sticky: clear it
  return kernel_images[key] = status == cudaSuccess;
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

int multiprocessor_count() {
  const int device = c10::cuda::current_device();
  TORCH_INTERNAL_ASSERT(device >= 0 && device < kMaxDevices);
  std::lock_guard<std::mutex> lock(answers_mutex);
  if (multiprocessors[device] == 0) {
    C10_CUDA_CHECK(
        cudaDeviceGetAttribute(&multiprocessors[device], cudaDevAttrMultiProcessorCount, device));
  }
  return multiprocessors[device];
}

}  // namespace ct3d::cuda
