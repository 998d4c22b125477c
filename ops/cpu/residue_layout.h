// Output index o = i * s + c_k, with c_k = k * dilation - padding, is residue
// r_k = c_k mod s (0 <= r_k < s), position i + a_k (a_k = floor(c_k / s)) of the
// output split by stride residue. ResidueLayout is that split as zero-padded
// volumes on which every (input position, tap) pair lands inside: the input
// gradient and the weight gradient read grad_output from it, the input-stationary
// forward writes the output into it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ops/common/conv_geometry.h"

namespace ct3d::cpu {

struct ResidueLayout {
  std::array<int64_t, 3> strides{};  // residues per dimension (parts: their product)
  std::array<int64_t, 3> low{};      // residue position m sits at box index m + low
  std::array<int64_t, 3> extent{};   // box extents
  // Per kernel tap (kd, kh, kw row-major): its residue part and the flat box offset
  // of input position (0, 0, 0) through it.
  std::vector<int64_t> tap_part, tap_offset;

  int64_t parts() const { return strides[0] * strides[1] * strides[2]; }
};

ResidueLayout residue_layout(const ConvGeometry& g);

}  // namespace ct3d::cpu
