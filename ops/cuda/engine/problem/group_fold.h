// Folding small convolution groups into one GEMM group, shared by the engine's
// launchers. Groups of few channels waste most of an mma tile on padding (8
// channels per group pad to 16: 4x the products); packing f consecutive groups
// block-diagonally into one GEMM group wastes less.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace ct3d::cuda {

// The divisor f of groups (f x the larger per-group channel count at most 64) with
// the lowest cost(f), the smallest such f on ties.
template <class Cost>
int64_t best_group_fold(int64_t groups, int64_t cin_g, int64_t cout_g, Cost cost) {
  int64_t best = 1, best_cost = std::numeric_limits<int64_t>::max();
  for (int64_t f = 1; f <= groups && f * std::max(cin_g, cout_g) <= 64; ++f) {
    if (groups % f != 0) continue;
    const int64_t c = cost(f);
    if (c < best_cost) {
      best = f;
      best_cost = c;
    }
  }
  return best;
}

}  // namespace ct3d::cuda
