// The weight gradient's planner (ops/cuda/engine/planner/weight_gradient_mainloop.h,
// fused_backward_plan.h) on a table of layers: wgmma where the benchmarks measured it
// faster than mma.sync (KERNEL_LOG "the weight gradient on wgmma", "segments by bulk
// copies", "weight-gradient stages of 16 positions", "a line's short last width tile"),
// mma.sync before Hopper, and the fused backward's sharing of the staged grad_output
// where it measured faster. Pure host code: no GPU needed.
#include <ATen/ATen.h>

#include <string>

#include "ops/cuda/engine/planner/fused_backward_plan.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"
#include "tests/catch.h"
#include "tests/planner_layers.h"

namespace {

using ct3d::cuda::WgradForm;
using namespace ct3d::test_layers;  // NOLINT(build/namespaces): the table of layers

// Six blocks of 64 input channels: past the four the wgmma form measured faster on.
const Layer kWide384{"W-384-64-k3-s1", 2, 384, 64, 1, {8, 8, 32}, {3, 3, 3}, k1, k1, k0, k1};

ct3d::cuda::WgradMainloopPlan plan_of(const Layer& l, bool wgmma, bool half = false,
                                      bool shares_staged_output = false) {
  ct3d::cuda::WgradOperands operands;
  operands.element_bytes = half ? 2 : 4;
  operands.shares_staged_output = shares_staged_output;
  return ct3d::cuda::plan_weight_gradient_mainloop(ct3d::cuda::plan_weight_gradient(geometry_of(l)),
                                                   ct3d::cuda::DeviceInfo{wgmma}, operands);
}

// The all-gradients call's plan (the input gradient asked for).
ct3d::cuda::FusedBackwardPlan fused_plan_of(const Layer& l, bool wgmma) {
  const ct3d::ConvGeometry g = geometry_of(l);
  const ct3d::cuda::GatherProblem input_gradient = ct3d::cuda::input_gradient_gather(g);
  return ct3d::cuda::plan_fused_backward(ct3d::cuda::plan_weight_gradient(g), &input_gradient,
                                         ct3d::cuda::DeviceInfo{wgmma}, {},
                                         meta_input(l).sym_sizes());
}

}  // namespace

TEST_CASE("the weight gradient runs on wgmma where it measured faster") {
  // One block holds a folded group's input channels (up to 64): wgmma, grad_output
  // staged at the segments' pitch and copied whole.
  for (const Layer& l : {kL1_58, kL1_61, kL1_68, kL1_70, kL1_77, kNarrow48}) {
    CAPTURE(l.name);
    const ct3d::cuda::WgradMainloopPlan plan = plan_of(l, true);
    CHECK(plan.form == WgradForm::kWgmma);
    CHECK(plan.launch.p.channel_blocks == 1);
    CHECK(plan.launch.p.bulk_segments);
  }
  // Two to four blocks with bulk segments where the width fills 3/4 of its tiles: 32
  // wide on stages of 32, 16 wide on stages of 16.
  const ct3d::cuda::WgradMainloopPlan wide128 = plan_of(kWide128, true);
  CHECK(wide128.form == WgradForm::kWgmma);
  CHECK(wide128.launch.p.channel_blocks == 2);
  CHECK(wide128.launch.p.positions == 32);
  const ct3d::cuda::WgradMainloopPlan wide256 = plan_of(kWide256, true);
  CHECK(wide256.form == WgradForm::kWgmma);
  CHECK(wide256.launch.p.channel_blocks == 4);
  CHECK(wide256.launch.p.positions == 16);
  // Six blocks, and blocks of several channel blocks on cp.async pieces: mma.sync.
  CHECK(plan_of(kWide384, true).form == WgradForm::kMmaSync);
  CHECK(plan_of(kWide128, true, false, true).form == WgradForm::kMmaSync);
}

TEST_CASE("a line's short last width tile runs as a second launch") {
  // 48 wide, one group, width stride 1: 32 positions on the main launch, 16 on the tail.
  const ct3d::cuda::WgradMainloopPlan narrow = plan_of(kNarrow48, true);
  REQUIRE(narrow.with_tail);
  CHECK(narrow.launch.p.width_tiles == 1);
  CHECK(narrow.tail.p.width_origin == 32);
  CHECK(narrow.tail.p.positions == 16);
  // L1-72 (48 wide, 4 groups, stride 2) measured 1.10x with it: none.
  CHECK_FALSE(plan_of(kL1_72, true).with_tail);
  // The half forms keep their stages of 32.
  CHECK_FALSE(plan_of(kNarrow48, true, true).with_tail);
}

TEST_CASE("before Hopper the float32 weight gradient runs on mma.sync, half widened") {
  for (const Layer& l : {kL1_58, kL1_61, kL1_68, kL1_70, kL1_72, kL1_73, kL1_77, kWide256}) {
    CAPTURE(l.name);
    const ct3d::cuda::WgradMainloopPlan plan = plan_of(l, false);
    CHECK(plan.form == WgradForm::kMmaSync);
    CHECK(plan.mma_m_tiles >= 1);
    CHECK(plan.mma_m_tiles <= 4);
    CHECK(plan_of(l, false, true).form == WgradForm::kWidened);
  }
  CHECK(plan_of(kL1_58, false).mma_m_tiles == 2);  // 32 input channels
  CHECK(plan_of(kWide256, false).mma_m_tiles == 4);
}

TEST_CASE("the half weight gradient: wgmma where its loads fit, else widened") {
  CHECK(plan_of(kL1_58, true, true).form == WgradForm::kWgmma);
  // 24 output channels a group: a multiple of 8 (its ldmatrix rows).
  CHECK(plan_of(kL1_70, true, true).form == WgradForm::kWgmma);
  // 4 output channels: not a multiple of 8.
  const Layer four{"4 output channels", 2, 16, 4, 1, {8, 8, 16}, {3, 3, 3}, k1, k1, k0, k1};
  CHECK(plan_of(four, true, true).form == WgradForm::kWidened);
  // A width of 12: not a multiple of 8 (its 16-byte input loads).
  const Layer odd{"width 12", 2, 16, 16, 1, {8, 8, 12}, {3, 3, 3}, k1, k1, k0, k1};
  CHECK(plan_of(odd, true, true).form == WgradForm::kWidened);
}

TEST_CASE("the fused backward shares the staged grad_output where that measured faster") {
  // Strided layers of 32-48 input channels: 4-10 % faster shared, the weight gradient
  // then on cp.async pieces.
  const ct3d::cuda::FusedBackwardPlan strided = fused_plan_of(kL1_73, true);
  CHECK(strided.input_gradient_on_staged_output);
  CHECK(strided.weight_gradient.form == WgradForm::kWgmma);
  CHECK_FALSE(strided.weight_gradient.launch.p.bulk_segments);
  // Stride 1 (level or slower shared), and wide layers (7-48 % slower): each its own.
  for (const Layer& l : {kL1_58, kL1_68, kWide128}) {
    CAPTURE(l.name);
    const ct3d::cuda::FusedBackwardPlan plan = fused_plan_of(l, true);
    CHECK_FALSE(plan.input_gradient_on_staged_output);
    CHECK(plan.weight_gradient.launch.p.bulk_segments);
  }
  // Before Hopper (not measured there) shared wherever the gather reads the same layout.
  CHECK(fused_plan_of(kL1_73, false).input_gradient_on_staged_output);
  // Without the input gradient asked for, nothing to share.
  const ct3d::ConvGeometry g = geometry_of(kL1_73);
  CHECK_FALSE(ct3d::cuda::plan_fused_backward(ct3d::cuda::plan_weight_gradient(g), nullptr,
                                              ct3d::cuda::DeviceInfo{true}, {},
                                              meta_input(kL1_73).sym_sizes())
                  .input_gradient_on_staged_output);
}

TEST_CASE("the fused backward plans the input gradient's GEMM on the weight gradient's chunks") {
  using ct3d::cuda::GemmForm;
  for (bool wgmma : {true, false}) {
    CAPTURE(wgmma);
    const ct3d::cuda::FusedBackwardPlan plan = fused_plan_of(kL1_73, wgmma);
    REQUIRE(plan.input_gradient_on_staged_output);
    // The chunks the weight gradient's mainloop stages within half of input and
    // grad_output (L1-73: 4 samples, grad_output's 63 x 127 x 255 positions of 32
    // channels): 2 samples on wgmma, 1 where mma.sync stages the input as well.
    const int64_t chunk = plan.weight_gradient.chunk_samples;
    CHECK(chunk == (wgmma ? 2 : 1));
    CHECK(plan.input_gradient.chunk_samples == chunk);
    CHECK(plan.input_gradient.full.folded.batch == chunk);
    CHECK(&plan.input_gradient.of_chunk(chunk) == &plan.input_gradient.full);
    // On the staged copy only the gathering mainloops run, groups unfolded.
    const GemmForm form = plan.input_gradient.full.form;
    CHECK((form == GemmForm::kWgmmaGather || form == GemmForm::kMmaGather ||
           form == GemmForm::kWidthReuse));
    CHECK(plan.input_gradient.full.fold == 1);
    // A chunk of any other size was not planned: the launch stops rather than guess.
    CHECK_THROWS(plan.input_gradient.of_chunk(chunk - 1));
  }
  // Where nothing is shared, no chunk GEMM is planned.
  CHECK(fused_plan_of(kL1_58, true).input_gradient.chunk_samples == 0);
}

TEST_CASE("the chunk GEMMs: a plan for the full chunks and one for the shorter last") {
  const ct3d::cuda::GatherProblem problem =
      ct3d::cuda::input_gradient_gather(geometry_of(kL1_73));
  ct3d::cuda::GemmOperands staged;
  staged.prestaged = true;
  const ct3d::cuda::ChunkGemmPlans plans =
      ct3d::cuda::plan_chunk_gemms(problem, 3, ct3d::cuda::DeviceInfo{true}, staged);
  CHECK(plans.full.folded.batch == 3);
  CHECK(plans.last.folded.batch == 1);  // 4 samples: 3 + 1
  CHECK(&plans.of_chunk(1) == &plans.last);
  CHECK_THROWS(plans.of_chunk(2));
  CHECK_THROWS(ct3d::cuda::plan_chunk_gemms(problem, 5, ct3d::cuda::DeviceInfo{true}, staged));
}

TEST_CASE("the weight gradient's plan names the split of its reduction") {
  // L1-68 on wgmma: 10 samples a chunk (the staging budget), 81920 stages of 32
  // positions, 13 row blocks; the workspace bound allows 54 splits (702 blocks: 5.3 waves
  // on 132 multiprocessors), fitted to 40 (520 blocks: 3.9 waves of 2048 stages;
  // fit_wgrad_split_to_waves, test_wgrad_split.cpp).
  const ct3d::cuda::WgradMainloopPlan l1_68 = plan_of(kL1_68, true);
  REQUIRE(l1_68.form == WgradForm::kWgmma);
  CHECK(l1_68.chunk_samples == 10);
  CHECK(l1_68.launch.p.row_blocks == 13);
  CHECK(l1_68.launch.split.splits == 40);
  CHECK(l1_68.launch.split.stages_per_split == 2048);
  // Every plan's split covers its chunk's stages, within the workspace bound, on
  // whichever mainloop, and fewer multiprocessors never ask for more splits.
  for (const Layer& l : {kL1_58, kL1_61, kL1_70, kL1_73, kL1_77, kNarrow48, kWide128}) {
    for (bool wgmma : {true, false}) {
      CAPTURE(l.name, wgmma);
      const ct3d::cuda::WgradMainloopPlan plan = plan_of(l, wgmma);
      const ct3d::cuda::WgradSplit split =
          plan.form == WgradForm::kWgmma ? plan.launch.split : plan.mma_split;
      const ct3d::ConvGeometry& g = plan.staged.geometry;
      const int64_t stages =
          plan.form == WgradForm::kWgmma
              ? plan.chunk_samples * plan.launch.p.depth * plan.launch.p.height *
                    plan.launch.p.width_tiles
              : (plan.chunk_samples * g.input_positions() + 15) / 16;
      CHECK(split.splits >= 1);
      CHECK(split.splits * split.stages_per_split >= stages);
      CHECK((split.splits - 1) * split.stages_per_split < stages);
      if (plan.with_tail) CHECK(plan.tail.split.splits >= 1);
    }
  }
  // The device's multiprocessors set it: mma.sync asks for blocks in proportion.
  ct3d::cuda::DeviceInfo twice{false};
  twice.multiprocessors = 2 * 132;
  const ct3d::cuda::WgradMainloopPlan l1_58 = plan_of(kL1_58, false);
  const ct3d::cuda::WgradMainloopPlan l1_58_twice = ct3d::cuda::plan_weight_gradient_mainloop(
      ct3d::cuda::plan_weight_gradient(geometry_of(kL1_58)), twice, {});
  CHECK(l1_58_twice.mma_split.splits > l1_58.mma_split.splits);
}

TEST_CASE("describe names the weight gradient's mainloop") {
  CHECK(ct3d::cuda::describe(plan_of(kNarrow48, true)) ==
        "wgmma (blocks of 48 input channels x 256 rows, stages of 32 positions, segments by bulk "
        "copies, the lines' last positions on stages of 16)");
  CHECK(ct3d::cuda::describe(plan_of(kL1_58, false)) == "mma.sync (blocks of 32 input channels)");
}
