// What the planners (gemm_plan.h, weight_gradient_mainloop.h) ask of the device, so that
// they stay pure functions a test can ask about any device.
#pragma once

#include "ops/cuda/engine/instructions/wgmma_available.h"

namespace ct3d::cuda {

struct DeviceInfo {
  // An sm_90 device running this library's sm_90a code (wgmma_available.h): the
  // Hopper mainloops.
  bool wgmma = false;
};

// The current device's (the option max_capability applies).
inline DeviceInfo current_device_info() { return DeviceInfo{wgmma_enabled()}; }

}  // namespace ct3d::cuda
