// Host side of the gathering implicit GEMM: picks a tile configuration and the
// group fold, then stages the source channels-last, packs the weights and launches
// one kernel for all phases on the given stream (the problem itself:
// implicit_gemm_problem.cpp).
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <limits>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/gather/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_reuse_kernel.cuh"
#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/problem/group_fold.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/staging/weight_packing.cuh"
#include "ops/cuda/engine/staging/weight_packing.h"
#include "ops/cuda/engine/strided_lines/strided_lines.h"
#include "ops/cuda/engine/window/shifted_window.h"
#include "ops/cuda/engine/window/tap_rows.h"
#include "ops/options/form_choice.h"

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxShift = 32767;
// cp.async pipeline depth of every configuration: 4 stages measured 1-2 % slower
// on 61 and 68 (more shared memory per block, same blocks per SM).
constexpr int kStages = 3;

// 16-channel tiles a block covers: all of a group's output channels up to 64, so
// the input gathered into shared memory is used by every channel it feeds. Wider
// groups take several blocks of 64.
int channel_tiles_for(int64_t cout_per_group) {
  return static_cast<int>(std::min<int64_t>((cout_per_group + 15) / 16, 4));
}

// Groups folded per GEMM group: the fewest 16 x 16 mma tiles in all.
int group_fold(int64_t groups, int64_t cin_g, int64_t cout_g) {
  return static_cast<int>(best_group_fold(groups, cin_g, cout_g, [&](int64_t f) {
    return groups / f * ((f * cin_g + 15) / 16) * ((f * cout_g + 15) / 16);
  }));
}

template <class Cfg>
auto phase_kernel_of() {
  if constexpr (Cfg::kPackWgmmaChannels > 0) {
    return wgmma_phase_kernel<Cfg>;
  } else {
    return implicit_gemm_phase_kernel<Cfg>;
  }
}

constexpr int64_t kWgmmaMinChannels = 32;

// The wgmma block's channels (wgmma N) for a folded group's output channels: the
// smallest shape that holds them, or blocks of 128.
int wgmma_channels_for(int64_t cout) {
  for (const int n : {48, 64, 96}) {
    if (cout <= n) return n;
  }
  return 128;
}

// Where the reuse mainloop beat the others (docs/KERNEL_LOG.md, w3): blocks
// of 32 to 64 channels, at least 3 width taps in every phase, groups not folded.
bool width_reuse_pays(const PhaseProblem& p, int channels, int fold) {
  const DimParams& width = p.dim[2];
  for (int a = 0; a < width.active_residues; ++a) {
    if (width.residue[width.active_residue[a]].taps < 3) return false;
  }
  return channels >= 32 && channels <= 64 && fold == 1;
}

// The reuse block's channels: the smallest wgmma N that holds them, or blocks of 128.
int wgmma_reuse_channels_for(int64_t cout) {
  for (const int n : {16, 24, 32, 48, 64, 96}) {
    if (cout <= n) return n;
  }
  return 128;
}

// problem: the GEMM with its groups folded `fold` at a time (see group_fold); p: its
// launch form for Cfg's block channels. staged: the whole source already staged
// (launch_implicit_gemm), or undefined. reuse: the width-tap reuse plan
// (WgmmaReuseConfig only).
template <class Cfg>
void launch_all_phases(const GatherProblem& problem, const PhaseProblem& p, int fold,
                       int* nonfinite, const at::Tensor& source, const at::Tensor& weight,
                       const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                       int64_t staging_budget_floats, const at::Tensor& staged,
                       const WidthReusePlan& reuse) {
  const int64_t groups = problem.groups;

  // Outputs no tap reaches are the bias alone: filled first by a plain elementwise
  // pass, then the GEMM runs over the phases that have taps only.
  if (p.uncovered_outputs) fill_uncovered_outputs(bias, output);

  // The weights are packed and the source staged on every call (both may change
  // between calls): memory-bound copies, a few percent of the convolution. The pack
  // runs first: it also clears the non-finite flag that staging may set.
  const at::Tensor packed = pack_weights(problem, p, fold, Cfg::kPackPositionsOnM,
                                         Cfg::kPackWgmmaChannels, nonfinite, weight, stream);

  if (p.phases == 0) return;

  // Launches the kernel on one staged chunk.
  auto run = [&](const dim3& grid, const PhaseProblem& chunk_problem, const float* chunk_staged,
                 float* chunk_output) {
    const float* packed_data = packed.const_data_ptr<float>();
    const float* bias_data = bias.defined() ? bias.const_data_ptr<float>() : nullptr;
    if constexpr (Cfg::kWidthReuse) {
      const int shared_bytes = std::max(reuse.slots * reuse.stage_bytes, Cfg::kEpilogueBytes);
      auto kernel = wgmma_reuse_phase_kernel<Cfg>;
      C10_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
      kernel<<<grid, Cfg::kThreads, shared_bytes, stream>>>(chunk_problem, reuse, chunk_staged,
                                                            packed_data, bias_data, chunk_output);
    } else {
      auto kernel = phase_kernel_of<Cfg>();
      C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          Cfg::kSharedBytes));
      kernel<<<grid, Cfg::kThreads, Cfg::kSharedBytes, stream>>>(
          chunk_problem, chunk_staged, packed_data, bias_data, chunk_output);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  // Staged and multiplied a chunk of samples at a time (staging_chunk_samples).
  const int64_t batch = output.size(0);
  const int64_t chunk =
      staged.defined() ? batch
                       : staging_chunk_samples(p.staged_batch_stride, staging_budget_floats, batch);
  TORCH_INTERNAL_ASSERT(!staged.defined() || staged.numel() == batch * p.staged_batch_stride);
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    const int64_t samples = std::min(chunk, batch - n0);
    const at::Tensor chunk_staged =
        staged.defined() ? staged
                         : stage_channels_last(gather_staged_layout(problem),
                                               source.narrow(0, n0, samples), nonfinite, stream);
    PhaseProblem chunk_problem = p;
    chunk_problem.rows = samples * p.positions_per_sample;
    const int64_t row_tiles =
        (chunk_problem.rows + Cfg::kBlockPositions - 1) / Cfg::kBlockPositions;
    const dim3 grid(static_cast<unsigned>(row_tiles * p.phases),
                    static_cast<unsigned>(p.cout_padded / Cfg::kBlockChannels),
                    static_cast<unsigned>(groups));
    run(grid, chunk_problem, chunk_staged.const_data_ptr<float>(),
        output.mutable_data_ptr<float>() + n0 * p.output_batch_stride);
  }
}

// Picks the tile configuration for the folded problem's channels and launches it
// (launch_all_phases). kExact: the operands are exact in TF32 (one product each).
template <bool kExact>
void launch_configuration(const GatherProblem& folded, int fold, int* flag,
                          const at::Tensor& source, const at::Tensor& weight,
                          const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                          int64_t staging_budget_floats, const at::Tensor& staged) {
  // Launches the configuration given by the type of its (empty) argument.
  const auto launch = [&](auto config) {
    using Cfg = decltype(config);
    launch_all_phases<Cfg>(folded, make_phase_problem(folded, kBlockK, Cfg::kBlockChannels, output),
                           fold, flag, source, weight, bias, output, stream, staging_budget_floats,
                           staged, WidthReusePlan{});
  };
  // Width-tap reuse (wgmma_reuse_kernel.cuh) where it paid (width_reuse_pays).
  const FormChoice reuse_choice = form_choice(FormSwitch::kWidthReuse);
  // Launches a width-tap reuse configuration where its plan applies and (unless
  // forced) it pays; returns whether it did.
  const auto try_reuse = [&](auto config) {
    using Cfg = decltype(config);
    const PhaseProblem p = make_phase_problem(folded, kBlockK, Cfg::kBlockChannels, output);
    const WidthReusePlan plan =
        plan_width_reuse(p, Cfg::kBlockPositions, Cfg::kBlockChannels, Cfg::kMaxTileRows);
    if (plan.taps_per_stage == 0 ||
        (reuse_choice != FormChoice::kAlways && !width_reuse_pays(p, Cfg::kBlockChannels, fold))) {
      return false;
    }
    launch_all_phases<Cfg>(folded, p, fold, flag, source, weight, bias, output, stream,
                           staging_budget_floats, staged, plan);
    return true;
  };
  const int64_t cout = folded.target_channels;
  if (wgmma_enabled() && reuse_choice != FormChoice::kNever) {
    // Two m-tiles per warpgroup where the registers allow: twice the rows per
    // weight tile copied (w5: one m-tile for 64 channels was 12 % slower on 68).
    bool launched = false;
    switch (wgmma_reuse_channels_for(cout)) {
      case 16:
        launched = try_reuse(WgmmaReuseConfig<16, 2, kExact>{});
        break;
      case 24:
        launched = try_reuse(WgmmaReuseConfig<24, 2, kExact>{});
        break;
      case 32:
        launched = try_reuse(WgmmaReuseConfig<32, 2, kExact>{});
        break;
      case 48:
        launched = try_reuse(WgmmaReuseConfig<48, 2, kExact>{});
        break;
      case 64:
        launched = try_reuse(WgmmaReuseConfig<64, 2, kExact>{});
        break;
      case 96:
        launched = try_reuse(WgmmaReuseConfig<96, 1, kExact>{});
        break;
      default:
        launched = try_reuse(WgmmaReuseConfig<128, 1, kExact>{});
        break;
    }
    if (launched) return;
  }
  // The wgmma mainloop for more than 32 channels per block. Narrower blocks do too
  // little math per gathered row for it to pay (w2, 2026-12-01: 58 (16 channels)
  // 1.59 -> 2.20 ms, 73 (32) 1.49 -> 1.96; but 68 (64) 20.9 -> 15.3, 61 (48)
  // 4.45 -> 4.11): there the input gather, not the tensor core, is the limit.
  if (wgmma_enabled() && cout > kWgmmaMinChannels) {
    // One m-tile per warpgroup and two chunks per stage (registers: accumulators +
    // two sets of fragments).
    switch (wgmma_channels_for(cout)) {
      case 48:
        launch(WgmmaConfig<48, 1, 2, kExact>{});
        break;
      case 64:
        launch(WgmmaConfig<64, 1, 2, kExact>{});
        break;
      case 96:
        launch(WgmmaConfig<96, 1, 2, kExact>{});
        break;
      default:
        launch(WgmmaConfig<128, 1, 2, kExact>{});
        break;
    }
  } else if (cout > 16 && cout <= 24) {
    // Positions on M and three 8-channel tiles: no padding to 32 channels.
    launch(TileConfig<4, PositionsOnM<4, 3, kExact>, kStages>{});
  } else {
    switch (channel_tiles_for(cout)) {
      case 1:
        launch(TileConfig<4, ChannelsOnM<1, 8, kExact>, kStages>{});
        break;
      case 2:
        launch(TileConfig<4, ChannelsOnM<2, 8, kExact>, kStages>{});
        break;
      case 3:
        launch(TileConfig<4, ChannelsOnM<3, 4, kExact>, kStages>{});
        break;
      default:
        launch(TileConfig<4, ChannelsOnM<4, 4, kExact>, kStages>{});
        break;
    }
  }
}

}  // namespace

at::Tensor pack_weights(const GatherProblem& problem, const PhaseProblem& p, int fold,
                        bool positions_on_m, int wgmma_n, int* nonfinite, const at::Tensor& weight,
                        cudaStream_t stream) {
  const int64_t packed_elements = problem.groups * p.packed_group_stride;
  at::Tensor packed = at::empty({packed_elements}, weight.options());
  constexpr int kPackThreads = 256;
  const int64_t pack_blocks =
      std::min<int64_t>((packed_elements + kPackThreads - 1) / kPackThreads, 4096);
  pack_weight_fragments_kernel<<<pack_blocks, kPackThreads, 0, stream>>>(
      weight.const_data_ptr<float>(), problem.weight, packed.mutable_data_ptr<float>(),
      packed_elements, p.cin_per_group / fold, p.cout_per_group / fold, fold, p.cin_padded,
      p.cout_padded, static_cast<int>(problem.taps()), positions_on_m, wgmma_n, nonfinite);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return packed;
}

void fill_uncovered_outputs(const at::Tensor& bias, at::Tensor& output) {
  if (bias.defined()) {
    output.copy_(bias.view({1, -1, 1, 1, 1}).expand_as(output));
  } else {
    output.zero_();
  }
}

StagedLayout gather_staged_layout(const GatherProblem& problem) {
  StagedLayout layout;
  layout.groups = problem.groups;
  layout.channels_per_group = problem.reduce_channels;
  layout.padded_channels_per_group = round_up(problem.reduce_channels, kBlockK);
  for (int i = 0; i < kSpatialDims; ++i) {
    const GatherDim& dim = problem.dim[i];
    layout.extent[i] = dim.source_extent;
    layout.halo_low[i] = dim.halo.low;
    layout.staged_extent[i] = dim.source_extent + dim.halo.low + dim.halo.high;
  }
  return layout;
}

bool implicit_gemm_supports(const GatherProblem& problem, at::ScalarType dtype) {
  if (dtype != at::kFloat) return false;
  // mma.sync TF32 and cp.async: sm_80 and newer, with this library's code for it.
  if (device_capability() < kTensorCoreCapability ||
      !has_kernel_image(reinterpret_cast<const void*>(&pack_weight_fragments_kernel))) {
    return false;
  }
  int64_t positions_per_sample = 1;
  int64_t phases = 1;
  int64_t staged_positions = 1;
  int64_t source_positions = 1;
  for (int i = 0; i < kSpatialDims; ++i) {
    const GatherDim& dim = problem.dim[i];
    // One launch covers kMaxResidues residues per dimension; positions, shifts and
    // in-sample row numbers are 32-bit. Tensor offsets are 64-bit throughout.
    if (static_cast<int64_t>(dim.phases.size()) > kMaxResidues) return false;
    if (dim.source_extent > kMaxShift || dim.target_extent > kMaxShift) return false;
    for (const PhaseDimPlan& plan : dim.phases) {
      for (const int64_t shift : plan.input_shift) {
        if (shift > kMaxShift || shift < -kMaxShift) return false;
      }
    }
    const StagedExtent& halo = dim.halo;
    staged_positions *= dim.source_extent + halo.low + halo.high;
    source_positions *= dim.source_extent;
    positions_per_sample *= dim.phases[0].positions;
    phases *= static_cast<int64_t>(dim.phases.size());
  }
  const int64_t cout_g = problem.target_channels;
  const int64_t channel_tiles = channel_tiles_for(cout_g);
  const int64_t column_blocks = (cout_g + 16 * channel_tiles - 1) / (16 * channel_tiles);
  const int64_t rows = problem.batch * positions_per_sample;
  const int64_t padded_channels = problem.groups * round_up(problem.reduce_channels, kBlockK);
  // The halo costs memory in proportion to the staged source: allowed up to 4x the
  // source's positions, or any size up to 2^26 floats (256 MB) per sample.
  const bool halo_affordable = staged_positions <= 4 * source_positions ||
                               staged_positions * padded_channels <= (int64_t{1} << 26);
  // The staging pass's grid: 64 staged positions x 64 channels per block.
  return halo_affordable && staged_positions < kMaxInt && padded_channels < kMaxStagedChannels &&
         positions_per_sample < kMaxInt / 2 && rows / 64 * phases < kMaxInt &&
         problem.groups <= kMaxGridY && column_blocks <= kMaxGridY &&
         problem.reduce_channels < kMaxInt / 2 && cout_g < kMaxInt / 2;
}

void launch_implicit_gemm(const GatherProblem& problem, const at::Tensor& source,
                          const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                          cudaStream_t stream, int64_t staging_budget_floats,
                          const ExactRerun& exact_rerun, const at::Tensor& staged) {
  // Warp tiles: the group's 16-channel tiles x 8 position tiles (4 where 3 or 4
  // channel tiles would leave too few registers for 3 blocks per multiprocessor),
  // or positions on M for 17-24 channels. Measured slower (docs/KERNEL_LOG.md):
  // blocks of 8 warps (10-45 %), 2 x 2 warps splitting 64 channels (68: +5 %);
  // positions on M for 16 channels and 4 blocks per SM for them changed nothing.
  // Folding needs the exact rerun, which writes contiguous outputs only.
  const int fold =
      exact_rerun && output.is_contiguous() && !staged.defined()
          ? group_fold(problem.groups, problem.reduce_channels, problem.target_channels)
          : 1;
  GatherProblem folded = problem;
  folded.groups = problem.groups / fold;
  folded.reduce_channels = problem.reduce_channels * fold;
  folded.target_channels = problem.target_channels * fold;
  // Width stride 2 with few target channels: the strided-lines form. Stride-1 problems
  // with wide blocks: the shifted-window GEMM; with narrow ones its tap-rows form (both
  // stage their own split copy of the source).
  if (!staged.defined() && (launch_strided_lines(folded, fold, source, weight, bias, output,
                                                 stream) ||
                            launch_shifted_window(folded, fold, source, weight, bias, output,
                                                  stream, staging_budget_floats) ||
                            launch_tap_rows(folded, fold, source, weight, bias, output, stream,
                                            staging_budget_floats))) {
    return;
  }
  // With folded groups, a NaN or Inf source value times a structural zero weight
  // would leak into other groups' outputs. The staging pass flags non-finite
  // values, and the exact rerun, queued behind the GEMM, recomputes the output
  // when the flag is set (and returns at once when it is not: ~10 us).
  at::Tensor nonfinite;
  if (fold > 1) nonfinite = at::empty({1}, source.options().dtype(at::kInt));
  int* flag = fold > 1 ? nonfinite.mutable_data_ptr<int>() : nullptr;
  if (problem.operands_exact_in_tf32) {
    launch_configuration<true>(folded, fold, flag, source, weight, bias, output, stream,
                               staging_budget_floats, staged);
  } else {
    launch_configuration<false>(folded, fold, flag, source, weight, bias, output, stream,
                                staging_budget_floats, staged);
  }
  if (fold > 1) exact_rerun(flag);
}

}  // namespace ct3d::cuda
