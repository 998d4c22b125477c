#include "ops/cuda/engine/planner/gemm_plan.h"

#include <ATen/ops/empty.h>

#include <algorithm>
#include <string>

#include "ops/cuda/engine/problem/block_k.h"
#include "ops/cuda/engine/problem/group_fold.h"
#include "ops/cuda/engine/window/window_form_rule.h"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {
namespace {

// The wgmma gather for more than 32 channels per block. Narrower blocks do too little
// math per gathered row for it to pay (KERNEL_LOG "more work per stage", 2026-12-01: 58 (16
// channels) 1.59 -> 2.20 ms, 73 (32) 1.49 -> 1.96; but 68 (64) 20.9 -> 15.3, 61 (48) 4.45 -> 4.11):
// there the input gather, not the tensor core, is the limit.
constexpr int64_t kWgmmaMinChannels = 32;

// Groups folded per GEMM group: the fewest 16 x 16 mma tiles in all.
int group_fold(int64_t groups, int64_t cin_g, int64_t cout_g) {
  return static_cast<int>(best_group_fold(groups, cin_g, cout_g, [&](int64_t f) {
    return groups / f * ((f * cin_g + 15) / 16) * ((f * cout_g + 15) / 16);
  }));
}

// The wgmma gather's block channels (wgmma N) for a folded group's target channels: the
// smallest shape that holds them, or blocks of 128.
int wgmma_channels_for(int64_t cout) {
  for (const int n : {48, 64, 96}) {
    if (cout <= n) return n;
  }
  return 128;
}

// The reuse block's channels: the smallest wgmma N that holds them, or blocks of 128.
int width_reuse_channels_for(int64_t cout) {
  for (const int n : {16, 24, 32, 48, 64, 96}) {
    if (cout <= n) return n;
  }
  return 128;
}

// Where the reuse mainloop beat the others (docs/KERNEL_LOG.md, width-tap reuse):
// blocks of 32 to 64 channels, at least 3 width taps in every phase, groups not folded.
bool width_reuse_pays(const PhaseProblem& p, int channels, int fold) {
  const DimParams& width = p.dim[2];
  for (int a = 0; a < width.active_residues; ++a) {
    if (width.residue[width.active_residue[a]].taps < 3) return false;
  }
  return channels >= 32 && channels <= 64 && fold == 1;
}

// The Hopper window forms, in the planner's order; false where none takes the problem.
bool plan_window_forms(const GatherProblem& problem, const GemmOperands& operands,
                       const at::Tensor& output, GemmPlan& plan) {
  // Width stride 2 with few target channels: strided lines.
  const FormChoice lines = form_choice(FormSwitch::kStridedLines);
  if (lines != FormChoice::kNever && strided_lines_may_apply(problem) && operands.whole_batch) {
    const PhaseProblem p = make_phase_problem(problem, 8 * kStridedLinesStageSteps, 8, output);
    const StridedLinesPlan lines_plan = plan_strided_lines(problem, p, operands.source_fits_boxes);
    if (lines_plan.width_taps != 0 &&
        (lines != FormChoice::kRule || strided_lines_pays(lines_plan))) {
      plan.form = GemmForm::kStridedLines;
      plan.phase = p;
      plan.strided_lines = lines_plan;
      return true;
    }
  }
  // Stride 1 with wide blocks: the shifted window.
  const FormChoice window = form_choice(FormSwitch::kShiftedWindow);
  if (window != FormChoice::kNever) {
    const PhaseProblem p = make_phase_problem(problem, kBlockK, kWindowBlockChannels, output);
    const ShiftedWindowPlan window_plan = plan_shifted_window(p);
    if (window_plan.columns != 0 &&
        (window != FormChoice::kRule || shifted_window_pays(p, problem.input_gradient))) {
      plan.form = GemmForm::kShiftedWindow;
      plan.phase = p;
      plan.window = window_plan;
      return true;
    }
  }
  // Stride 1 with narrow blocks: the tap-columns form wherever it applies (it measured
  // faster at every row count it is built for: plan_tap_columns_if_taken), else the tap-rows
  // form where that pays.
  const FormChoice rows = form_choice(FormSwitch::kTapRows);
  if (rows != FormChoice::kNever) {
    const PhaseProblem p = make_phase_problem(problem, kBlockK, kTapRowsChannelStep, output);
    TapRowsPlan rows_plan =
        plan_tap_columns_if_taken(p, problem.input_gradient, operands.source_fits_boxes);
    if (rows_plan.window.columns == 0 &&
        (rows != FormChoice::kRule || tap_rows_pays(problem.input_gradient))) {
      rows_plan = plan_tap_rows(p);
    }
    if (rows_plan.window.columns != 0) {
      plan.form = rows_plan.positions_on_m ? GemmForm::kTapColumns : GemmForm::kTapRows;
      plan.phase = p;
      plan.tap_rows = rows_plan;
      return true;
    }
  }
  return false;
}

// The mma.sync gather's block channels for a folded group's target channels.
int mma_gather_block_channels(int64_t cout) {
  // Positions on M and three 8-channel tiles for 17-24 channels (no padding to 32),
  // else 16-channel tiles covering all of a group's target channels up to 64, so the
  // input gathered into shared memory feeds every channel; wider groups take several
  // blocks of 64.
  if (cout > 16 && cout <= 24) return 24;
  return 16 * static_cast<int>(std::min<int64_t>((cout + 15) / 16, 4));
}

// The gathering mainloops: width-tap reuse where it pays, else the wgmma gather above
// kWgmmaMinChannels, else mma.sync.
void plan_gather_forms(const GatherProblem& problem, const DeviceInfo& device,
                       const at::Tensor& output, GemmPlan& plan) {
  const int64_t cout = problem.target_channels;
  const FormChoice reuse = form_choice(FormSwitch::kWidthReuse);
  if (device.wgmma && reuse != FormChoice::kNever) {
    const int channels = width_reuse_channels_for(cout);
    const PhaseProblem p = make_phase_problem(problem, kBlockK, channels, output);
    const WidthReusePlan reuse_plan = plan_width_reuse(p, width_reuse_block_positions(channels),
                                                       channels, kWidthReuseMaxTileRows);
    if (reuse_plan.taps_per_stage != 0 &&
        (reuse == FormChoice::kAlways || width_reuse_pays(p, channels, plan.fold))) {
      plan.form = GemmForm::kWidthReuse;
      plan.block_channels = channels;
      plan.phase = p;
      plan.reuse = reuse_plan;
      return;
    }
  }
  if (device.wgmma && cout > kWgmmaMinChannels) {
    plan.form = GemmForm::kWgmmaGather;
    plan.block_channels = wgmma_channels_for(cout);
  } else {
    plan.form = GemmForm::kMmaGather;
    plan.block_channels = mma_gather_block_channels(cout);
  }
  plan.phase = make_phase_problem(problem, kBlockK, plan.block_channels, output);
}

// Whether every output line starts at a 16-byte boundary (unit width stride, every
// other stride a multiple of 8 half values, an aligned base): the parked epilogue's
// condition. Elsewhere it stores most pieces value by value and was 6-8 % slower than
// the direct epilogue (L1-61 and L1-68, lines of 66 and 68 outputs). A meta tensor
// stands for an output the op will allocate, which the caching allocator aligns.
bool output_lines_aligned(const PhaseProblem& p, const at::Tensor& output) {
  return p.output_stride[2] == 1 &&
         (p.output_stride[1] | p.output_stride[0] | p.output_channel_stride |
          p.output_batch_stride) %
                 8 ==
             0 &&
         (output.is_meta() || reinterpret_cast<uintptr_t>(output.const_data_ptr()) % 16 == 0);
}

// The half shifted window, where it applies (and, with only_where_float_pays, where the
// float32 form pays): blocks of 128 target channels where they apply (the padded
// channels a multiple of 128, three stages in shared memory), else of 64; room for the
// parked epilogue where the output lines are aligned (else the epilogue stores from the
// accumulators). Both measured faster where they apply (KERNEL_LOG, the half window).
bool plan_half_shifted_window(const GatherProblem& problem, const at::Tensor& output,
                              bool only_where_float_pays, HalfPlan& plan) {
  if (form_choice(FormSwitch::kShiftedWindow) == FormChoice::kNever) return false;
  const PhaseProblem p = make_phase_problem(problem, kBlockK, kWindowBlockChannels, output);
  if (only_where_float_pays && !shifted_window_pays(p, false)) return false;
  const bool parked = output_lines_aligned(p, output);
  ShiftedWindowPlan window = plan_shifted_window(p, true, kWindowMaxMTiles, parked);
  if (window.columns == 0) window = plan_shifted_window(p, true, 1, parked);
  if (window.columns == 0) return false;
  plan.form = HalfForm::kShiftedWindow;
  plan.phase = p;
  plan.window = window;
  return true;
}

// The half input gradient takes tap rows up to 16 target channels only: on the H100
// (bench/forms_table.py, 2026-12-05) N-16-8-k3-s1's (16) ran 1.79x faster in tap rows than
// in the half shifted window, N-32-16-k3-s1's (32) 1.79x slower (0.358 against 0.200 ms).
constexpr int64_t kHalfTapRowsMaxInputGradientChannels = 16;

bool plan_half_tap_rows(const GatherProblem& problem, const at::Tensor& output, HalfPlan& plan) {
  const FormChoice choice = form_choice(FormSwitch::kTapRows);
  if (choice == FormChoice::kNever) return false;
  if (choice == FormChoice::kRule && problem.input_gradient &&
      problem.target_channels > kHalfTapRowsMaxInputGradientChannels) {
    return false;
  }
  const PhaseProblem p = make_phase_problem(problem, kBlockK, kTapRowsChannelStep, output);
  const TapRowsPlan rows = plan_tap_rows(p, true);
  if (rows.window.columns == 0) return false;
  plan.form = HalfForm::kTapRows;
  plan.phase = p;
  plan.tap_rows = rows;
  return true;
}

}  // namespace

HalfPlan plan_half_gemm(const GatherProblem& problem, const DeviceInfo& device,
                        const at::Tensor& output, bool within_limits) {
  HalfPlan plan;
  if (!device.wgmma || !within_limits) return plan;
  bool one_phase = true;
  for (const GatherDim& dim : problem.dim) one_phase = one_phase && dim.phases.size() == 1;
  if (one_phase && form_choice(FormSwitch::kHalfWindow) != FormChoice::kNever) {
    // The float32 forward's order: the shifted window where it pays (or wherever it
    // applies, where the tests force it), else the tap-rows form (for an input gradient
    // only on narrow targets: kHalfTapRowsMaxInputGradientChannels); then the shifted
    // window wherever it applies, since the alternative here is the widened float32
    // path, not another half mainloop.
    const bool window_first = form_choice(FormSwitch::kShiftedWindow) == FormChoice::kAlways;
    if (plan_half_shifted_window(problem, output, !window_first, plan) ||
        plan_half_tap_rows(problem, output, plan) ||
        plan_half_shifted_window(problem, output, false, plan)) {
      return plan;
    }
  }
  // The half gather's blocks are 32 channels or more: narrower groups stay widened.
  if (form_choice(FormSwitch::kHalfGather) != FormChoice::kNever && problem.target_channels > 16) {
    plan.form = HalfForm::kGather;
  }
  return plan;
}

std::string describe(const HalfPlan& plan) {
  using std::to_string;
  switch (plan.form) {
    case HalfForm::kShiftedWindow:
      return "half shifted-window (" + to_string(plan.window.block_columns) + " columns, " +
             to_string(64 * plan.window.m_tiles) + " channels a block, " +
             to_string(plan.window.slots) + " stages)";
    case HalfForm::kTapRows:
      return "half tap-rows (" + to_string(plan.tap_rows.rows_used) + " rows, " +
             to_string(plan.tap_rows.window.block_columns) + " columns)";
    case HalfForm::kGather:
      return "half gather";
    case HalfForm::kWidened:
      break;
  }
  return "widened to float32";
}

const char* gemm_form_name(GemmForm form) {
  switch (form) {
    case GemmForm::kStridedLines:
      return "strided-lines";
    case GemmForm::kShiftedWindow:
      return "shifted-window";
    case GemmForm::kTapRows:
      return "tap-rows";
    case GemmForm::kTapColumns:
      return "tap-columns";
    case GemmForm::kWidthReuse:
      return "width-reuse";
    case GemmForm::kWgmmaGather:
      return "wgmma-gather";
    case GemmForm::kMmaGather:
      return "mma-gather";
  }
  return "?";
}

GemmPlan plan_gemm(const GatherProblem& problem, const DeviceInfo& device,
                   const GemmOperands& operands, const at::Tensor& output) {
  GemmPlan plan;
  // Folding needs the exact rerun, which writes contiguous outputs only, and the
  // source's own layout.
  plan.fold = operands.may_fold && !operands.prestaged
                  ? group_fold(problem.groups, problem.reduce_channels, problem.target_channels)
                  : 1;
  plan.folded = problem;
  plan.folded.groups = problem.groups / plan.fold;
  plan.folded.reduce_channels = problem.reduce_channels * plan.fold;
  plan.folded.target_channels = problem.target_channels * plan.fold;
  // The window forms stage their own copy of the source and take groups unfolded.
  if (device.wgmma && plan.fold == 1 && !operands.prestaged &&
      plan_window_forms(plan.folded, operands, output, plan)) {
    return plan;
  }
  plan_gather_forms(plan.folded, device, output, plan);
  return plan;
}

ChunkGemmPlans plan_chunk_gemms(const GatherProblem& problem, int64_t chunk_samples,
                                const DeviceInfo& device, const GemmOperands& operands) {
  TORCH_INTERNAL_ASSERT(chunk_samples >= 1 && chunk_samples <= problem.batch,
                        "plan_chunk_gemms: a chunk of ", chunk_samples, " samples of ",
                        problem.batch);
  // A chunk's target is a fresh contiguous tensor or a batch slice of one: a meta tensor
  // of its sizes gives its strides.
  const auto plan_for = [&](int64_t samples) {
    GatherProblem chunk = problem;
    chunk.batch = samples;
    const at::Tensor target =
        at::empty({samples, chunk.groups * chunk.target_channels, chunk.dim[0].target_extent,
                   chunk.dim[1].target_extent, chunk.dim[2].target_extent},
                  at::TensorOptions(at::kMeta));
    return plan_gemm(chunk, device, operands, target);
  };
  ChunkGemmPlans plans;
  plans.chunk_samples = chunk_samples;
  plans.full = plan_for(chunk_samples);
  const int64_t remainder = problem.batch % chunk_samples;
  plans.last = remainder == 0 ? plans.full : plan_for(remainder);
  return plans;
}

const GemmPlan& ChunkGemmPlans::of_chunk(int64_t samples) const {
  if (samples == full.folded.batch) return full;
  TORCH_INTERNAL_ASSERT(samples == last.folded.batch, "ChunkGemmPlans: a chunk of ", samples,
                        " samples, planned for ", full.folded.batch, " and ", last.folded.batch);
  return last;
}

bool tap_columns_takes(const GatherProblem& problem, const DeviceInfo& device,
                       const at::Tensor& output) {
  if (form_choice(FormSwitch::kTapRows) == FormChoice::kNever || !device.wgmma) return false;
  const PhaseProblem p = make_phase_problem(problem, kBlockK, kTapRowsChannelStep, output);
  return plan_tap_columns_if_taken(p, problem.input_gradient).window.columns > 0;
}

std::string describe(const GemmPlan& plan) {
  // Text by concatenation, not iostreams: formatting an integer through a stream crashed
  // the device image's Python process (ops/common/error_message.h).
  using std::to_string;
  std::string text = gemm_form_name(plan.form);
  switch (plan.form) {
    case GemmForm::kStridedLines:
      text += " (" + to_string(plan.strided_lines.width_taps) + " width taps x " +
              to_string(plan.strided_lines.channel_block) + " channels, " +
              to_string(plan.strided_lines.m_tiles) + " m-tiles, " +
              to_string(plan.strided_lines.tiles) + " tiles)";
      break;
    case GemmForm::kShiftedWindow:
      text += " (" + to_string(plan.window.block_columns) + " columns, " +
              to_string(plan.window.slots) + " stages)";
      break;
    case GemmForm::kTapRows:
    case GemmForm::kTapColumns:
      text += " (" + to_string(plan.tap_rows.rows_used) + " rows" +
              (plan.tap_rows.positions_on_m ? ", unsplit window" : "") +
              (plan.tap_rows.box_width > 0 ? ", TMA boxes" : "") + ", " +
              to_string(plan.tap_rows.window.block_columns) + " columns)";
      break;
    case GemmForm::kWidthReuse:
      text += " (" + to_string(plan.block_channels) + " channels, " +
              to_string(plan.reuse.taps_per_stage) + " taps a stage, " +
              to_string(plan.reuse.slots) + " stages)";
      break;
    case GemmForm::kWgmmaGather:
    case GemmForm::kMmaGather:
      text += " (" + to_string(plan.block_channels) + " channels a block)";
      break;
  }
  if (plan.fold > 1) text += ", groups folded " + to_string(plan.fold) + " at a time";
  return text;
}

}  // namespace ct3d::cuda
