// wgmma_available.h: asks the device which of this library's images it runs.
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <atomic>
#include <cstdint>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"

namespace ct3d::cuda {
namespace {

// 1 in the code the device runs when that code holds the wgmma mainloops (an sm_90a
// image), 0 otherwise (sm_80 code, compute_80 PTX compiled at load, plain sm_90): the
// kernels' bodies are compiled out there, so the host must ask the device, not the
// image's version numbers.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ const int wgmma_compiled_in = 1;
#else
__device__ const int wgmma_compiled_in = 0;
#endif

}  // namespace

bool wgmma_enabled() {
  if (device_capability() != kWgmmaCapability) return false;
  constexpr int kMaxDevices = 64;
  static std::atomic<int8_t> known[kMaxDevices] = {};  // 0 unknown, 1 yes, 2 no
  const int device = c10::cuda::current_device();
  if (device >= kMaxDevices) return false;
  int8_t state = known[device].load();
  if (state == 0) {
    int compiled_in = 0;
    C10_CUDA_CHECK(cudaMemcpyFromSymbol(&compiled_in, wgmma_compiled_in, sizeof(int)));
    state = compiled_in == 1 ? 1 : 2;
    known[device].store(state);
  }
  return state == 1;
}

}  // namespace ct3d::cuda
