#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"  // round_up
#include "ops/cuda/engine/staging/half_stage_layout.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxGrid = 65535;
constexpr int64_t kSharedBudgetBytes = 200 * 1024;
constexpr int kMinSlots = 3;

// Samples a chunk: the staged copies of one chunk (grad_output's, and the input's when
// stage_input) within plan.staging_floats.
int64_t chunk_samples(const WeightGradientPlan& plan, bool stage_input) {
  const int64_t staged_per_sample =
      (stage_input ? plan.input.staged_positions() * plan.input.padded_channels() : 0) +
      plan.output.staged_positions() * plan.output.padded_channels();
  return staging_chunk_samples(staged_per_sample, plan.staging_floats, plan.geometry.batch);
}

// wgmma N: the smallest shape that holds a folded group's input channels, or blocks
// of 64.
int block_channels_for(int64_t cin) {
  for (const int n : {16, 24, 32, 48}) {
    if (cin <= n) return n;
  }
  return 64;
}

// Positions of a stage: float32 takes 16 where a line is at most 16 wide, so that its
// one tile is not half zeros (the 16-wide layers: 1.4-1.5x; KERNEL_LOG "weight-gradient stages of
// 16 positions"). A stage of 16 costs nearly what one of 32 does (forced on 64-wide lines: 1.2-1.6x
// slower), so a width of 48 keeps 32 (N-32-16-k3-s1 1.03x, N-48-24 1.00x, L1-72 0.77x with 16).
int stage_positions_for(int64_t width, int element_bytes) {
  if (element_bytes != 4) return kWgradTilePositions;
  // The tests force either (forced_form.h: wgrad-wgmma-16, wgrad-wgmma-32).
  const FormChoice forced = form_choice(FormSwitch::kWgradPositions32);
  if (forced != FormChoice::kRule) {
    return forced == FormChoice::kAlways ? kWgradTilePositions : kWgradShortTilePositions;
  }
  return width <= kWgradShortTilePositions ? kWgradShortTilePositions : kWgradTilePositions;
}

// float32 blocks of 3 m-tiles a warpgroup take 2 where that needs no more row blocks
// (N-32-16-k3-s1: 432 rows, two blocks of 384 or of 256), leaving out m-tiles of rows
// past the end (KERNEL_LOG "leaves out empty m-tiles": 6 % there). Only with stages of 32 positions
// (no instance of 16 with 2).
int m_tiles_for_rows(int m_tiles, int64_t rows, int positions, int element_bytes) {
  if (element_bytes != 4 || m_tiles != 3 || positions != kWgradTilePositions) {
    return m_tiles;
  }
  const auto blocks = [&](int m) { return (rows + 128 * m - 1) / (128 * m); };
  return blocks(2) == blocks(3) ? 2 : 3;
}

// Row stride of a float32 segment: lanes t = 0..3 of a k-step read positions t apart
// (stride x pitch floats); with that step at 8 or 24 banks, they and the 8 channels of
// lanes g cover all 32 banks.
int segment_pitch(int64_t channels, int64_t stride) {
  for (int64_t pad = 4; pad <= 32; pad += 4) {
    const int64_t step = stride * (channels + pad) % 32;
    if (step == 8 || step == 24) return static_cast<int>(channels + pad);
  }
  return static_cast<int>(channels + 4);
}

// Where the float32 form stages grad_output at its segments' pitch and copies a pair's
// segment whole (docs/KERNEL_LOG.md "segments by bulk copies": 0.96-1.66x against cp.async pieces,
// 15 of 17 layers faster): the pitch.
int64_t float32_bulk_staging_pitch(int64_t channels, int64_t stride) {
  return segment_pitch(round_up(channels, 4), stride);
}

// Where the wgmma form measured faster than mma.sync (docs/KERNEL_LOG.md, "the weight gradient on
// wgmma", "segments by bulk copies", "weight-gradient stages of 16 positions"): the folded group's
// input channels in one block (up to 64); in float32 with bulk segments also two to four blocks
// where the width fills at least 3/4 of its tiles (128 channels 1.12-1.89x; 256 channels 32
// wide 1.90x; 16-wide layers of 128 and 256 channels on 16-position stages 1.41-1.75x, on
// half-empty 32-position ones 0.70-0.73x). With cp.async pieces every block re-copies the segments
// (KERNEL_LOG "the weight gradient on wgmma": 0.53-0.85x at 128-256 channels).
bool wgmma_weight_gradient_pays(const WgradWgmmaProblem& p, bool half) {
  if (p.channel_blocks == 1) return true;
  const bool filled = 4 * p.width >= 3 * p.positions * p.width_tiles;
  return !half && p.bulk_segments && p.channel_blocks <= 4 && filled;
}

// element_bytes: 4 (float32) or 2 (float16, bfloat16). staged_at_pitch: the plan stages
// grad_output's rows at the segments' pitch, so a pair's segment is one bulk copy.
// positions: of a stage (kWgradTilePositions; float32 also kWgradShortTilePositions).
WgmmaWgradLaunch plan_wgmma_launch(const WeightGradientPlan& plan, int element_bytes,
                                   bool staged_at_pitch, int positions) {
  const ConvGeometry& g = plan.geometry;
  WgmmaWgradLaunch launch;
  WgradWgmmaProblem& p = launch.p;
  launch.channels = block_channels_for(plan.cin);
  p.depth = static_cast<int>(g.dim[0].input);
  p.height = static_cast<int>(g.dim[1].input);
  p.width = static_cast<int>(g.dim[2].input);
  p.positions = positions;
  const int64_t total_rows = g.taps() * plan.cout;
  launch.m_tiles = m_tiles_for_rows(wgrad_m_tiles_for(launch.channels, element_bytes == 2),
                                    total_rows, p.positions, element_bytes);
  p.width_tiles = (p.width + p.positions - 1) / p.positions;
  p.input_channel_stride = g.input_positions();
  p.input_sample_stride = g.in_channels * g.input_positions();
  p.input_group_channels = static_cast<int>(plan.cin);
  int64_t index_stride = plan.output.padded_channels();
  p.column_stride = static_cast<int>(index_stride);
  int64_t tap_stride[kSpatialDims];
  p.tap_origin = 0;
  for (int i = kSpatialDims - 1; i >= 0; --i) {
    const DimGeometry& d = g.dim[i];
    p.output_row_stride[i] = d.stride * index_stride;
    tap_stride[i] = d.dilation * index_stride;
    p.tap_origin += (d.output_index(0, 0) + plan.output.halo_low[i]) * index_stride;
    index_stride *= plan.output.staged_extent[i];
  }
  p.output_batch_stride = index_stride;
  p.depth_tap_stride = tap_stride[0];
  p.height_tap_stride = tap_stride[1];
  p.output_group_channels = static_cast<int>(plan.output.padded_channels_per_group);
  p.row_pieces = FastDivider(static_cast<uint32_t>(p.output_group_channels * element_bytes / 16));
  p.kernel_h = static_cast<int>(g.dim[1].kernel);
  p.kernel_w = static_cast<int>(g.dim[2].kernel);
  p.stride_w = static_cast<int>(g.dim[2].stride);
  p.dilation_w = static_cast<int>(g.dim[2].dilation);
  // The compute threads read all positions of a tile (those past the width meet zero
  // input), so a segment holds the rows of a whole tile, zero past the width.
  const int64_t segment_rows =
      (p.positions - 1) * g.dim[2].stride + (g.dim[2].kernel - 1) * g.dim[2].dilation + 1;
  p.output_channels = static_cast<int>(plan.cout);
  p.rows_per_block = 2 * 64 * launch.m_tiles;
  p.row_blocks = static_cast<int>((total_rows + p.rows_per_block - 1) / p.rows_per_block);
  p.channel_blocks = static_cast<int>((plan.cin + launch.channels - 1) / launch.channels);
  p.groups = static_cast<int>(plan.groups);
  if (total_rows >= kMaxInt || segment_rows >= kMaxInt / 64) return launch;
  p.total_rows = static_cast<int>(total_rows);
  p.segment_rows = FastDivider(static_cast<uint32_t>(segment_rows));
  p.pitch = staged_at_pitch ? p.output_group_channels
            : element_bytes == 2
                ? static_cast<int>(half_segment_pitch(p.output_group_channels, p.stride_w))
                : segment_pitch(p.output_group_channels, p.stride_w);
  p.bulk_segments = staged_at_pitch;
  p.pair_elements = static_cast<int>(segment_rows * p.pitch);
  for (int64_t b = 0; b < p.row_blocks; ++b) {
    const int64_t first = b * p.rows_per_block;
    const int64_t last = std::min(first + p.rows_per_block, total_rows) - 1;
    const int64_t pairs = last / plan.cout / p.kernel_w - first / plan.cout / p.kernel_w + 1;
    launch.max_pairs = static_cast<int>(std::max<int64_t>(launch.max_pairs, pairs));
  }
  // Slots 128-byte aligned.
  const int64_t stage_bytes = (wgrad_b_bytes(launch.channels, p.positions, element_bytes) +
                               int64_t{launch.max_pairs} * p.pair_elements * element_bytes + 127) /
                              128 * 128;
  const int64_t slots = std::min<int64_t>(kWgradMaxSlots, kSharedBudgetBytes / stage_bytes);
  p.stage_bytes = static_cast<int>(std::min<int64_t>(stage_bytes, kMaxInt));
  p.slots = static_cast<int>(slots);
  launch.fits = launch.max_pairs <= kWgradMaxPairs && slots >= kMinSlots &&
                int64_t{p.row_blocks} * p.channel_blocks <= kMaxGrid && p.groups <= kMaxGrid;
  return launch;
}

// Where a float32 line's last tile of 32 positions would be at most half full (48
// wide: 32 + 16), its positions go to a second launch on 16-position stages (`tail`)
// and `whole_tiles` keeps the whole tiles, so that no k-step meets only zeros (KERNEL_LOG
// "a line's short last width tile"; a condition around the wgmmas instead split their batches,
// "leaves out empty m-tiles"). Measured: N-48-24-k3-s1 0.78x the time, N-32-16-k3-s1 0.97x, and
// L1-72 (4 groups, stride 2) 1.10x, so one group at width stride 1 only.
bool plan_tail_launch(const WeightGradientPlan& plan, bool staged_at_pitch,
                      WgmmaWgradLaunch& whole_tiles, WgmmaWgradLaunch& tail) {
  const int width = whole_tiles.p.width;
  const int whole = width / kWgradTilePositions, rest = width % kWgradTilePositions;
  if (whole_tiles.p.positions != kWgradTilePositions || whole == 0 || rest == 0 ||
      rest > kWgradShortTilePositions || whole_tiles.p.groups != 1 || whole_tiles.p.stride_w != 1) {
    return false;
  }
  tail = plan_wgmma_launch(plan, 4, staged_at_pitch, kWgradShortTilePositions);
  if (!tail.fits) return false;
  tail.p.width_origin = whole * kWgradTilePositions;
  tail.p.width_tiles = 1;
  whole_tiles.p.width_tiles = whole;
  return true;
}

// The wgmma form's plan where it takes the call (plan.form kWgmma), else plan unchanged.
void plan_wgmma(const WeightGradientPlan& call, const WgradOperands& operands,
                WgradMainloopPlan& plan) {
  const FormChoice choice = form_choice(FormSwitch::kWgradWgmma);
  if (choice == FormChoice::kNever) return;
  const bool half = operands.element_bytes == 2;
  // 16-byte loads of an input line's positions (4 float32 or 8 half values).
  const ConvGeometry& g = call.geometry;
  if (g.dim[2].input % (16 / operands.element_bytes) != 0 || !operands.input_aligned) return;
  // The half form's ldmatrix reads 8 rows of one tap's output channels at once, the
  // float32 form's 8-byte loads 2.
  if (call.cout % (half ? 8 : 2) != 0) return;
  // grad_output staged at the segments' pitch where they are copied whole (one group;
  // float32 only where no input gradient reads the staged copy in its own layout).
  WeightGradientPlan staged = call;
  int64_t bulk_pitch = 0;
  if (call.groups == 1 && (half || !operands.shares_staged_output)) {
    bulk_pitch = half ? bulk_staging_pitch(call.cout, g.dim[2].stride)
                      : float32_bulk_staging_pitch(call.cout, g.dim[2].stride);
    if (bulk_pitch > 0) staged.output.padded_channels_per_group = bulk_pitch;
  }
  const int positions = stage_positions_for(g.dim[2].input, operands.element_bytes);
  WgmmaWgradLaunch launch =
      plan_wgmma_launch(staged, operands.element_bytes, bulk_pitch > 0, positions);
  // Stages of 16 positions hold about half the segment rows: where those of 32 leave
  // fewer than kMinSlots slots (strided layers of many output channels), 16 may fit.
  if (!launch.fits && !half && positions == kWgradTilePositions &&
      form_choice(FormSwitch::kWgradPositions32) == FormChoice::kRule) {
    launch =
        plan_wgmma_launch(staged, operands.element_bytes, bulk_pitch > 0, kWgradShortTilePositions);
  }
  if (!launch.fits ||
      (choice != FormChoice::kAlways && !wgmma_weight_gradient_pays(launch.p, half))) {
    return;
  }
  plan.form = WgradForm::kWgmma;
  plan.staged = staged;
  plan.with_tail = !half && plan_tail_launch(staged, bulk_pitch > 0, launch, plan.tail);
  plan.launch = launch;
}

}  // namespace

const char* wgrad_form_name(WgradForm form) {
  switch (form) {
    case WgradForm::kWgmma:
      return "wgmma";
    case WgradForm::kMmaSync:
      return "mma.sync";
    case WgradForm::kWidened:
      return "widened";
  }
  return "?";
}

WgradMainloopPlan plan_weight_gradient_mainloop(const WeightGradientPlan& call,
                                                const DeviceInfo& device,
                                                const WgradOperands& operands) {
  WgradMainloopPlan plan;
  plan.staged = call;
  const bool half = operands.element_bytes == 2;
  // The half form (the tests turn it off: forced_form.h, half-widened): widths a
  // multiple of 8 (its 16-byte input loads) and a multiple of 8 output channels per
  // folded group (its ldmatrix rows).
  const bool half_may_apply = form_choice(FormSwitch::kHalfWgrad) != FormChoice::kNever &&
                              call.geometry.dim[2].input % 8 == 0 && call.cout % 8 == 0;
  if (device.wgmma && (!half || half_may_apply)) plan_wgmma(call, operands, plan);
  if (plan.form == WgradForm::kWgmma) {
    // The wgmma mainloop reads the input in place: grad_output alone is staged.
    plan.chunk_samples = chunk_samples(plan.staged, false);
    // A tail launch and the whole tiles' share the workspace bound.
    const int64_t share = kWeightGradientWorkspaceFloats / (plan.with_tail ? 2 : 1);
    plan.launch.split =
        plan_wgmma_wgrad_split(plan.staged, plan.launch.p, plan.launch.channels, half,
                               plan.chunk_samples, share, device.multiprocessors);
    if (plan.with_tail) {
      plan.tail.split =
          plan_wgmma_wgrad_split(plan.staged, plan.tail.p, plan.launch.channels, half,
                                 plan.chunk_samples, share, device.multiprocessors);
    }
    return plan;
  }
  if (half) {
    plan.form = WgradForm::kWidened;
    return plan;
  }
  plan.form = WgradForm::kMmaSync;
  plan.mma_m_tiles =
      static_cast<int>(std::min<int64_t>(call.input.padded_channels_per_group, 64) / 16);
  plan.chunk_samples = chunk_samples(plan.staged, true);
  plan.mma_split = plan_mma_wgrad_split(plan.staged, plan.mma_m_tiles, plan.chunk_samples,
                                        device.multiprocessors);
  return plan;
}

bool sharing_staged_output_pays(const WeightGradientPlan& plan, const DeviceInfo& device) {
  // Groups are never staged at the pitch; elsewhere (mma.sync) it was not measured.
  if (!device.wgmma || plan.groups > 1) return true;
  // Measured in one process, the all-gradients call with the copy shared against each
  // its own: 4-10 % faster shared on strided layers of 32-48 input channels (L1-73,
  // L1-77, N-32-16-k3-s2); on stride-1 layers of 16-48 channels level or slower (L1-58
  // 5 %); 7-48 % slower at 64 and more (N-64-*, the wide layers).
  const ConvGeometry& g = plan.geometry;
  const bool strided = g.dim[0].stride > 1 || g.dim[1].stride > 1 || g.dim[2].stride > 1;
  return strided && block_channels_for(plan.cin) < 64;
}

std::string describe(const WgradMainloopPlan& plan) {
  std::string text = wgrad_form_name(plan.form);
  if (plan.form == WgradForm::kWgmma) {
    const WgradWgmmaProblem& p = plan.launch.p;
    text += " (blocks of " + std::to_string(plan.launch.channels) + " input channels x " +
            std::to_string(p.rows_per_block) + " rows, stages of " + std::to_string(p.positions) +
            " positions, " +
            (p.bulk_segments ? "segments by bulk copies" : "segments by cp.async pieces");
    if (plan.with_tail) text += ", the lines' last positions on stages of 16";
    text += ")";
  } else if (plan.form == WgradForm::kMmaSync) {
    text += " (blocks of " + std::to_string(16 * plan.mma_m_tiles) + " input channels)";
  }
  if (plan.staged.fold > 1) {
    text += ", groups folded " + std::to_string(plan.staged.fold) + " at a time";
  }
  return text;
}

}  // namespace ct3d::cuda
