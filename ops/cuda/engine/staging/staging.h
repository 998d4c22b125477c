// Host side of the staging pass (implicit_gemm_staging.cuh): every implicit GEMM
// reads its gathered operands channels-last, with a zero halo around the spatial
// extents and each group's channels zero-padded to the GEMM's channel chunk.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/cuda/engine/staging/staged_layout.h"

namespace ct3d::cuda {

// Most padded channels (groups x padded channels per group) the staging grid
// covers: 65535 blocks of 64.
constexpr int64_t kMaxStagedChannels = int64_t{65535} * 64;

// Samples staged at a time so that one chunk's staged copy takes at most
// budget_floats (at least one sample). The backward ops stage in chunks of half
// their source's size (at least 64 MiB): with groups padded to 16 channels or a
// halo, a whole staged copy can be larger than the tensor it copies, and it raised
// a training step's peak memory above PyTorch's. The forward stages whole: there
// the output, not the staged input, sets the peak, and chunks cost up to 7 % time.
int64_t staging_chunk_samples(int64_t staged_floats_per_sample, int64_t budget_floats,
                              int64_t batch);
// The backward ops' budget for a source of source_floats.
int64_t backward_staging_budget(int64_t source_floats);
constexpr int64_t kUnlimitedStaging = INT64_MAX;

// source: contiguous float32, float16 or bfloat16 (N, groups * channels_per_group,
// *extent). Returns, in its dtype,
// (N, D', H', W', groups, padded_channels_per_group) as a flat tensor. With
// `nonfinite` set, any NaN or Inf read sets *nonfinite to 1. With `channel_sums`
// set, each sample also gets staging_position_tiles(layout, tile_positions) x
// padded_channels() partial sums there (in double), from the same read
// (sum_channel_partials adds them up). tile_positions: staged positions a block
// transposes, 0 for staging_tile_positions(source's dtype, layout).
at::Tensor stage_channels_last(const StagedLayout& layout, const at::Tensor& source, int* nonfinite,
                               cudaStream_t stream, double* channel_sums = nullptr,
                               int tile_positions = 0);

// Staged positions a staging block transposes. float32: 256 (tiles of 32 channels)
// with at most 32 padded channels or a multiple of 32, else 128 (tiles of 64 channels;
// KERNEL_LOG "wider float32 staging tiles"); 16-bit types: 64 (tiles of 64 channels).
int staging_tile_positions(at::ScalarType dtype, const StagedLayout& layout);

// Position tiles of one staged sample: the partial sums per channel and sample.
int64_t staging_position_tiles(const StagedLayout& layout, int tile_positions);

// sums[group * channels_per_group + c] = the sum over `samples` samples of the
// partial sums of stage_channels_last: in a fixed order (deterministic), in double.
void sum_channel_partials(const StagedLayout& layout, const double* partials, int64_t samples,
                          int tile_positions, at::Tensor& sums, cudaStream_t stream);

}  // namespace ct3d::cuda
