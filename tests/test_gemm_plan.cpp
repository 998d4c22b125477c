// The planner of the float32 gathering GEMM (ops/cuda/engine/planner/gemm_plan.h) on a
// table of layers: the forms it picks on Hopper are the ones the benchmarks measured
// best there (docs/ARCHITECTURE.md, KERNEL_LOG), and every layer runs on mma.sync on an
// older GPU. Pure host code: no GPU needed.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "catch.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "tests/planner_layers.h"

namespace {

using ct3d::cuda::GemmForm;
using namespace ct3d::test_layers;  // NOLINT(build/namespaces): the table of layers

// The plan of the layer's forward (input_gradient false) or input gradient, with the
// operands as the op passes them: contiguous, 16-byte aligned, the whole batch, an exact
// rerun queued by the forward only.
ct3d::cuda::GemmPlan plan_of(const Layer& l, bool input_gradient, bool wgmma) {
  const ct3d::ConvGeometry g = geometry_of(l);
  const ct3d::cuda::GatherProblem problem =
      input_gradient ? ct3d::cuda::input_gradient_gather(g) : ct3d::cuda::forward_gather(g);
  const at::TensorOptions meta = at::TensorOptions().device(at::kMeta);
  const at::Tensor target =
      input_gradient
          ? at::empty({l.batch, l.cin, l.spatial[0], l.spatial[1], l.spatial[2]}, meta)
          : at::empty({l.batch, l.cout, g.dim[0].output, g.dim[1].output, g.dim[2].output}, meta);
  ct3d::cuda::GemmOperands operands;
  operands.source_fits_boxes = problem.groups == 1 || problem.reduce_channels % 16 == 0;
  operands.may_fold = !input_gradient;
  return ct3d::cuda::plan_gemm(problem, ct3d::cuda::DeviceInfo{wgmma}, operands, target);
}

std::string form_of(const Layer& l, bool input_gradient, bool wgmma) {
  return ct3d::cuda::gemm_form_name(plan_of(l, input_gradient, wgmma).form);
}

}  // namespace

TEST_CASE("the planner's forward forms on Hopper are the measured best") {
  // The tap-columns form: 1.02-1.45x the mainloop each took before (KERNEL_LOG "(width tap,
  // channel) rows on wgmma's N"-"window read by TMA").
  CHECK(form_of(kL1_58, false, true) == "tap-columns");
  CHECK(form_of(kL1_61, false, true) == "tap-columns");
  CHECK(form_of(kL1_70, false, true) == "tap-columns");
  // Five width taps: the shifted-window GEMM (shifted_window_pays).
  CHECK(form_of(kL1_68, false, true) == "shifted-window");
  // Width stride 2, 32 target channels: strided lines (0.90 against 1.53 ms).
  CHECK(form_of(kL1_73, false, true) == "strided-lines");
  // Three width taps and 256 channels: the wgmma gather (the shifted window measured
  // 0.94-0.97x it on 128-256 target channels: shifted_window_pays).
  CHECK(form_of(kWide256, false, true) == "wgmma-gather");
  // Three width taps in the one active width residue, 64 channels: width-tap reuse
  // (KERNEL_LOG "width-tap reuse": blocks of 32-64 channels with at least 3 width taps).
  CHECK(form_of(kL1_77, false, true) == "width-reuse");
  // Kernel 2, stride 2 (nnU-Net's upsampling), 32 target channels: the mma.sync gather
  // (the wgmma gather pays above 32: KERNEL_LOG "more work per stage").
  CHECK(form_of(kUnet, false, true) == "mma-gather");
}

TEST_CASE("the planner's input-gradient forms on Hopper") {
  // L1-68's input gradient on the tap-columns form: 16.2 -> 12.2 ms (ARCHITECTURE.md).
  CHECK(form_of(kL1_68, true, true) == "tap-columns");
  // The shifted window never takes an input gradient (0.82-0.94x: shifted_window_pays).
  for (const Layer& l : {kL1_58, kL1_61, kL1_70, kWide256}) {
    CAPTURE(l.name);
    CHECK(form_of(l, true, true) != "shifted-window");
  }
}

TEST_CASE("before Hopper every layer runs on the mma.sync gather") {
  for (const Layer& l : {kL1_58, kL1_61, kL1_68, kL1_70, kL1_72, kL1_73, kL1_77, kWide256, kUnet}) {
    CAPTURE(l.name);
    CHECK(form_of(l, false, false) == "mma-gather");
    CHECK(form_of(l, true, false) == "mma-gather");
  }
}

TEST_CASE("the planner folds small groups and then takes no window form") {
  // L1-72: 4 groups of 8 channels fold two at a time into 16 x 16 tiles (2 tiles in all;
  // 4 at a time would pad nothing but multiply 4).
  const ct3d::cuda::GemmPlan hopper = plan_of(kL1_72, false, true);
  CHECK(hopper.fold == 2);
  CHECK(hopper.folded.groups == 2);
  CHECK(hopper.folded.target_channels == 16);
  CHECK(std::string(ct3d::cuda::gemm_form_name(hopper.form)) != "strided-lines");
  // Without an exact rerun (the input gradient) groups stay apart.
  CHECK(plan_of(kL1_72, true, true).fold == 1);
}

TEST_CASE("every plan's block channels are a configuration its launcher holds") {
  for (const Layer& l : {kL1_58, kL1_61, kL1_68, kL1_70, kL1_72, kL1_73, kL1_77, kWide256, kUnet}) {
    for (const bool input_gradient : {false, true}) {
      for (const bool wgmma : {false, true}) {
        const ct3d::cuda::GemmPlan plan = plan_of(l, input_gradient, wgmma);
        CAPTURE(l.name, input_gradient, wgmma, ct3d::cuda::describe(plan));
        switch (plan.form) {
          case GemmForm::kMmaGather:
            CHECK((plan.block_channels == 16 || plan.block_channels == 24 ||
                   plan.block_channels == 32 || plan.block_channels == 48 ||
                   plan.block_channels == 64));
            break;
          case GemmForm::kWgmmaGather:
            CHECK((plan.block_channels == 48 || plan.block_channels == 64 ||
                   plan.block_channels == 96 || plan.block_channels == 128));
            break;
          case GemmForm::kWidthReuse:
            CHECK(plan.reuse.taps_per_stage > 0);
            break;
          case GemmForm::kStridedLines:
            CHECK(plan.strided_lines.width_taps > 0);
            break;
          case GemmForm::kShiftedWindow:
            CHECK(plan.window.columns > 0);
            break;
          case GemmForm::kTapRows:
          case GemmForm::kTapColumns:
            CHECK(plan.tap_rows.window.columns > 0);
            break;
        }
        CHECK(plan.phase.cout_padded % 8 == 0);
      }
    }
  }
}

namespace {

// The half plan of the layer's forward; the output allocated (its alignment counts).
ct3d::cuda::HalfPlan half_plan_of(const Layer& l, bool wgmma) {
  const ct3d::ConvGeometry g = geometry_of(l);
  const at::Tensor output =
      at::empty({l.batch, l.cout, g.dim[0].output, g.dim[1].output, g.dim[2].output},
                at::TensorOptions().dtype(at::kHalf));
  return ct3d::cuda::plan_half_gemm(ct3d::cuda::forward_gather(g), ct3d::cuda::DeviceInfo{wgmma},
                                    output, true);
}

// The half plan of the layer's input gradient on Hopper; grad_input allocated.
ct3d::cuda::HalfPlan half_input_gradient_plan_of(const Layer& l) {
  const at::Tensor grad_input =
      at::empty({l.batch, l.cin, l.spatial[0], l.spatial[1], l.spatial[2]},
                at::TensorOptions().dtype(at::kHalf));
  return ct3d::cuda::plan_half_gemm(ct3d::cuda::input_gradient_gather(geometry_of(l)),
                                    ct3d::cuda::DeviceInfo{true}, grad_input, true);
}

}  // namespace

TEST_CASE(
    "the half planner: window forms for stride 1, the half gather else, widened before "
    "Hopper") {
  using ct3d::cuda::HalfForm;
  // Stride 1: the shifted window where the float32 form pays (5 width taps), else tap rows.
  CHECK(half_plan_of(kL1_68, true).form == HalfForm::kShiftedWindow);
  CHECK(half_plan_of(kL1_70, true).form == HalfForm::kTapRows);
  // Strided: the half gather above 16 target channels.
  CHECK(half_plan_of(kL1_73, true).form == HalfForm::kGather);
  CHECK(half_plan_of(kUnet, true).form == HalfForm::kGather);
  for (const Layer& l : {kL1_58, kL1_61, kL1_68, kL1_70, kL1_73, kUnet}) {
    CAPTURE(l.name);
    CHECK(half_plan_of(l, false).form == HalfForm::kWidened);
  }
  // The input gradient: tap rows up to 16 target channels (N-16-8-k3-s1 1.79x the half
  // window), the half window above (N-32-16-k3-s1 1.79x tap rows).
  CHECK(half_input_gradient_plan_of(kNarrow16).form == HalfForm::kTapRows);
  CHECK(half_input_gradient_plan_of(kNarrow32).form == HalfForm::kShiftedWindow);
  // The engine's index limits turn every half form away.
  const ct3d::ConvGeometry g = geometry_of(kL1_68);
  CHECK(ct3d::cuda::plan_half_gemm(ct3d::cuda::forward_gather(g), ct3d::cuda::DeviceInfo{true},
                                   at::empty({1}), false)
            .form == HalfForm::kWidened);
}
