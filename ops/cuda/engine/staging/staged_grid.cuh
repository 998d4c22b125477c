// The staged grid both staging passes (implicit_gemm_staging.cuh, quad_staging.cu)
// walk: which source position each staged position copies.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/problem/fast_divider.h"
#include "ops/cuda/engine/staging/staged_layout.h"

namespace ct3d::cuda {

// A staged grid's positions and where each comes from in a source channel (both
// staging passes: this one and quad_staging.cu's).
struct StagedGrid {
  int64_t input_positions;  // D * H * W
  int source_extent[3];
  int halo_low[3];
  FastDivider staged_width, staged_height;  // by the staged W' and H' (the pitches)

  // Offset of staged position `position` (< D' * H' * W') in a source channel, or -1
  // where it lies in the halo.
  __device__ __forceinline__ int64_t source_offset(uint32_t position) const {
    const uint32_t line = staged_width.divide(position);
    const int w = static_cast<int>(position - line * staged_width.divisor) - halo_low[2];
    const uint32_t plane = staged_height.divide(line);
    const int h = static_cast<int>(line - plane * staged_height.divisor) - halo_low[1];
    const int d = static_cast<int>(plane) - halo_low[0];
    if (d < 0 || d >= source_extent[0] || h < 0 || h >= source_extent[1] || w < 0 ||
        w >= source_extent[2]) {
      return -1;
    }
    return (static_cast<int64_t>(d) * source_extent[1] + h) * source_extent[2] + w;
  }
};

inline StagedGrid staged_grid(const StagedLayout& layout) {
  StagedGrid grid{};
  grid.input_positions = layout.extent[0] * layout.extent[1] * layout.extent[2];
  for (int i = 0; i < 3; ++i) {
    grid.source_extent[i] = static_cast<int>(layout.extent[i]);
    grid.halo_low[i] = static_cast<int>(layout.halo_low[i]);
  }
  grid.staged_width = FastDivider(static_cast<uint32_t>(layout.staged_extent[2]));
  grid.staged_height = FastDivider(static_cast<uint32_t>(layout.staged_extent[1]));
  return grid;
}

}  // namespace ct3d::cuda
