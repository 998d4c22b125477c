// What the weight gradient's wgmma kernel (weight_gradient_wgmma_kernel.cuh) takes from
// the host, and the shape constants its host planning (planner/weight_gradient_mainloop.h)
// shares with it: host code, no device code.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/problem/fast_divider.h"

namespace ct3d::cuda {

constexpr int kWgradTilePositions = 32;       // K of one stage
constexpr int kWgradShortTilePositions = 16;  // float32's short stages
constexpr int kWgradMaxSlots = 8;
constexpr int kWgradMaxPairs = 64;  // (depth tap, height tap) pairs a block's rows reach

// m-tiles per compute warpgroup for blocks of `channels` input channels: as many as the
// accumulators' registers allow. float32 keeps a chain and a total per m-tile; the half
// forms only the chain, so they hold twice the rows (a stage's segments and B serve more
// products). The planner may take 2 for float32's 3 (m_tiles_for_rows); the launcher
// holds the configurations of both.
constexpr int wgrad_m_tiles_for(int channels, bool half) {
  if (half) return channels <= 32 ? 6 : channels <= 48 ? 4 : 3;
  return channels <= 32 ? 3 : 2;
}

// Everything the kernel needs; planned in planner/weight_gradient_mainloop.cpp.
struct WgradWgmmaProblem {
  // The reduction walk of one chunk of samples: stage = (sample, d, h, width tile).
  int64_t stages;
  int stages_per_split;
  int positions;  // of a stage: a width tile (the configuration's kPositions)
  int width_tiles, depth, height, width;
  // The first position of width tile 0: 0, or for a tail launch (a line's last
  // positions on short stages, KERNEL_LOG "a line's short last width tile") where the main launch's
  // tiles end.
  int width_origin;
  // The input, NCDHW, from the chunk's first sample.
  int64_t input_sample_stride, input_channel_stride;
  int input_group_channels;  // channels of a folded group
  // The staged grad_output: per dimension the offset of one input index step
  // (stride x staged stride); per pair the offset of its depth and height taps;
  // tap_origin the offset of tap 0 at input index 0 (halo included).
  int64_t output_batch_stride, output_row_stride[3], tap_origin;
  int64_t depth_tap_stride, height_tap_stride;
  int column_stride;          // one staged width index: all groups' padded channels
  int output_group_channels;  // padded channels of a group in the staged copy
  FastDivider row_pieces;     // 16-byte pieces of a segment row's real channels
  FastDivider segment_rows;   // rows of a pair's segment
  int kernel_h, kernel_w, stride_w, dilation_w;
  // M rows: (tap, output channel) for the folded group's real output channels.
  int output_channels, total_rows;
  int rows_per_block, row_blocks, channel_blocks;
  // Shared memory: per slot the B tiles (kBRegionBytes), then max_pairs segments of
  // segment_rows rows, pitch elements apart (offsets and strides here in elements).
  int pitch, pair_elements, stage_bytes, slots;
  // Segments by one bulk copy per pair (staged rows already pitch apart, one group's
  // rows contiguous) rather than cp.async pieces.
  bool bulk_segments;
  int groups;
};

// Bytes of a stage's B for blocks of `channels` input channels and stages of
// `positions` (WgradWgmmaConfig's kBRegionBytes, for the host): float32 hi and lo, or
// the half values once.
inline int wgrad_b_bytes(int channels, int positions, int element_bytes) {
  return (element_bytes == 4 ? 2 : 1) * positions * channels * element_bytes;
}

}  // namespace ct3d::cuda
