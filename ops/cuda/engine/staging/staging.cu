#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "ops/cuda/engine/staging/implicit_gemm_staging.cuh"
#include "ops/cuda/engine/staging/staging.h"

namespace ct3d::cuda {

static_assert(kMaxStagedChannels == int64_t{65535} * kStagingChannels);

int64_t staging_chunk_samples(int64_t staged_floats_per_sample, int64_t budget_floats,
                              int64_t batch) {
  const int64_t samples = budget_floats / std::max<int64_t>(staged_floats_per_sample, 1);
  return std::clamp<int64_t>(samples, 1, std::max<int64_t>(batch, 1));
}

int64_t backward_staging_budget(int64_t source_floats) {
  constexpr int64_t kMinChunkFloats = int64_t{16} << 20;  // 64 MiB
  return std::max(source_floats / 2, kMinChunkFloats);
}

bool StagedLayout::operator==(const StagedLayout& other) const {
  bool same = groups == other.groups && channels_per_group == other.channels_per_group &&
              padded_channels_per_group == other.padded_channels_per_group;
  for (int i = 0; i < 3; ++i) {
    same = same && extent[i] == other.extent[i] && halo_low[i] == other.halo_low[i] &&
           staged_extent[i] == other.staged_extent[i];
  }
  return same;
}

int staging_tile_positions(at::ScalarType dtype, const StagedLayout& layout) {
  if (dtype != at::kFloat) return kStagingPositions;
  // 256 x 32 for whole 32-channel tiles, or one. A short last tile (the weight
  // gradient's rows at a segment pitch of 36 or 40) was a block of 4-8 channel rows
  // writing 16-byte pieces, and its weight gradients 13-28 % slower; there 128 x 64
  // beat 64 x 64 by 1-4 % (KERNEL_LOG "wider float32 staging tiles"). The grid's channel tiles are
  // at most 65535.
  const int64_t channels = layout.padded_channels();
  const bool whole_tiles = channels <= kStagingWideChannels || channels % kStagingWideChannels == 0;
  const bool wide = whole_tiles && channels <= int64_t{65535} * kStagingWideChannels;
  return wide ? kStagingWidePositions : kStagingMidPositions;
}

int64_t staging_position_tiles(const StagedLayout& layout, int tile_positions) {
  return (layout.staged_positions() + tile_positions - 1) / tile_positions;
}

namespace {

constexpr int kSumThreads = 256;

// Block c sums channel c's partials (rows of padded_channels floats, one per sample
// and position tile): each thread a fixed stride of rows, then a fixed tree.
__global__ void __launch_bounds__(kSumThreads)
    sum_channel_partials_kernel(const double* __restrict__ partials, int64_t rows,
                                int padded_channels, int channels_per_group, int padded_per_group,
                                float* __restrict__ sums) {
  const int channel = blockIdx.x;
  const int group = channel / channels_per_group;
  const int column = group * padded_per_group + (channel - group * channels_per_group);
  double sum = 0;
  for (int64_t row = threadIdx.x; row < rows; row += kSumThreads) {
    sum += partials[row * padded_channels + column];
  }
  __shared__ double partial[kSumThreads];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = kSumThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[channel] = static_cast<float>(partial[0]);
}

}  // namespace

void sum_channel_partials(const StagedLayout& layout, const double* partials, int64_t samples,
                          int tile_positions, at::Tensor& sums, cudaStream_t stream) {
  const int64_t channels = layout.groups * layout.channels_per_group;
  TORCH_INTERNAL_ASSERT(sums.is_contiguous() && sums.numel() == channels);
  if (channels == 0) return;
  sum_channel_partials_kernel<<<static_cast<unsigned>(channels), kSumThreads, 0, stream>>>(
      partials, samples * staging_position_tiles(layout, tile_positions),
      static_cast<int>(layout.padded_channels()), static_cast<int>(layout.channels_per_group),
      static_cast<int>(layout.padded_channels_per_group), sums.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor stage_channels_last(const StagedLayout& layout, const at::Tensor& source, int* nonfinite,
                               cudaStream_t stream, double* channel_sums, int tile_positions) {
  const int64_t batch = source.size(0);
  StagingShape shape{};
  shape.grid = staged_grid(layout);
  shape.staged_positions = layout.staged_positions();
  shape.cin_per_group = static_cast<int>(layout.channels_per_group);
  shape.cin_padded = static_cast<int>(layout.padded_channels_per_group);
  shape.padded_channels = static_cast<int>(layout.padded_channels());
  const int64_t sample_floats = shape.staged_positions * shape.padded_channels;
  at::Tensor staged = at::empty({batch * sample_floats}, source.options());
  const int64_t source_sample =
      layout.groups * layout.channels_per_group * shape.grid.input_positions;
  const dim3 block(32, kStagingRows);
  constexpr int64_t kMaxGridZ = 65535;
  const auto stage = [&](auto element, auto positions, auto channels) {
    using Element = decltype(element);
    constexpr int kPositions = decltype(positions)::value;
    constexpr int kChannels = decltype(channels)::value;
    const int last_tile = shape.padded_channels % kChannels;
    shape.last_tile_channels = FastDivider(last_tile == 0 ? kChannels : last_tile);
    for (int64_t n0 = 0; n0 < batch; n0 += kMaxGridZ) {
      const dim3 grid(static_cast<unsigned>((shape.staged_positions + kPositions - 1) / kPositions),
                      static_cast<unsigned>((shape.padded_channels + kChannels - 1) / kChannels),
                      static_cast<unsigned>(std::min(batch - n0, kMaxGridZ)));
      stage_input_channels_last_kernel<Element, kPositions, kChannels><<<grid, block, 0, stream>>>(
          static_cast<const Element*>(source.const_data_ptr()) + n0 * source_sample,
          static_cast<Element*>(staged.mutable_data_ptr()) + n0 * sample_floats, shape, nonfinite,
          channel_sums == nullptr ? nullptr : channel_sums + n0 * grid.x * shape.padded_channels);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  };
  using Positions = std::integral_constant<int, kStagingPositions>;
  using Channels = std::integral_constant<int, kStagingChannels>;
  using WidePositions = std::integral_constant<int, kStagingWidePositions>;
  using WideChannels = std::integral_constant<int, kStagingWideChannels>;
  using MidPositions = std::integral_constant<int, kStagingMidPositions>;
  if (tile_positions == 0) tile_positions = staging_tile_positions(source.scalar_type(), layout);
  TORCH_INTERNAL_ASSERT(tile_positions == kStagingPositions || source.element_size() == 4);
  TORCH_INTERNAL_ASSERT(tile_positions == kStagingPositions ||
                        tile_positions == kStagingMidPositions ||
                        tile_positions == kStagingWidePositions);
  // 16-bit types are written in 8-channel pieces (implicit_gemm_staging.cuh).
  TORCH_INTERNAL_ASSERT(source.element_size() == 4 || layout.padded_channels_per_group % 8 == 0);
  switch (source.scalar_type()) {
    case at::kHalf:
      stage(__half{}, Positions{}, Channels{});
      break;
    case at::kBFloat16:
      stage(__nv_bfloat16{}, Positions{}, Channels{});
      break;
    default:
      TORCH_INTERNAL_ASSERT(source.scalar_type() == at::kFloat);
      if (tile_positions == kStagingWidePositions) {
        stage(float{}, WidePositions{}, WideChannels{});
      } else if (tile_positions == kStagingMidPositions) {
        stage(float{}, MidPositions{}, Channels{});
      } else {
        stage(float{}, Positions{}, Channels{});
      }
      break;
  }
  return staged;
}

}  // namespace ct3d::cuda
