// A float32 tensor split into its TF32 hi and lo parts as two planes of its layout, for
// kernels that bring B by TMA (weight_gradient_wgmma_kernel.cuh, KERNEL_LOG tb1).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ct3d::cuda {

// hi[i] = x[i] truncated to TF32 (the split every float32 kernel uses: split_tf32),
// lo[i] = x[i] - hi[i]; `count` floats, a multiple of 4, every pointer 16-byte aligned.
void split_tf32_planes(const float* x, float* hi, float* lo, int64_t count, cudaStream_t stream);

}  // namespace ct3d::cuda
