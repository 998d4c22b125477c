// Whether the Hopper wgmma mainloops (forward, input gradient, weight gradient) can
// run on the current device.
#pragma once

namespace ct3d::cuda {

// An sm_90 device (the option max_capability may cap it, device_capability.h) running this
// library's sm_90a code. The device is asked once.
bool wgmma_enabled();

}  // namespace ct3d::cuda
