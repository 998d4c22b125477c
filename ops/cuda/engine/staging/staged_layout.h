// Where a staged operand's values lie: the source copied channels-last with a zero halo
// around its spatial extents and each group's channels zero-padded (staging.h stages it;
// staged_grid.cuh walks it on the device).
#pragma once

#include <cstdint>

namespace ct3d::cuda {

struct StagedLayout {
  int64_t groups = 1, channels_per_group = 1;
  int64_t padded_channels_per_group = 1;  // a multiple of 4 (8 for 16-bit types): 16-byte rows
  int64_t extent[3] = {1, 1, 1};          // the source's spatial extents
  int64_t halo_low[3] = {0, 0, 0};        // staged index = source index + halo_low
  int64_t staged_extent[3] = {1, 1, 1};   // extent plus both halos

  int64_t padded_channels() const { return groups * padded_channels_per_group; }
  int64_t staged_positions() const {
    return staged_extent[0] * staged_extent[1] * staged_extent[2];
  }
  bool operator==(const StagedLayout& other) const;
};

}  // namespace ct3d::cuda
