#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/engine/implicit_gemm_warp_tiles.cuh"  // split_tf32
#include "ops/cuda/engine/quad_staging.h"
#include "ops/cuda/engine/staged_grid.cuh"

namespace ct3d::cuda {
namespace {

constexpr int kThreads = 256;

struct QuadStagingShape {
  StagedGrid grid;
  int staged_positions;  // D' * H' * W'
  int plane_rows;
  int cin_per_group;
  int quads_per_group;  // padded channels per group / 4
};

// Thread: one staged position of one quad plane pair. Reads its 4 channels (each
// coalesced along W across the warp), writes 16 bytes of hi and 16 of lo. Grid:
// (plane_rows / 256, groups x quads per group, samples).
__global__ void __launch_bounds__(kThreads)
    stage_split_quads_kernel(const float* __restrict__ input, float4* __restrict__ planes,
                             const QuadStagingShape s) {
  const int position = blockIdx.x * kThreads + threadIdx.x;
  if (position >= s.plane_rows) return;
  const int group = blockIdx.y / s.quads_per_group;
  const int quad_in_group = blockIdx.y - group * s.quads_per_group;
  // Quad j of chunk c: channels 16 c + j + 4 e.
  const int first_channel = (quad_in_group >> 2) * 16 + (quad_in_group & 3);
  const int64_t offset =
      position < s.staged_positions ? s.grid.source_offset(static_cast<uint32_t>(position)) : -1;
  const int64_t groups = gridDim.y / s.quads_per_group;
  const float* sample =
      input + (blockIdx.z * groups + group) * s.cin_per_group * s.grid.input_positions;
  float v[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int channel = first_channel + 4 * e;
    v[e] = offset >= 0 && channel < s.cin_per_group
               ? sample[channel * s.grid.input_positions + offset]
               : 0.f;
  }
  uint32_t hi[4], lo[4];
  split_tf32(make_float4(v[0], v[1], v[2], v[3]), hi, lo);
  float4* pair =
      planes + ((static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * 2) * s.plane_rows;
  pair[position] = make_float4(__uint_as_float(hi[0]), __uint_as_float(hi[1]),
                               __uint_as_float(hi[2]), __uint_as_float(hi[3]));
  pair[s.plane_rows + position] = make_float4(__uint_as_float(lo[0]), __uint_as_float(lo[1]),
                                              __uint_as_float(lo[2]), __uint_as_float(lo[3]));
}

}  // namespace

int64_t quad_planes_floats(const StagedLayout& layout, int64_t plane_rows) {
  return layout.padded_channels() * 2 * plane_rows;
}

at::Tensor stage_split_quads(const StagedLayout& layout, int64_t plane_rows,
                             const at::Tensor& source, cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(layout.padded_channels_per_group % 16 == 0 &&
                        plane_rows >= layout.staged_positions() && plane_rows < INT32_MAX);
  const int64_t batch = source.size(0);
  QuadStagingShape shape{};
  shape.grid = staged_grid(layout);
  shape.staged_positions = static_cast<int>(layout.staged_positions());
  shape.plane_rows = static_cast<int>(plane_rows);
  shape.cin_per_group = static_cast<int>(layout.channels_per_group);
  shape.quads_per_group = static_cast<int>(layout.padded_channels_per_group / 4);
  const int64_t sample_floats = quad_planes_floats(layout, plane_rows);
  at::Tensor planes = at::empty({batch * sample_floats}, source.options());
  const int64_t source_sample =
      layout.groups * layout.channels_per_group * shape.grid.input_positions;
  const int64_t quads = layout.padded_channels() / 4;
  TORCH_INTERNAL_ASSERT(quads <= 65535);
  constexpr int64_t kMaxGridZ = 65535;
  for (int64_t n0 = 0; n0 < batch; n0 += kMaxGridZ) {
    const dim3 grid(static_cast<unsigned>((plane_rows + kThreads - 1) / kThreads),
                    static_cast<unsigned>(quads),
                    static_cast<unsigned>(std::min(batch - n0, kMaxGridZ)));
    stage_split_quads_kernel<<<grid, kThreads, 0, stream>>>(
        source.const_data_ptr<float>() + n0 * source_sample,
        reinterpret_cast<float4*>(planes.mutable_data_ptr<float>() + n0 * sample_floats), shape);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return planes;
}

}  // namespace ct3d::cuda
