// Which taps of a stride-1 residue read inside the source for a run of target indices,
// and whether some border plane or line reads only the zero halo at a tap (tile_taps.h
// builds the tiles' tap ranges on these). Host and device code.
#pragma once

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Taps [first, first + count) of one dimension.
struct TapRange {
  int first, count;
};

// The taps of residue r at which some target index in [q0, q1] reads inside [0, extent):
// one run, as the shift moves monotonically with the tap.
CT3D_HOST_DEVICE TapRange taps_inside_source(const ResidueParams& r, int q0, int q1, int extent) {
  TapRange range{0, 0};
  for (int t = 0; t < r.taps; ++t) {
    const int shift = r.first_shift + t * r.shift_step;
    if (q1 + shift >= 0 && q0 + shift < extent) {
      if (range.count == 0) range.first = t;
      range.count = t - range.first + 1;
    }
  }
  return range;
}

// Whether some target plane or line reads only the halo at a tap: where none does, no
// tile leaves out a tap (plan_compact_grid then turns skip_halo_taps off, so that the
// kernels count all stages without decoding their tiles). The shift moves monotonically
// with the tap, so the border planes and lines are the ones to check.
CT3D_HOST_DEVICE bool border_taps_read_halo(const PhaseProblem& p) {
  for (int i = 0; i < 2; ++i) {
    const ResidueParams& r = p.dim[i].residue[0];
    const int last = p.dim[i].max_positions - 1;
    if (taps_inside_source(r, 0, 0, p.source_extent[i]).count < r.taps ||
        taps_inside_source(r, last, last, p.source_extent[i]).count < r.taps) {
      return true;
    }
  }
  return false;
}

}  // namespace ct3d::cuda
