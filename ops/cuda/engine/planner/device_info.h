// What the planners (gemm_plan.h, weight_gradient_mainloop.h) ask of the device, so that
// they stay pure functions a test can ask about any device.
#pragma once

namespace ct3d::cuda {

struct DeviceInfo {
  // An sm_90 device running this library's sm_90a code (wgmma_available.h): the
  // Hopper mainloops.
  bool wgmma = false;
  // An sm_80 or newer device running this library's code for it: the engine (mma.sync,
  // cp.async) and the weight gradient's mainloops; elsewhere the direct kernels.
  bool engine = true;
  // Streaming multiprocessors: the weight gradient's split fills them
  // (weight_gradient_split.h). The default is an H100's or H200's, for the tests' plans.
  int multiprocessors = 132;
};

// The current device's (the option max_capability applies).
DeviceInfo current_device_info();

}  // namespace ct3d::cuda
