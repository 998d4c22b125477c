// What the current CUDA device can run, for choosing among ct3d's kernels at run
// time (the library holds code for several architectures; pyproject.toml and
// CMakeLists.txt say which).
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace ct3d::cuda {

// The current device's compute capability as major * 10 + minor (90 for an H200),
// capped by the option max_capability (ops/options/options.h; e.g. "8.0") when that is
// set: the tests use the cap to run the Ampere-class paths on a newer GPU. Asked of
// the runtime once per device, as is has_kernel_image.
int device_capability();

// Capabilities the fast paths need: mma.sync TF32 and cp.async (sm_80), and the
// Hopper wgmma path (sm_90a code on an sm_90 device).
constexpr int kTensorCoreCapability = 80;
constexpr int kWgmmaCapability = 90;

// Multiprocessors of the current device (sizes persistent grids and splits).
int multiprocessor_count();

// Whether this library holds code the current device can run for `kernel` (a
// __global__ function): false where the build has neither its architecture's
// machine code nor PTX it can compile.
bool has_kernel_image(const void* kernel);

// Throws a c10::Error naming the device, its capability and the architectures the
// library was built for, unless `kernel` can run here.
void check_kernel_image(const void* kernel, const char* what);

}  // namespace ct3d::cuda
