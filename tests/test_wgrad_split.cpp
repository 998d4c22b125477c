// The weight gradient's split count fitted to whole waves (fit_wgrad_split_to_waves).
#include <algorithm>
#include <cstdint>

#include "ops/cuda/engine/planner/weight_gradient_split.h"
#include "tests/catch.h"

namespace {

using ct3d::cuda::WgradSplit;

// Waves x stages per block, the cost the fit minimises.
int64_t cost(WgradSplit s, int64_t blocks_per_split, int64_t multiprocessors) {
  const int64_t blocks = s.splits * blocks_per_split;
  return (blocks + multiprocessors - 1) / multiprocessors * s.stages_per_split;
}

}  // namespace

TEST_CASE("weight gradient splits fill whole waves") {
  // L1-68 on an H200: 13 row blocks, 65536 stages a chunk, 54 splits from the
  // workspace bound (702 blocks: 5.3 waves, the sixth a third full).
  const WgradSplit chosen{54, 1214};
  const WgradSplit fitted = ct3d::cuda::fit_wgrad_split_to_waves(chosen, 65536, 13, 132, 54, 16);
  CHECK(fitted.splits == 50);
  CHECK(fitted.splits * fitted.stages_per_split >= 65536);
  CHECK((fitted.splits - 1) * fitted.stages_per_split < 65536);
  CHECK(cost(fitted, 13, 132) < cost(chosen, 13, 132));
  // N-32-16-k3 (2 row blocks, 263 splits of 123 stages: 3.98 waves) keeps its count:
  // 3 waves of 163 stages gain 0.6 % in the cost, under the 1/32 asked.
  const WgradSplit narrow{263, 123};
  CHECK(ct3d::cuda::fit_wgrad_split_to_waves(narrow, 32256, 2, 132, 606, 16).splits == 263);
  // Never worse, never past its bounds, on a sweep of shapes.
  for (int64_t stages : {100, 4096, 16384, 65536, 300000}) {
    for (int64_t blocks_per_split : {1, 3, 13, 40}) {
      for (int64_t splits : {1, 7, 41, 54, 200}) {
        const int64_t per = (stages + splits - 1) / splits;
        const WgradSplit start{(stages + per - 1) / per, per};
        const int64_t max_splits = std::max<int64_t>(start.splits, 60);
        const WgradSplit f =
            ct3d::cuda::fit_wgrad_split_to_waves(start, stages, blocks_per_split, 132, max_splits, 16);
        CHECK(cost(f, blocks_per_split, 132) <= cost(start, blocks_per_split, 132));
        CHECK(f.splits * f.stages_per_split >= stages);
        CHECK(f.splits <= std::max(start.splits, max_splits));
        CHECK(f.splits >= 1);
      }
    }
  }
}
