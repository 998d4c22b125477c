#include "ops/cpu/residue_layout.h"

#include <algorithm>

namespace ct3d::cpu {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

ResidueLayout residue_layout(const ConvGeometry& g) {
  ResidueLayout r;
  std::array<std::vector<int64_t>, 3> a, residue;
  for (int i = 0; i < 3; ++i) {
    const DimGeometry& d = g.dim[i];
    r.strides[i] = d.stride;
    int64_t lowest = 0, highest = 0, most_positions = 0;
    for (int64_t k = 0; k < d.kernel; ++k) {
      const int64_t c = d.output_index(0, k);
      a[i].push_back(floor_div(c, d.stride));
      residue[i].push_back(c - d.stride * a[i].back());
      lowest = std::min(lowest, a[i].back());
      highest = std::max(highest, a[i].back());
    }
    for (int64_t rr = 0; rr < d.stride; ++rr) {
      most_positions = std::max(most_positions, (d.output - rr + d.stride - 1) / d.stride);
    }
    r.low[i] = -lowest;
    r.extent[i] = r.low[i] + std::max(d.input + highest, most_positions);
  }
  const int64_t plane = r.extent[1] * r.extent[2];
  for (int64_t kd = 0; kd < g.dim[0].kernel; ++kd)
    for (int64_t kh = 0; kh < g.dim[1].kernel; ++kh)
      for (int64_t kw = 0; kw < g.dim[2].kernel; ++kw) {
        r.tap_part.push_back((residue[0][kd] * r.strides[1] + residue[1][kh]) * r.strides[2] +
                             residue[2][kw]);
        r.tap_offset.push_back((a[0][kd] + r.low[0]) * plane + (a[1][kh] + r.low[1]) * r.extent[2] +
                               a[2][kw] + r.low[2]);
      }
  return r;
}

}  // namespace ct3d::cpu
