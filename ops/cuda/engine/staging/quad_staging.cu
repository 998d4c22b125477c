#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/engine/gather/implicit_gemm_warp_tiles.cuh"  // split_tf32
#include "ops/cuda/engine/staging/quad_staging.h"
#include "ops/cuda/engine/staging/staged_grid.cuh"

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

// Thread: one staged position of one quad plane pair (kSplit) or quad plane. Reads its
// 4 channels (each coalesced along W across the warp), writes 16 bytes of hi and 16 of
// lo, or the 16 bytes as they are. Grid: (plane_rows / 256, groups x quads per group,
// samples).
template <bool kSplit>
__global__ void __launch_bounds__(kThreads)
    stage_quads_kernel(const float* __restrict__ input, float4* __restrict__ planes,
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
  const int64_t plane_index = static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y;
  if constexpr (!kSplit) {
    planes[plane_index * s.plane_rows + position] = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
  uint32_t hi[4], lo[4];
  split_tf32(make_float4(v[0], v[1], v[2], v[3]), hi, lo);
  float4* pair = planes + plane_index * 2 * s.plane_rows;
  pair[position] = make_float4(__uint_as_float(hi[0]), __uint_as_float(hi[1]),
                               __uint_as_float(hi[2]), __uint_as_float(hi[3]));
  pair[s.plane_rows + position] = make_float4(__uint_as_float(lo[0]), __uint_as_float(lo[1]),
                                              __uint_as_float(lo[2]), __uint_as_float(lo[3]));
}

// Thread: one staged position of one octet plane. Reads its 8 channels (each coalesced
// along W across the warp) as raw 16-bit values, writes 16 bytes. Grid: (plane_rows /
// 256, groups x octets per group, samples).
__global__ void __launch_bounds__(kThreads)
    stage_octets_kernel(const uint16_t* __restrict__ input, uint4* __restrict__ planes,
                        const QuadStagingShape s) {
  const int position = blockIdx.x * kThreads + threadIdx.x;
  if (position >= s.plane_rows) return;
  const int octets_per_group = s.quads_per_group / 2;
  const int group = blockIdx.y / octets_per_group;
  const int first_channel = (blockIdx.y - group * octets_per_group) * 8;
  const int64_t offset =
      position < s.staged_positions ? s.grid.source_offset(static_cast<uint32_t>(position)) : -1;
  const int64_t groups = gridDim.y / octets_per_group;
  const uint16_t* sample =
      input + (blockIdx.z * groups + group) * s.cin_per_group * s.grid.input_positions;
  uint32_t packed[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    uint32_t pair = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int channel = first_channel + 2 * e + h;
      const uint32_t bits = offset >= 0 && channel < s.cin_per_group
                                ? sample[channel * s.grid.input_positions + offset]
                                : 0u;
      pair |= bits << (16 * h);
    }
    packed[e] = pair;
  }
  planes[(static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * s.plane_rows + position] =
      make_uint4(packed[0], packed[1], packed[2], packed[3]);
}

QuadStagingShape quad_staging_shape(const StagedLayout& layout, int64_t plane_rows) {
  TORCH_INTERNAL_ASSERT(layout.padded_channels_per_group % 16 == 0 &&
                        plane_rows >= layout.staged_positions() && plane_rows < INT32_MAX);
  TORCH_INTERNAL_ASSERT(layout.padded_channels() / 4 <= 65535);
  QuadStagingShape shape{};
  shape.grid = staged_grid(layout);
  shape.staged_positions = static_cast<int>(layout.staged_positions());
  shape.plane_rows = static_cast<int>(plane_rows);
  shape.cin_per_group = static_cast<int>(layout.channels_per_group);
  shape.quads_per_group = static_cast<int>(layout.padded_channels_per_group / 4);
  return shape;
}

// Runs launch(grid, first sample) per chunk of at most 65535 samples, with blocks of
// kThreads positions and `planes_per_sample` planes.
template <class Launch>
void launch_over_samples(int64_t batch, int64_t plane_rows, int64_t planes_per_sample,
                         Launch&& launch) {
  constexpr int64_t kMaxGridZ = 65535;
  for (int64_t n0 = 0; n0 < batch; n0 += kMaxGridZ) {
    const dim3 grid(static_cast<unsigned>((plane_rows + kThreads - 1) / kThreads),
                    static_cast<unsigned>(planes_per_sample),
                    static_cast<unsigned>(std::min(batch - n0, kMaxGridZ)));
    launch(grid, n0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

}  // namespace

int64_t quad_planes_floats(const StagedLayout& layout, int64_t plane_rows) {
  return layout.padded_channels() * 2 * plane_rows;
}

int64_t raw_quad_planes_floats(const StagedLayout& layout, int64_t plane_rows) {
  return layout.padded_channels() * plane_rows;
}

at::Tensor stage_quads(const StagedLayout& layout, int64_t plane_rows, const at::Tensor& source,
                       cudaStream_t stream, bool split) {
  const QuadStagingShape shape = quad_staging_shape(layout, plane_rows);
  const int64_t sample_floats =
      split ? quad_planes_floats(layout, plane_rows) : raw_quad_planes_floats(layout, plane_rows);
  at::Tensor planes = at::empty({source.size(0) * sample_floats}, source.options());
  const int64_t source_sample =
      layout.groups * layout.channels_per_group * shape.grid.input_positions;
  launch_over_samples(
      source.size(0), plane_rows, layout.padded_channels() / 4, [&](dim3 grid, int64_t n0) {
        auto* kernel = split ? stage_quads_kernel<true> : stage_quads_kernel<false>;
        kernel<<<grid, kThreads, 0, stream>>>(
            source.const_data_ptr<float>() + n0 * source_sample,
            reinterpret_cast<float4*>(planes.mutable_data_ptr<float>() + n0 * sample_floats),
            shape);
      });
  return planes;
}

at::Tensor stage_split_quads(const StagedLayout& layout, int64_t plane_rows,
                             const at::Tensor& source, cudaStream_t stream) {
  return stage_quads(layout, plane_rows, source, stream, true);
}

int64_t octet_planes_bytes(const StagedLayout& layout, int64_t plane_rows) {
  return layout.padded_channels() * 2 * plane_rows;
}

at::Tensor stage_octets(const StagedLayout& layout, int64_t plane_rows, const at::Tensor& source,
                        cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(source.element_size() == 2);
  const QuadStagingShape shape = quad_staging_shape(layout, plane_rows);
  const int64_t sample_values = octet_planes_bytes(layout, plane_rows) / 2;
  at::Tensor planes = at::empty({source.size(0) * sample_values}, source.options());
  const int64_t source_sample =
      layout.groups * layout.channels_per_group * shape.grid.input_positions;
  const auto* input = static_cast<const uint16_t*>(source.const_data_ptr());
  auto* output = static_cast<uint16_t*>(planes.mutable_data_ptr());
  launch_over_samples(source.size(0), plane_rows, layout.padded_channels() / 8,
                      [&](dim3 grid, int64_t n0) {
                        stage_octets_kernel<<<grid, kThreads, 0, stream>>>(
                            input + n0 * source_sample,
                            reinterpret_cast<uint4*>(output + n0 * sample_values), shape);
                      });
  return planes;
}

}  // namespace ct3d::cuda
