// The forward problem of a shape with 16 input channels and batch 2, as the shifted-
// window plans' tests build it (test_shifted_window_plan.cpp, test_window_boxes.cpp,
// test_line_tiles.cpp, test_flat_tiles.cpp), and its source positions as indices.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "ops/common/conv_transpose3d_args.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"

namespace ct3d::test {

struct Shape {
  int64_t cout;
  std::vector<int64_t> spatial, kernel, stride, padding, output_padding, dilation;
};

inline ct3d::cuda::PhaseProblem forward_problem(const Shape& s) {
  const at::Tensor x = at::zeros({2, 16, s.spatial[0], s.spatial[1], s.spatial[2]});
  const at::Tensor w = at::zeros({16, s.cout, s.kernel[0], s.kernel[1], s.kernel[2]});
  const ct3d::ConvGeometry g = ct3d::geometry_of(ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(s.stride), c10::fromIntArrayRefSlow(s.padding),
      c10::fromIntArrayRefSlow(s.output_padding), c10::SymInt(1),
      c10::fromIntArrayRefSlow(s.dilation)));
  const at::Tensor out = at::empty({2, s.cout, g.dim[0].output, g.dim[1].output, g.dim[2].output});
  return ct3d::cuda::make_phase_problem(ct3d::cuda::forward_gather(g), 16,
                                        ct3d::cuda::kWindowBlockChannels, out);
}

// A source position (d, h, w) of `p` as one index, or kOutside where it is outside the
// source (a halo's zero).
constexpr int64_t kOutside = -1;
inline int64_t source_index(const ct3d::cuda::PhaseProblem& p, int64_t d, int64_t h, int64_t w) {
  const int64_t at[3] = {d, h, w};
  for (int i = 0; i < 3; ++i) {
    if (at[i] < 0 || at[i] >= p.source_extent[i]) return kOutside;
  }
  return (d * p.source_extent[1] + h) * p.source_extent[2] + w;
}

// The source index TMA reads at flat position `flat` of depth `depth` (line and flat
// tiles see a plane as one line of height x width positions; kOutside outside it).
inline int64_t flat_index(const ct3d::cuda::PhaseProblem& p, int depth, int64_t flat) {
  const int64_t plane = int64_t{p.source_extent[1]} * p.source_extent[2];
  if (depth < 0 || depth >= p.source_extent[0] || flat < 0 || flat >= plane) return kOutside;
  return depth * plane + flat;
}

}  // namespace ct3d::test
