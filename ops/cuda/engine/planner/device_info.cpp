#include "ops/cuda/engine/planner/device_info.h"

#include <c10/cuda/CUDAFunctions.h>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/staging/weight_packing.h"
#include "ops/options/options.h"

namespace ct3d::cuda {
namespace {

DeviceInfo ask_device() {
  DeviceInfo device;
  device.wgmma = wgmma_enabled();
  device.engine = device_capability() >= kTensorCoreCapability && weight_packing_runs_here();
  device.multiprocessors = multiprocessor_count();
  return device;
}

// A device's answers, for the option max_capability they were asked under.
struct KnownDevice {
  bool asked = false;
  int max_capability = 0;
  DeviceInfo info;
};

}  // namespace

// Every op call plans, and asking costs five lookups under four locks; on the
// host-bound half layers this and the plan's copied problem were 1-8 % of a call
// (KERNEL_LOG, "the half forward's host path"). The answers change only with the device
// or max_capability, so each thread keeps its own: no lock on the way.
DeviceInfo current_device_info() {
  constexpr int kMaxDevices = 64;
  thread_local KnownDevice known[kMaxDevices];
  const int device = c10::cuda::current_device();
  const int max_capability = options().max_capability;
  if (device < 0 || device >= kMaxDevices) return ask_device();
  KnownDevice& entry = known[device];
  if (!entry.asked || entry.max_capability != max_capability) {
    entry.info = ask_device();
    entry.max_capability = max_capability;
    entry.asked = true;
  }
  return entry.info;
}

}  // namespace ct3d::cuda
