#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/implicit_gemm_warp_tiles.cuh"  // split_tf32
#include "ops/cuda/engine/tf32_planes.h"

namespace ct3d::cuda {
namespace {

__global__ void split_tf32_planes_kernel(const float4* __restrict__ x, uint4* __restrict__ hi,
                                         uint4* __restrict__ lo, int64_t count4) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count4;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h[4], l[4];
    split_tf32(x[i], h, l);
    hi[i] = make_uint4(h[0], h[1], h[2], h[3]);
    lo[i] = make_uint4(l[0], l[1], l[2], l[3]);
  }
}

}  // namespace

void split_tf32_planes(const float* x, float* hi, float* lo, int64_t count, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t count4 = count / 4;
  if (count4 == 0) return;
  // A few waves of blocks, each thread a grid-stride loop.
  const int64_t blocks =
      std::min<int64_t>((count4 + kThreads - 1) / kThreads, 8 * int64_t{multiprocessor_count()});
  split_tf32_planes_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      reinterpret_cast<const float4*>(x), reinterpret_cast<uint4*>(hi),
      reinterpret_cast<uint4*>(lo), count4);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace ct3d::cuda
