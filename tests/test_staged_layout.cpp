// When the all-gradients op (CUDA) can run the input gradient on the weight
// gradient's staged copy of grad_output: exactly where the two GEMMs stage it in the
// same layout (same padded channels per group, same halos, no folded groups).
#include <ATen/ATen.h>

#include "catch.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"

namespace {

// The geometry of a batch-1 call with kernel 3, stride 2, padding 1.
ct3d::ConvGeometry strided_geometry(int64_t cin, int64_t cout, int64_t groups) {
  const at::Tensor x = at::zeros({1, cin, 3, 4, 5});
  const at::Tensor w = at::zeros({cin, cout / groups, 3, 3, 3});
  const std::vector<int64_t> stride{2}, padding{1}, output_padding{0}, dilation{1};
  return ct3d::geometry_of(ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
      c10::fromIntArrayRefSlow(output_padding), c10::SymInt(groups),
      c10::fromIntArrayRefSlow(dilation)));
}

bool staged_once(int64_t cin, int64_t cout, int64_t groups) {
  const ct3d::ConvGeometry g = strided_geometry(cin, cout, groups);
  return ct3d::cuda::gather_staged_layout(ct3d::cuda::input_gradient_gather(g)) ==
         ct3d::cuda::plan_weight_gradient(g).output;
}

}  // namespace

TEST_CASE("grad_output is staged once where both GEMMs pad its channels alike") {
  CHECK(staged_once(8, 16, 1));         // 16 and 16
  CHECK(staged_once(32, 32, 1));        // 32 and 32 (KernelBench 73)
  CHECK(staged_once(32, 64, 1));        // 64 and 64 (68, 77)
  CHECK(staged_once(16, 64, 2));        // 2 groups of 32, not folded
  CHECK(staged_once(48, 24, 1));        // 32 and 32 (70)
  CHECK_FALSE(staged_once(20, 48, 1));  // 48 for the input gradient, 64 for the weight's (61)
}

TEST_CASE("the two GEMMs' grad_output halos agree") {
  const ct3d::ConvGeometry g = strided_geometry(32, 32, 1);
  const ct3d::cuda::StagedLayout gather =
      ct3d::cuda::gather_staged_layout(ct3d::cuda::input_gradient_gather(g));
  const ct3d::cuda::StagedLayout weight = ct3d::cuda::plan_weight_gradient(g).output;
  for (int i = 0; i < 3; ++i) {
    CHECK(gather.extent[i] == g.dim[i].output);
    CHECK(gather.halo_low[i] == weight.halo_low[i]);
    CHECK(gather.staged_extent[i] == weight.staged_extent[i]);
  }
  // Folded groups change the weight gradient's grouping: never shared.
  const ct3d::ConvGeometry grouped = strided_geometry(32, 32, 4);
  const ct3d::cuda::WeightGradientPlan plan = ct3d::cuda::plan_weight_gradient(grouped);
  if (plan.fold > 1) {
    CHECK_FALSE(ct3d::cuda::gather_staged_layout(ct3d::cuda::input_gradient_gather(grouped)) ==
                plan.output);
  }
}
