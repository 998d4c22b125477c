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
#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/gather/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_reuse_kernel.cuh"
#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/planner/gemm_plan.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/staging/weight_packing.h"
#include "ops/cuda/engine/strided_lines/strided_lines.h"
#include "ops/cuda/engine/window/shifted_window.h"
#include "ops/cuda/engine/window/tap_rows.h"

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxShift = 32767;
// cp.async pipeline depth of every configuration: 4 stages measured 1-2 % slower
// on 61 and 68 (more shared memory per block, same blocks per SM).
constexpr int kStages = 3;

template <class Cfg>
auto phase_kernel_of() {
  if constexpr (Cfg::kPackWgmmaChannels > 0) {
    return wgmma_phase_kernel<Cfg>;
  } else {
    return implicit_gemm_phase_kernel<Cfg>;
  }
}

// problem: the GEMM with its groups folded `fold` at a time (see group_fold); p: its
// launch form for Cfg's block channels. staged: the whole source already staged
// (launch_gemm_plan), or undefined. reuse: the width-tap reuse plan
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

// Launches the plan's gathering configuration (launch_all_phases). kExact: the operands
// are exact in TF32 (one product each).
template <bool kExact>
void launch_gather(const GemmPlan& plan, int* flag, const at::Tensor& source,
                   const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                   cudaStream_t stream, int64_t staging_budget_floats, const at::Tensor& staged) {
  // Launches the configuration given by the type of its (empty) argument.
  const auto launch = [&](auto config) {
    using Cfg = decltype(config);
    TORCH_INTERNAL_ASSERT(Cfg::kBlockChannels == plan.block_channels);
    if constexpr (Cfg::kWidthReuse) {
      static_assert(Cfg::kBlockPositions == width_reuse_block_positions(Cfg::kBlockChannels) &&
                    Cfg::kMaxTileRows == kWidthReuseMaxTileRows);
    }
    launch_all_phases<Cfg>(plan.folded, plan.phase, plan.fold, flag, source, weight, bias, output,
                           stream, staging_budget_floats, staged, plan.reuse);
  };
  constexpr int kTwo = width_reuse_m_tiles(64), kOne = width_reuse_m_tiles(96);
  switch (plan.form) {
    case GemmForm::kWidthReuse:
      switch (plan.block_channels) {
        case 16:
          return launch(WgmmaReuseConfig<16, kTwo, kExact>{});
        case 24:
          return launch(WgmmaReuseConfig<24, kTwo, kExact>{});
        case 32:
          return launch(WgmmaReuseConfig<32, kTwo, kExact>{});
        case 48:
          return launch(WgmmaReuseConfig<48, kTwo, kExact>{});
        case 64:
          return launch(WgmmaReuseConfig<64, kTwo, kExact>{});
        case 96:
          return launch(WgmmaReuseConfig<96, kOne, kExact>{});
        default:
          return launch(WgmmaReuseConfig<128, kOne, kExact>{});
      }
    case GemmForm::kWgmmaGather:
      // One m-tile per warpgroup and two chunks per stage (registers: accumulators +
      // two sets of fragments).
      switch (plan.block_channels) {
        case 48:
          return launch(WgmmaConfig<48, 1, 2, kExact>{});
        case 64:
          return launch(WgmmaConfig<64, 1, 2, kExact>{});
        case 96:
          return launch(WgmmaConfig<96, 1, 2, kExact>{});
        default:
          return launch(WgmmaConfig<128, 1, 2, kExact>{});
      }
    default:
      switch (plan.block_channels) {
        case 16:
          return launch(TileConfig<4, ChannelsOnM<1, 8, kExact>, kStages>{});
        case 24:
          // Positions on M and three 8-channel tiles: no padding to 32 channels.
          return launch(TileConfig<4, PositionsOnM<4, 3, kExact>, kStages>{});
        case 32:
          return launch(TileConfig<4, ChannelsOnM<2, 8, kExact>, kStages>{});
        case 48:
          return launch(TileConfig<4, ChannelsOnM<3, 4, kExact>, kStages>{});
        default:
          return launch(TileConfig<4, ChannelsOnM<4, 4, kExact>, kStages>{});
      }
  }
}

}  // namespace

bool implicit_gemm_fits(const GatherProblem& problem) {
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
  // The mma.sync gather's blocks: up to 64 target channels each.
  const int64_t column_blocks = (cout_g + 63) / 64;
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

void launch_gemm_plan(const GemmPlan& plan, const at::Tensor& source, const at::Tensor& weight,
                      const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                      int64_t staging_budget_floats, const ExactRerun& exact_rerun,
                      const at::Tensor& staged) {
  switch (plan.form) {
    case GemmForm::kStridedLines:
      return launch_strided_lines(plan, source, weight, bias, output, stream);
    case GemmForm::kShiftedWindow:
      return launch_shifted_window(plan, source, weight, bias, output, stream,
                                   staging_budget_floats);
    case GemmForm::kTapRows:
    case GemmForm::kTapColumns:
      return launch_tap_rows(plan, source, weight, bias, output, stream, staging_budget_floats);
    default:
      break;
  }
  const int fold = plan.fold;
  // With folded groups, a NaN or Inf source value times a structural zero weight
  // would leak into other groups' outputs. The staging pass flags non-finite
  // values, and the exact rerun, queued behind the GEMM, recomputes the output
  // when the flag is set (and returns at once when it is not: ~10 us).
  at::Tensor nonfinite;
  if (fold > 1) nonfinite = at::empty({1}, source.options().dtype(at::kInt));
  int* flag = fold > 1 ? nonfinite.mutable_data_ptr<int>() : nullptr;
  if (plan.folded.operands_exact_in_tf32) {
    launch_gather<true>(plan, flag, source, weight, bias, output, stream, staging_budget_floats,
                        staged);
  } else {
    launch_gather<false>(plan, flag, source, weight, bias, output, stream, staging_budget_floats,
                         staged);
  }
  if (fold > 1) exact_rerun(flag);
}

}  // namespace ct3d::cuda
