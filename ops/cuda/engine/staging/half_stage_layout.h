// Where the half forms put their staged rows in shared memory so that ldmatrix reads
// them without bank conflicts (host and device code, so the unit tests can check it).
// ldmatrix reads 8 rows of 16 bytes per phase; they are conflict-free when their
// 16-byte units fall in the 8 different groups of 4 banks (unit index mod 8).
#pragma once

#include <cstdint>

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE

namespace ct3d::cuda {

// The half gathering GEMM's stage (wgmma_half_gather_kernel.cuh): byte offset of 16-byte
// piece `piece` (2 per 16-channel chunk) of stage row `row`. With 2 pieces a row (32
// bytes) rows 4-7 of each 8 swap their pieces; with 4 (64 bytes) rows 2r and 2r + 1
// take piece ^ r. Either way 8 consecutive rows from a multiple of 8 put piece p in 8
// different unit groups.
template <int kPiecesPerRow>
CT3D_HOST_DEVICE uint32_t half_stage_piece_offset(int row, int piece) {
  if constexpr (kPiecesPerRow == 2) {
    return row * 32 + 16 * (piece ^ ((row >> 2) & 1));
  } else {
    return row * 64 + 16 * (piece ^ ((row >> 1) & 3));
  }
}

// The half weight gradient's segment pitch in elements (weight_gradient_wgmma_kernel.cuh):
// its ldmatrix.trans reads 8 rows at positions 0..7, stride x pitch x 2 bytes apart; an
// odd number of 16-byte units between them covers the 8 groups (stride 2: 2-way at
// best, so then the stride-1 choice). The smallest such multiple of 8 from `channels`.
inline int64_t half_segment_pitch(int64_t channels, int64_t stride) {
  const int64_t first = (channels + 7) / 8 * 8;
  for (const int64_t step : {stride, int64_t{1}}) {
    for (int64_t pitch = first; pitch <= first + 16; pitch += 8) {
      if (step * pitch / 8 % 2 == 1) return pitch;
    }
  }
  return first;
}

// Where the half weight gradient copies its segments whole (one bulk copy per pair,
// the staged rows already at half_segment_pitch): the staged channels of a group; 0
// where it keeps cp.async pieces. Bulk copies also move the padding channels, so they
// pay where the padding is a small part of a row or there is none (docs/KERNEL_LOG.md,
// "the half forms' chains": 64 -> 72 channels 1.53x faster on L1-68, 48 -> 56 1.29x on 61, 24 and 8
// unpadded 1.2x; 16 -> 24 0.87x on 58, 32 -> 40 0.92x on 73).
inline int64_t bulk_staging_pitch(int64_t channels, int64_t stride) {
  const int64_t pitch = half_segment_pitch(channels, stride);
  const int64_t real = (channels + 7) / 8 * 8;
  return pitch == real || channels >= 48 ? pitch : 0;
}

}  // namespace ct3d::cuda
