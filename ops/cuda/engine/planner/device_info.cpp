#include "ops/cuda/engine/planner/device_info.h"

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/staging/weight_packing.h"

namespace ct3d::cuda {

DeviceInfo current_device_info() {
  DeviceInfo device;
  device.wgmma = wgmma_enabled();
  device.engine = device_capability() >= kTensorCoreCapability && weight_packing_runs_here();
  device.multiprocessors = multiprocessor_count();
  return device;
}

}  // namespace ct3d::cuda
