// The planner's entry (ops/cuda/engine/planner/op_plan.h) on a table of layers: the path
// each op takes (half forms, Winograd, the engine's GEMM on float32 or widened operands,
// the direct kernels) on the operands the ops pass (ops/cuda/op_operands.h, meta tensors
// here), as the benchmarks measured best. Pure host code: no GPU needed.
#include <ATen/ATen.h>

#include <string>

#include "ops/common/conv_transpose3d_args.h"
#include "ops/cuda/engine/planner/op_plan.h"
#include "ops/cuda/op_operands.h"
#include "ops/options/options.h"
#include "tests/catch.h"
#include "tests/planner_layers.h"

namespace {

using ct3d::cuda::ConvOp;
using ct3d::cuda::OpPath;
using ct3d::cuda::OpPlan;
using namespace ct3d::test_layers;  // NOLINT(build/namespaces): the table of layers

// The plan of one op of the layer, for operands of `dtype` (meta tensors) on a device
// with or without wgmma.
OpPlan plan_of(ConvOp op, const Layer& l, at::ScalarType dtype, bool wgmma,
               bool operands_exact_in_tf32 = false) {
  const at::Tensor x = meta_input(l, dtype);
  const at::Tensor w = at::empty({l.cin, l.cout / l.groups, l.kernel[0], l.kernel[1], l.kernel[2]},
                                 x.options());
  const ct3d::ConvTranspose3dArgs args = ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(l.stride), c10::fromIntArrayRefSlow(l.padding),
      c10::fromIntArrayRefSlow(l.output_padding), c10::SymInt(l.groups),
      c10::fromIntArrayRefSlow(l.dilation));
  const ct3d::cuda::OpOperands forward = ct3d::forward_operands(args, x, w);
  ct3d::cuda::OpOperands operands = forward;
  if (op == ConvOp::kInputGradient) {
    operands = ct3d::input_gradient_operands(
        args, at::empty(forward.target.sizes(), forward.target.options()));
  } else if (op == ConvOp::kWeightGradient) {
    operands = {x, at::Tensor()};
  }
  return ct3d::cuda::plan_op(ct3d::conv_problem(op, args, dtype, operands_exact_in_tf32),
                             ct3d::cuda::DeviceInfo{wgmma}, operands);
}

}  // namespace

TEST_CASE("the op planner: Winograd where it pays, the engine's GEMM else, float32") {
  using ct3d::cuda::GemmForm;
  // The wide stride-1 layers: Winograd for the forward and the input gradient.
  for (ConvOp op : {ConvOp::kForward, ConvOp::kInputGradient}) {
    const OpPlan plan = plan_of(op, kWide128, at::kFloat, true);
    CHECK(plan.path == OpPath::kWinograd);
    REQUIRE(plan.winograd.has_value());
    CHECK(ct3d::cuda::describe(plan).rfind("winograd (F(4, 3) x F(4, 3)", 0) == 0);
  }
  // L1-68: Winograd in height only for the forward; its input gradient on tap columns.
  CHECK(plan_of(ConvOp::kForward, kL1_68, at::kFloat, true).path == OpPath::kWinograd);
  const OpPlan dx = plan_of(ConvOp::kInputGradient, kL1_68, at::kFloat, true);
  CHECK(dx.path == OpPath::kEngine);
  CHECK(dx.gemm.form == GemmForm::kTapColumns);
  CHECK(!dx.widened);
  // Strided: the strided-lines form; its problem the forward's.
  const OpPlan lines = plan_of(ConvOp::kForward, kL1_73, at::kFloat, true);
  CHECK(lines.path == OpPath::kEngine);
  CHECK(lines.gemm.form == GemmForm::kStridedLines);
  CHECK(!lines.gather.input_gradient);
  CHECK(plan_of(ConvOp::kInputGradient, kL1_73, at::kFloat, true).gather.input_gradient);
  // Before Hopper: no Winograd (it pays only around the wgmma GEMM), the mma.sync gather.
  const OpPlan ampere = plan_of(ConvOp::kForward, kWide128, at::kFloat, false);
  CHECK(ampere.path == OpPath::kEngine);
  CHECK(ampere.gemm.form == GemmForm::kMmaGather);
  // The weight gradient on the engine's wgmma mainloop, mma.sync before Hopper.
  const OpPlan dw = plan_of(ConvOp::kWeightGradient, kL1_61, at::kFloat, true);
  CHECK(dw.path == OpPath::kEngine);
  CHECK(dw.mainloop.form == ct3d::cuda::WgradForm::kWgmma);
  CHECK(plan_of(ConvOp::kWeightGradient, kL1_61, at::kFloat, false).mainloop.form ==
        ct3d::cuda::WgradForm::kMmaSync);
}

TEST_CASE("the op planner: half forms, else widened operands without Winograd") {
  // Stride 1, 24 target channels: the half tap-rows form.
  const OpPlan half = plan_of(ConvOp::kForward, kL1_70, at::kHalf, true);
  CHECK(half.path == OpPath::kHalf);
  CHECK(ct3d::cuda::describe(half).rfind("half tap-rows", 0) == 0);
  // Folded groups of 8 target channels: no half form takes them; widened, on the engine.
  const OpPlan folded = plan_of(ConvOp::kForward, kL1_72, at::kBFloat16, true);
  CHECK(folded.path == OpPath::kEngine);
  CHECK(folded.widened);
  CHECK(folded.gather.operands_exact_in_tf32);
  CHECK(ct3d::cuda::describe(folded).rfind("widened to float32: ", 0) == 0);
  // Before Hopper every half op widens; the wide layer does not take Winograd then
  // either (widened operands are exact in TF32 without the transforms).
  for (ConvOp op : {ConvOp::kForward, ConvOp::kInputGradient, ConvOp::kWeightGradient}) {
    const OpPlan plan = plan_of(op, kWide128, at::kHalf, false);
    CHECK(plan.path == OpPath::kEngine);
    CHECK(plan.widened);
  }
  // float32 operands widened from half (the ops' second call): never Winograd.
  const OpPlan exact = plan_of(ConvOp::kForward, kWide128, at::kFloat, true, true);
  CHECK(exact.path == OpPath::kEngine);
  CHECK(exact.widened);
  // The half weight gradient on wgmma.
  const OpPlan dw = plan_of(ConvOp::kWeightGradient, kL1_61, at::kHalf, true);
  CHECK(dw.path == OpPath::kHalf);
  CHECK(dw.mainloop.form == ct3d::cuda::WgradForm::kWgmma);
}

TEST_CASE("the op planner: float64 on the direct kernels") {
  for (ConvOp op : {ConvOp::kForward, ConvOp::kInputGradient, ConvOp::kWeightGradient}) {
    const OpPlan plan = plan_of(op, kL1_61, at::kDouble, true);
    CHECK(plan.path == OpPath::kDirect);
    CHECK(ct3d::cuda::describe(plan) == "direct kernel (float64)");
  }
}

TEST_CASE("the op planner: the workspace each op's plan names") {
  using ct3d::cuda::backward_staging_budget;
  // The forward stages whole; the backward ops within half their sources (staging.h).
  CHECK(plan_of(ConvOp::kForward, kL1_73, at::kFloat, true).staging_floats ==
        ct3d::cuda::kUnlimitedStaging);
  const ct3d::ConvGeometry l1_68 = geometry_of(kL1_68);
  const OpPlan dx = plan_of(ConvOp::kInputGradient, kL1_68, at::kFloat, true);
  CHECK(dx.staging_floats == backward_staging_budget(l1_68.output_elements()));
  CHECK(dx.staging_floats == l1_68.output_elements() / 2);  // 312 M values: above the floor
  CHECK(ct3d::cuda::describe(dx).find("; staged within 149 Mi values a chunk") != std::string::npos);
  // The weight gradient's budget, which its launchers read from the mainloop's plan.
  const ct3d::ConvGeometry l1_61 = geometry_of(kL1_61);
  for (at::ScalarType dtype : {at::kFloat, at::kHalf}) {
    const OpPlan dw = plan_of(ConvOp::kWeightGradient, kL1_61, dtype, true);
    CHECK(dw.staging_floats ==
          backward_staging_budget(l1_61.input_elements() + l1_61.output_elements()));
    CHECK(dw.mainloop.staged.staging_floats == dw.staging_floats);
  }
  // Winograd: chunks of samples whose transformed tensors stay within the workspace;
  // 1 MiB (the option) leaves one sample a chunk.
  struct DefaultWorkspaceAfter {
    ~DefaultWorkspaceAfter() { ct3d::set_option("winograd_workspace_mib", ""); }
  } restore;
  for (ConvOp op : {ConvOp::kForward, ConvOp::kInputGradient}) {
    const OpPlan whole = plan_of(op, kWide128, at::kFloat, true);
    REQUIRE(whole.winograd.has_value());
    CHECK(whole.winograd->chunk_samples() >= 1);
    CHECK(whole.winograd->chunk_samples() <= kWide128.batch);
    ct3d::set_option("winograd_workspace_mib", "1");
    const OpPlan small = plan_of(op, kWide128, at::kFloat, true);
    ct3d::set_option("winograd_workspace_mib", "");
    REQUIRE(small.winograd.has_value());
    CHECK(small.winograd->chunk_samples() == 1);
    // The engine's GEMM between the transforms, planned for those chunks: one sample.
    CHECK(small.winograd->gemm.full.folded.batch == 1);
    CHECK(&small.winograd->gemm.of_chunk(1) == &small.winograd->gemm.full);
    CHECK_THROWS(small.winograd->gemm.of_chunk(2));
    CHECK(ct3d::cuda::describe(small).find("; 1 sample a chunk)") != std::string::npos);
  }
}
