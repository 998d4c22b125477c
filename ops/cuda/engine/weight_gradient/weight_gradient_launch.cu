// Host side of the weight gradient: folds small groups and plans the staged layouts
// (plan_weight_gradient), and launches the planned mainloop: mma.sync here (both
// operands staged channels-last, the split GEMM over the planned split of the reduction
// and the ordered sum of its partial tiles), wgmma in weight_gradient_wgmma_launch.cu.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <limits>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/problem/group_fold.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_kernel.cuh"
#include "ops/cuda/engine/weight_gradient/weight_gradient_splits.h"

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxGrid = 65535;

// Input channels a block covers: 16 per m-tile, up to 64 (4 m-tiles).
int64_t padded_input_channels(int64_t channels) {
  return channels > 64 ? round_up(channels, 64) : round_up(channels, 16);
}
// Output channels a block covers: 16 (one warp of 2 n-tiles), 32 (one warp of 4)
// or 64 (two warps of 4).
int64_t padded_output_channels(int64_t channels) {
  return channels <= 16 ? 16 : channels <= 32 ? 32 : round_up(channels, 64);
}

// Groups folded per GEMM group (group_fold.h): the fewest multiply-adds in padded
// tiles. The off-diagonal blocks of a folded tile are computed and dropped.
int64_t group_fold(int64_t groups, int64_t cin_g, int64_t cout_g) {
  return best_group_fold(groups, cin_g, cout_g, [&](int64_t f) {
    return groups / f * padded_input_channels(f * cin_g) * padded_output_channels(f * cout_g);
  });
}

}  // namespace

WeightGradientPlan plan_weight_gradient(const ConvGeometry& g) {
  WeightGradientPlan plan;
  plan.geometry = g;
  plan.fold = group_fold(g.groups, g.in_channels_per_group(), g.out_channels_per_group());
  plan.groups = g.groups / plan.fold;
  plan.cin = plan.fold * g.in_channels_per_group();
  plan.cout = plan.fold * g.out_channels_per_group();
  plan.input.groups = plan.output.groups = plan.groups;
  plan.input.channels_per_group = plan.cin;
  plan.input.padded_channels_per_group = padded_input_channels(plan.cin);
  plan.output.channels_per_group = plan.cout;
  plan.output.padded_channels_per_group = padded_output_channels(plan.cout);
  plan.staging_floats = backward_staging_budget(g.input_elements() + g.output_elements());
  for (int i = 0; i < kSpatialDims; ++i) {
    const DimGeometry& d = g.dim[i];
    plan.input.extent[i] = plan.input.staged_extent[i] = d.input;
    // grad_output rows of every tap of every input index: output_index(0, 0) is
    // the lowest, output_index(input - 1, kernel - 1) the highest.
    const int64_t low = std::max<int64_t>(0, -d.output_index(0, 0));
    const int64_t high =
        std::max<int64_t>(0, d.output_index(d.input - 1, d.kernel - 1) - (d.output - 1));
    plan.output.extent[i] = d.output;
    plan.output.halo_low[i] = low;
    plan.output.staged_extent[i] = d.output + low + high;
  }
  return plan;
}

void run_wgrad_chunks(const WeightGradientPlan& plan, const at::Tensor& input,
                      const at::Tensor& grad_output, at::Tensor& grad_bias, cudaStream_t stream,
                      bool stage_input, int64_t chunk_samples, const WgradChunkLaunch& launch,
                      const StagedChunkHook& after_chunk) {
  const int64_t batch = plan.geometry.batch;
  // One tile size for the partial sums' rows and the staging that writes them.
  const int tile_positions = staging_tile_positions(grad_output.scalar_type(), plan.output);
  const int64_t tiles_per_sample = staging_position_tiles(plan.output, tile_positions);
  // The bias gradient's partial sums, one row per sample and staging tile.
  at::Tensor bias_partials;
  if (grad_bias.defined()) {
    bias_partials = at::empty({batch * tiles_per_sample * plan.output.padded_channels()},
                              input.options().dtype(at::kDouble));
  }
  const int64_t chunks = (batch + chunk_samples - 1) / chunk_samples;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t n0 = c * chunk_samples, samples = std::min(chunk_samples, batch - n0);
    const at::Tensor staged_input =
        stage_input ? stage_channels_last(plan.input, input.narrow(0, n0, samples), nullptr, stream)
                    : at::Tensor();
    double* chunk_partials = grad_bias.defined()
                                 ? bias_partials.mutable_data_ptr<double>() +
                                       n0 * tiles_per_sample * plan.output.padded_channels()
                                 : nullptr;
    const at::Tensor staged_output =
        stage_channels_last(plan.output, grad_output.narrow(0, n0, samples), nullptr, stream,
                            chunk_partials, tile_positions);
    launch(c, n0, samples, staged_input, staged_output);
    if (after_chunk) after_chunk(n0, samples, staged_output);
  }
  if (grad_bias.defined()) {
    sum_channel_partials(plan.output, bias_partials.const_data_ptr<double>(), batch, tile_positions,
                         grad_bias, stream);
  }
}

void sum_wgrad_splits(const WgradSumShape& shape, const at::Tensor& workspace,
                      at::Tensor& grad_weight, cudaStream_t stream) {
  constexpr int kSumThreads = 256;
  const int64_t sum_blocks =
      std::min<int64_t>((shape.split_floats + kSumThreads - 1) / kSumThreads, 65535);
  sum_weight_gradient_splits_kernel<<<sum_blocks, kSumThreads, 0, stream>>>(
      shape, workspace.const_data_ptr<float>(), grad_weight.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

namespace {

template <class Cfg>
void launch_split_gemm(const WeightGradientPlan& plan, int64_t chunk, const WgradSplit& split,
                       const at::Tensor& input, const at::Tensor& grad_output,
                       at::Tensor& grad_weight, cudaStream_t stream, at::Tensor& grad_bias,
                       const StagedChunkHook& after_chunk) {
  const ConvGeometry& g = plan.geometry;
  WgradProblem p{};
  p.positions_per_sample = static_cast<int>(g.input_positions());
  p.per_sample = FastDivider(static_cast<uint32_t>(g.input_positions()));
  p.width = FastDivider(static_cast<uint32_t>(g.dim[2].input));
  p.height = FastDivider(static_cast<uint32_t>(g.dim[1].input));
  p.input_padded = static_cast<int>(plan.input.padded_channels_per_group);
  p.input_position_stride = plan.input.padded_channels();
  p.output_padded = static_cast<int>(plan.output.padded_channels_per_group);
  int64_t index_stride = plan.output.padded_channels();
  p.tap_origin = 0;
  for (int i = kSpatialDims - 1; i >= 0; --i) {
    const DimGeometry& d = g.dim[i];
    p.output_row_stride[i] = d.stride * index_stride;
    p.tap_stride[i] = d.dilation * index_stride;
    p.tap_origin += d.output_index(0, 0) * index_stride + plan.output.halo_low[i] * index_stride;
    p.kernel[i] = static_cast<int>(d.kernel);
    index_stride *= plan.output.staged_extent[i];
  }
  p.output_batch_stride = index_stride;
  p.taps = static_cast<int>(g.taps());
  p.channel_blocks_m = static_cast<int>(plan.input.padded_channels_per_group / Cfg::kBlockM);
  p.channel_blocks_n = static_cast<int>(plan.output.padded_channels_per_group / Cfg::kBlockN);
  p.groups = static_cast<int>(plan.groups);

  // Staged a chunk of samples at a time; every chunk has the same splits (as planned:
  // plan_mma_wgrad_split), each writing its own partial tiles.
  const int64_t chunks = (g.batch + chunk - 1) / chunk;
  p.positions = chunk * g.input_positions();
  p.total_stages = (p.positions + kWgradStagePositions - 1) / kWgradStagePositions;
  TORCH_INTERNAL_ASSERT(split.splits * split.stages_per_split >= p.total_stages,
                        "launch_split_gemm: a split planned for other stages");
  const int64_t tiles = plan.groups * p.taps * p.channel_blocks_m * p.channel_blocks_n;
  p.stages_per_split = static_cast<int>(split.stages_per_split);
  const int64_t chunk_floats = split.splits * tiles * Cfg::kTileFloats;
  at::Tensor workspace = at::empty({chunks * chunk_floats}, input.options());

  auto kernel = weight_gradient_kernel<Cfg>;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
  const dim3 grid(static_cast<unsigned>(split.splits),
                  static_cast<unsigned>(p.taps * p.channel_blocks_m * p.channel_blocks_n),
                  static_cast<unsigned>(plan.groups));
  run_wgrad_chunks(
      plan, input, grad_output, grad_bias, stream, true, chunk,
      [&](int64_t c, int64_t, int64_t samples, const at::Tensor& staged_input,
          const at::Tensor& staged_output) {
        WgradProblem chunk_problem = p;
        chunk_problem.positions = samples * g.input_positions();
        chunk_problem.total_stages =
            (chunk_problem.positions + kWgradStagePositions - 1) / kWgradStagePositions;
        kernel<<<grid, Cfg::kThreads, Cfg::kSharedBytes, stream>>>(
            chunk_problem, staged_input.const_data_ptr<float>(),
            staged_output.const_data_ptr<float>(),
            workspace.mutable_data_ptr<float>() + c * chunk_floats);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      },
      after_chunk);

  WgradSumShape sum{};
  sum.split_floats = tiles * Cfg::kTileFloats;
  sum.splits = static_cast<int>(chunks * split.splits);
  sum.taps = p.taps;
  sum.channel_blocks_m = p.channel_blocks_m;
  sum.channel_blocks_n = p.channel_blocks_n;
  sum.block_m = Cfg::kBlockM;
  sum.block_n = Cfg::kBlockN;
  sum.fold = static_cast<int>(plan.fold);
  sum.cin_per_group = static_cast<int>(g.in_channels_per_group());
  sum.cout_per_group = static_cast<int>(g.out_channels_per_group());
  sum_wgrad_splits(sum, workspace, grad_weight, stream);
}

// Calls launch_split_gemm with the configuration whose block covers the plan's
// padded channels: m-tiles along the input channels, warps of n-tiles along the
// output channels.
template <int kMTiles>
void launch_for_m_tiles(const WgradMainloopPlan& mainloop, const at::Tensor& input,
                        const at::Tensor& grad_output, at::Tensor& grad_weight, cudaStream_t stream,
                        at::Tensor& grad_bias, const StagedChunkHook& after_chunk) {
  using Cfg16 = WgradConfig<kMTiles, 2, 1>;
  using Cfg32 = WgradConfig<kMTiles, 4, 1>;
  using Cfg64 = WgradConfig<kMTiles, 4, 2>;
  // The blocks the planner's split counted (weight_gradient_split.h).
  static_assert(Cfg16::kBlockN == mma_wgrad_block_n(16) && Cfg16::kWarpsN == mma_wgrad_warps_n(16));
  static_assert(Cfg32::kBlockN == mma_wgrad_block_n(32) && Cfg32::kWarpsN == mma_wgrad_warps_n(32));
  static_assert(Cfg64::kBlockN == mma_wgrad_block_n(64) && Cfg64::kWarpsN == mma_wgrad_warps_n(64));
  static_assert(Cfg16::kBlockM == 16 * kMTiles && Cfg64::kBlockM == 16 * kMTiles);
  const WeightGradientPlan& plan = mainloop.staged;
  const int64_t chunk = mainloop.chunk_samples;
  const WgradSplit& split = mainloop.mma_split;
  const int64_t n = plan.output.padded_channels_per_group;
  if (n == 16) {
    launch_split_gemm<Cfg16>(plan, chunk, split, input, grad_output, grad_weight, stream,
                             grad_bias, after_chunk);
  } else if (n == 32) {
    launch_split_gemm<Cfg32>(plan, chunk, split, input, grad_output, grad_weight, stream,
                             grad_bias, after_chunk);
  } else {
    launch_split_gemm<Cfg64>(plan, chunk, split, input, grad_output, grad_weight, stream,
                             grad_bias, after_chunk);
  }
}

}  // namespace

bool weight_gradient_fits(const WeightGradientPlan& plan) {
  const ConvGeometry& g = plan.geometry;
  if (g.batch * g.input_positions() == 0) return false;
  const int64_t channel_blocks = plan.input.padded_channels_per_group /
                                 std::min<int64_t>(64, plan.input.padded_channels_per_group) *
                                 (plan.output.padded_channels_per_group /
                                  std::min<int64_t>(64, plan.output.padded_channels_per_group));
  const int64_t staged_positions = plan.output.staged_positions();
  // The halo of the staged grad_output: allowed up to 4x its positions, or any
  // size up to 2^26 floats per sample (as the forward's staging).
  const bool halo_affordable =
      staged_positions <= 4 * g.output_positions() ||
      staged_positions * plan.output.padded_channels() <= (int64_t{1} << 26);
  return halo_affordable && staged_positions < kMaxInt && g.input_positions() < kMaxInt - 64 &&
         plan.input.padded_channels() < kMaxStagedChannels &&
         plan.output.padded_channels() < kMaxStagedChannels && plan.groups <= kMaxGrid &&
         g.taps() * channel_blocks <= kMaxGrid && plan.cin < kMaxInt / 2 && plan.cout < kMaxInt / 2;
}

WgradOperands wgrad_operands_of(const at::Tensor& input, bool shares_staged_output) {
  WgradOperands operands;
  operands.element_bytes = static_cast<int>(input.element_size());
  operands.shares_staged_output = shares_staged_output;
  if (input.is_contiguous()) {
    operands.input_aligned = input.is_meta()
                                 ? input.storage_offset() * input.element_size() % 16 == 0
                                 : reinterpret_cast<uintptr_t>(input.const_data_ptr()) % 16 == 0;
  }
  return operands;
}

void launch_weight_gradient(const WgradMainloopPlan& plan, const at::Tensor& input,
                            const at::Tensor& grad_output, at::Tensor& grad_weight,
                            cudaStream_t stream, at::Tensor grad_bias,
                            const StagedChunkHook& after_chunk) {
  switch (plan.form) {
    case WgradForm::kWgmma:
      launch_wgmma_weight_gradient(plan, input, grad_output, grad_weight, stream, grad_bias,
                                   after_chunk);
      return;
    case WgradForm::kWidened:
      TORCH_INTERNAL_ASSERT(false, "a widened weight gradient has no mainloop of its own");
    case WgradForm::kMmaSync:
      break;
  }
  TORCH_INTERNAL_ASSERT(input.scalar_type() == at::kFloat && plan.chunk_samples >= 1);
  switch (plan.mma_m_tiles) {
    case 1:
      launch_for_m_tiles<1>(plan, input, grad_output, grad_weight, stream, grad_bias,
                            after_chunk);
      break;
    case 2:
      launch_for_m_tiles<2>(plan, input, grad_output, grad_weight, stream, grad_bias,
                            after_chunk);
      break;
    case 3:
      launch_for_m_tiles<3>(plan, input, grad_output, grad_weight, stream, grad_bias,
                            after_chunk);
      break;
    default:
      launch_for_m_tiles<4>(plan, input, grad_output, grad_weight, stream, grad_bias,
                            after_chunk);
      break;
  }
}

}  // namespace ct3d::cuda
