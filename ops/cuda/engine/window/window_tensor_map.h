// The TMA tensor map of a source the tap-columns form reads in boxes (window_boxes.cuh).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda.h>

#include <cstdint>

namespace ct3d::cuda {

// Whether TMA may read `source` as window boxes: non-empty contiguous 5-D float32, its
// base 16-byte aligned, and a box's 16 (or 8) channels inside one group (one group, or
// a multiple of 16 channels per group); the plan checks the rest (plan_window_boxes).
bool source_fits_boxes(const at::Tensor& source, int64_t groups, int64_t channels_per_group);

// The channels' part of it: what a source the op will allocate (contiguous, aligned)
// needs; ct3d.explain asks it of sources that exist only as meta tensors.
bool channels_fit_boxes(int64_t groups, int64_t channels_per_group);

// The map of `source` (N, C, D, H, W contiguous float32) as a 5-D tensor, innermost
// first (W, H, D, C, N), its boxes box_width x box_lines x 1 x box_channels x 1,
// out-of-bounds elements read as zero.
CUtensorMap encode_window_map(const at::Tensor& source, int box_width, int box_lines,
                              int box_channels);

}  // namespace ct3d::cuda
