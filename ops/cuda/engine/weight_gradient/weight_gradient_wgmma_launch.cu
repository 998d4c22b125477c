// Host side of the weight gradient on wgmma (weight_gradient_wgmma_kernel.cuh): the
// block's rows and input channels, the segments' shared-memory layout, the split of
// the reduction, and the launch per chunk of staged grad_output (the input is read
// as it is, NCDHW).
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"  // round_up
#include "ops/cuda/engine/staging/half_stage_layout.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_splits.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_wgmma_kernel.cuh"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxGrid = 65535;
// Splits: about kWaves blocks per multiprocessor (one fits at a time), each at least
// kMinPositions positions (16 stages of 32) and aiming at no more than kMaxPositions
// (32 K, as the mma.sync weight gradient's bound on a running sum).
constexpr int kWaves = 4;
constexpr int64_t kMinPositions = 16 * kWgradTilePositions;
constexpr int64_t kMaxPositions = 1024 * kWgradTilePositions;
constexpr int64_t kSharedBudgetBytes = 200 * 1024;
constexpr int kMinSlots = 3;

// wgmma N: the smallest shape that holds a folded group's input channels, or blocks
// of 64. M-tiles per compute warpgroup: as many as the accumulators' registers allow.
int block_channels_for(int64_t cin) {
  for (const int n : {16, 24, 32, 48}) {
    if (cin <= n) return n;
  }
  return 64;
}
// float32 keeps a chain and a total per m-tile; the half forms only the chain, so
// they hold twice the rows (a stage's segments and B serve more products).
constexpr int m_tiles_for(int channels, bool half) {
  if (half) return channels <= 32 ? 6 : channels <= 48 ? 4 : 3;
  return channels <= 32 ? 3 : 2;
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

struct WgmmaWgradLaunch {
  WgradWgmmaProblem p{};
  int channels = 0, m_tiles = 0;  // (the stage's positions: p.positions)
  int max_pairs = 0;
  bool fits = false;
};

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
  launch.m_tiles = m_tiles_for_rows(m_tiles_for(launch.channels, element_bytes == 2), total_rows,
                                    p.positions, element_bytes);
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

// Floats of one split's partial tiles (every group, tap and channel block): the kernels
// write them, run_parts lays the parts' splits out and sums them by this one count.
int64_t split_floats_of(const WeightGradientPlan& plan, const WgradWgmmaProblem& p, int kN) {
  return plan.groups * plan.geometry.taps() * p.channel_blocks * kN * plan.cout;
}

// One kernel configuration's share of the reduction walk (the whole lines, or a tail
// launch's last positions of every line): its split and its launch on a chunk of
// staged samples, writing `splits` partial tiles from `workspace`.
struct WgradPart {
  int64_t splits = 0;
  std::function<void(int64_t first_sample, int64_t samples, const at::Tensor& staged_output,
                     float* workspace)>
      launch;
};

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

// workspace_floats: this part's share of the workspace bound.
template <int kN, int kMTiles, class Ops, int kPositions>
WgradPart prepare_part(const WeightGradientPlan& plan, const WgradWgmmaProblem& p,
                       const at::Tensor& input, int64_t chunk, int64_t workspace_floats,
                       cudaStream_t stream) {
  using Cfg = WgradWgmmaConfig<kN, kMTiles, Ops, kPositions>;
  using Element = typename Cfg::Element;
  const ConvGeometry& g = plan.geometry;
  const int64_t stages_per_sample = int64_t{p.depth} * p.height * p.width_tiles;
  const int64_t chunks = (g.batch + chunk - 1) / chunk;
  const int64_t split_floats = split_floats_of(plan, p, kN);
  const int64_t blocks_per_split = int64_t{p.row_blocks} * p.channel_blocks * plan.groups;
  const int64_t multiprocessors = multiprocessor_count();
  const int64_t max_splits = std::max<int64_t>(1, workspace_floats / (chunks * split_floats));
  const int64_t total_stages = chunk * stages_per_sample;
  WgradSplit split =
      choose_wgrad_split(total_stages, blocks_per_split, multiprocessors * kWaves, split_floats,
                         chunks, kMinPositions / kPositions, kMaxPositions / kPositions);
  if (split.splits > max_splits) {  // a tail launch's share of the workspace
    split.stages_per_split = (total_stages + max_splits - 1) / max_splits;
    split.splits = (total_stages + split.stages_per_split - 1) / split.stages_per_split;
  }
  // Whole waves (one block fits a multiprocessor; KERNEL_LOG "splits fitted to whole waves").
  // float32 only: "splits fitted to whole waves" was measured there, the half forms keep their
  // measured counts.
  if (!Ops::kHalf) {
    split = fit_wgrad_split_to_waves(split, total_stages, blocks_per_split, multiprocessors,
                                     max_splits, kMinPositions / kPositions);
  }
  auto kernel = weight_gradient_wgmma_kernel<Cfg>;
  const int shared_bytes = p.slots * p.stage_bytes;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
  const dim3 grid(static_cast<unsigned>(split.splits),
                  static_cast<unsigned>(p.row_blocks * p.channel_blocks),
                  static_cast<unsigned>(plan.groups));
  const auto* input_data = static_cast<const Element*>(input.const_data_ptr());
  WgradPart part;
  part.splits = split.splits;
  part.launch = [=](int64_t first_sample, int64_t samples, const at::Tensor& staged_output,
                    float* workspace) {
    WgradWgmmaProblem chunk_problem = p;
    chunk_problem.stages = samples * stages_per_sample;
    chunk_problem.stages_per_split = static_cast<int>(split.stages_per_split);
    kernel<<<grid, Cfg::kThreads, shared_bytes, stream>>>(
        chunk_problem, input_data + first_sample * p.input_sample_stride,
        static_cast<const Element*>(staged_output.const_data_ptr()), workspace);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  return part;
}

// Stages the chunks, launches every part on each (their partial tiles one after the other
// in the workspace) and sums the partial tiles into grad_weight.
void run_parts(const WeightGradientPlan& plan, const WgradWgmmaProblem& p, int kN,
               const std::vector<WgradPart>& parts, int64_t chunk, const at::Tensor& input,
               const at::Tensor& grad_output, at::Tensor& grad_weight, cudaStream_t stream,
               at::Tensor& grad_bias, const StagedChunkHook& after_chunk) {
  const ConvGeometry& g = plan.geometry;
  const int64_t chunks = (g.batch + chunk - 1) / chunk;
  const int64_t split_floats = split_floats_of(plan, p, kN);
  int64_t chunk_splits = 0;
  for (const WgradPart& part : parts) chunk_splits += part.splits;
  const int64_t chunk_floats = chunk_splits * split_floats;
  at::Tensor workspace = at::empty({chunks * chunk_floats}, input.options().dtype(at::kFloat));
  run_wgrad_chunks(
      plan, input, grad_output, grad_bias, stream, false, chunk,
      [&](int64_t c, int64_t first_sample, int64_t samples, const at::Tensor&,
          const at::Tensor& staged_output) {
        float* next = workspace.mutable_data_ptr<float>() + c * chunk_floats;
        for (const WgradPart& part : parts) {
          part.launch(first_sample, samples, staged_output, next);
          next += part.splits * split_floats;
        }
      },
      after_chunk);

  WgradSumShape sum{};
  sum.split_floats = split_floats;
  sum.splits = static_cast<int>(chunks * chunk_splits);
  sum.taps = static_cast<int>(g.taps());
  sum.channel_blocks_m = p.channel_blocks;
  sum.channel_blocks_n = 1;
  sum.block_m = kN;
  sum.block_n = p.output_channels;
  sum.fold = static_cast<int>(plan.fold);
  sum.cin_per_group = static_cast<int>(g.in_channels_per_group());
  sum.cout_per_group = static_cast<int>(g.out_channels_per_group());
  sum_wgrad_splits(sum, workspace, grad_weight, stream);
}

// The configuration for the block's input channels (block_channels_for), m-tiles
// (m_tiles_for, m_tiles_for_rows) and stage positions (stage_positions_for: 16 only for
// float32), and where `tail` is planned (float32), a second launch of 16-position stages
// for the lines' last positions.
template <class Ops>
void launch_for_channels(const WeightGradientPlan& plan, const WgmmaWgradLaunch& launch,
                         const WgmmaWgradLaunch* tail, const at::Tensor& input,
                         const at::Tensor& grad_output, at::Tensor& grad_weight,
                         cudaStream_t stream, at::Tensor& grad_bias,
                         const StagedChunkHook& after_chunk) {
  const int64_t chunk = wgrad_chunk_samples(plan, input, grad_output, false);
  // Two parts share the workspace bound.
  const int64_t share = kWeightGradientWorkspaceFloats / (tail != nullptr ? 2 : 1);
  const auto run = [&](auto channels) {
    constexpr int kN = decltype(channels)::value;
    constexpr int kMTiles = m_tiles_for(kN, Ops::kHalf);
    std::vector<WgradPart> parts;
    // The whole tiles on 32-position stages.
    const auto whole_tiles = [&](auto m_tiles) {
      constexpr int kWholeMTiles = decltype(m_tiles)::value;
      return prepare_part<kN, kWholeMTiles, Ops, kWgradTilePositions>(plan, launch.p, input, chunk,
                                                                      share, stream);
    };
    // The lines' whole tiles (all of them where there is no tail launch).
    if constexpr (!Ops::kHalf) {
      if (launch.p.positions == kWgradShortTilePositions) {
        parts.push_back(prepare_part<kN, kMTiles, Ops, kWgradShortTilePositions>(
            plan, launch.p, input, chunk, share, stream));
      } else if constexpr (kMTiles == 3) {
        if (launch.m_tiles == 2) {  // m_tiles_for_rows
          parts.push_back(whole_tiles(std::integral_constant<int, 2>{}));
        }
      }
    }
    if (parts.empty()) parts.push_back(whole_tiles(std::integral_constant<int, kMTiles>{}));
    // The lines' last positions.
    if constexpr (!Ops::kHalf) {
      if (tail != nullptr) {
        parts.push_back(prepare_part<kN, kMTiles, Ops, kWgradShortTilePositions>(
            plan, tail->p, input, chunk, share, stream));
      }
    }
    run_parts(plan, launch.p, kN, parts, chunk, input, grad_output, grad_weight, stream, grad_bias,
              after_chunk);
  };
  switch (launch.channels) {
    case 16:
      run(std::integral_constant<int, 16>{});
      break;
    case 24:
      run(std::integral_constant<int, 24>{});
      break;
    case 32:
      run(std::integral_constant<int, 32>{});
      break;
    case 48:
      run(std::integral_constant<int, 48>{});
      break;
    default:
      run(std::integral_constant<int, 64>{});
      break;
  }
}

}  // namespace

bool sharing_staged_output_pays(const WeightGradientPlan& plan) {
  // Groups are never staged at the pitch; elsewhere (mma.sync) it was not measured.
  if (!wgmma_enabled() || plan.groups > 1) return true;
  // Measured in one process, the all-gradients call with the copy shared against each
  // its own: 4-10 % faster shared on strided layers of 32-48 input channels (L1-73,
  // L1-77, N-32-16-k3-s2); on stride-1 layers of 16-48 channels level or slower (L1-58
  // 5 %); 7-48 % slower at 64 and more (N-64-*, the wide layers).
  const ConvGeometry& g = plan.geometry;
  const bool strided = g.dim[0].stride > 1 || g.dim[1].stride > 1 || g.dim[2].stride > 1;
  return strided && block_channels_for(plan.cin) < 64;
}

bool launch_wgmma_weight_gradient(const WeightGradientPlan& plan, const at::Tensor& input,
                                  const at::Tensor& grad_output, at::Tensor& grad_weight,
                                  cudaStream_t stream, at::Tensor& grad_bias,
                                  const StagedChunkHook& after_chunk) {
  const FormChoice choice = form_choice(FormSwitch::kWgradWgmma);
  if (choice == FormChoice::kNever || !wgmma_enabled()) return false;
  const at::ScalarType dtype = input.scalar_type();
  const bool half = dtype == at::kHalf || dtype == at::kBFloat16;
  const int element_bytes = half ? 2 : 4;
  // 16-byte loads of an input line's positions (4 float32 or 8 half values).
  const ConvGeometry& g = plan.geometry;
  if (g.dim[2].input % (16 / element_bytes) != 0 ||
      reinterpret_cast<uintptr_t>(input.const_data_ptr()) % 16 != 0) {
    return false;
  }
  // The half form's ldmatrix reads 8 rows of one tap's output channels at once, the
  // float32 form's 8-byte loads 2.
  if (plan.cout % (half ? 8 : 2) != 0) return false;
  // grad_output staged at the segments' pitch where they are copied whole (one group;
  // float32 only where no input gradient reads the staged copy in its own layout).
  WeightGradientPlan staged_plan = plan;
  int64_t bulk_pitch = 0;
  if (plan.groups == 1 && (half || !after_chunk)) {
    bulk_pitch = half ? bulk_staging_pitch(plan.cout, g.dim[2].stride)
                      : float32_bulk_staging_pitch(plan.cout, g.dim[2].stride);
    if (bulk_pitch > 0) staged_plan.output.padded_channels_per_group = bulk_pitch;
  }
  const int positions = stage_positions_for(g.dim[2].input, element_bytes);
  WgmmaWgradLaunch launch =
      plan_wgmma_launch(staged_plan, element_bytes, bulk_pitch > 0, positions);
  // Stages of 16 positions hold about half the segment rows: where those of 32 leave
  // fewer than kMinSlots slots (strided layers of many output channels), 16 may fit.
  if (!launch.fits && element_bytes == 4 && positions == kWgradTilePositions &&
      form_choice(FormSwitch::kWgradPositions32) == FormChoice::kRule) {
    launch =
        plan_wgmma_launch(staged_plan, element_bytes, bulk_pitch > 0, kWgradShortTilePositions);
  }
  if (!launch.fits ||
      (choice != FormChoice::kAlways && !wgmma_weight_gradient_pays(launch.p, half))) {
    return false;
  }
  WgmmaWgradLaunch tail;
  const bool with_tail = !half && plan_tail_launch(staged_plan, bulk_pitch > 0, launch, tail);
  const auto run = [&](auto operands) {
    launch_for_channels<decltype(operands)>(staged_plan, launch, with_tail ? &tail : nullptr, input,
                                            grad_output, grad_weight, stream, grad_bias,
                                            after_chunk);
  };
  if (dtype == at::kHalf) {
    run(WgradHalfOperands<__half>{});
  } else if (dtype == at::kBFloat16) {
    run(WgradHalfOperands<__nv_bfloat16>{});
  } else if (plan.operands_exact_in_tf32) {
    run(WgradTf32Operands<true>{});
  } else {
    run(WgradTf32Operands<false>{});
  }
  return true;
}

}  // namespace ct3d::cuda
