// Host side of the weight gradient on wgmma (weight_gradient_wgmma_kernel.cuh): launches
// the planner's plan (planner/weight_gradient_mainloop.h: the block, the stages, the
// segments' layout, the chunks of staged grad_output and the split of each chunk's
// reduction; the input is read as it is, NCDHW).
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <functional>
#include <type_traits>
#include <vector>

#include "ops/cuda/engine/planner/weight_gradient_mainloop.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_splits.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_wgmma_kernel.cuh"

namespace ct3d::cuda {
namespace {

// One kernel configuration's share of the reduction walk (the whole lines, or a tail
// launch's last positions of every line): its split and its launch on a chunk of
// staged samples, writing `splits` partial tiles from `workspace`.
struct WgradPart {
  int64_t splits = 0;
  std::function<void(int64_t first_sample, int64_t samples, const at::Tensor& staged_output,
                     float* workspace)>
      launch;
};

// The part of launch `launch` (its problem and its planned split: plan_wgmma_wgrad_split).
template <int kN, int kMTiles, class Ops, int kPositions>
WgradPart prepare_part(const WeightGradientPlan& plan, const WgmmaWgradLaunch& launch,
                       const at::Tensor& input, cudaStream_t stream) {
  using Cfg = WgradWgmmaConfig<kN, kMTiles, Ops, kPositions>;
  using Element = typename Cfg::Element;
  const WgradWgmmaProblem& p = launch.p;
  const WgradSplit split = launch.split;
  TORCH_INTERNAL_ASSERT(p.positions == kPositions && launch.channels == kN && split.splits >= 1,
                        "prepare_part: a launch planned for another configuration");
  const int64_t stages_per_sample = int64_t{p.depth} * p.height * p.width_tiles;
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
  const int64_t split_floats = wgmma_wgrad_split_floats(plan, p, kN);
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

// The kernel configuration of the planned block channels, m-tiles (wgrad_m_tiles_for, or
// 2 where the planner took 2 for float32's 3) and stage positions, and where `tail` is
// planned (float32), a second launch of 16-position stages for the lines' last positions.
template <class Ops>
void launch_for_channels(const WeightGradientPlan& plan, int64_t chunk,
                         const WgmmaWgradLaunch& launch, const WgmmaWgradLaunch* tail,
                         const at::Tensor& input, const at::Tensor& grad_output,
                         at::Tensor& grad_weight, cudaStream_t stream, at::Tensor& grad_bias,
                         const StagedChunkHook& after_chunk) {
  const auto run = [&](auto channels) {
    constexpr int kN = decltype(channels)::value;
    constexpr int kMTiles = wgrad_m_tiles_for(kN, Ops::kHalf);
    std::vector<WgradPart> parts;
    // The whole tiles on 32-position stages.
    const auto whole_tiles = [&](auto m_tiles) {
      constexpr int kWholeMTiles = decltype(m_tiles)::value;
      return prepare_part<kN, kWholeMTiles, Ops, kWgradTilePositions>(plan, launch, input, stream);
    };
    // The lines' whole tiles (all of them where there is no tail launch).
    if constexpr (!Ops::kHalf) {
      if (launch.p.positions == kWgradShortTilePositions) {
        parts.push_back(
            prepare_part<kN, kMTiles, Ops, kWgradShortTilePositions>(plan, launch, input, stream));
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
        parts.push_back(
            prepare_part<kN, kMTiles, Ops, kWgradShortTilePositions>(plan, *tail, input, stream));
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

void launch_wgmma_weight_gradient(const WgradMainloopPlan& plan, const at::Tensor& input,
                                  const at::Tensor& grad_output, at::Tensor& grad_weight,
                                  cudaStream_t stream, at::Tensor& grad_bias,
                                  const StagedChunkHook& after_chunk) {
  TORCH_INTERNAL_ASSERT(plan.form == WgradForm::kWgmma && plan.chunk_samples >= 1);
  const auto run = [&](auto operands) {
    launch_for_channels<decltype(operands)>(
        plan.staged, plan.chunk_samples, plan.launch, plan.with_tail ? &plan.tail : nullptr,
        input, grad_output, grad_weight, stream, grad_bias, after_chunk);
  };
  const at::ScalarType dtype = input.scalar_type();
  if (dtype == at::kHalf) {
    run(WgradHalfOperands<__half>{});
  } else if (dtype == at::kBFloat16) {
    run(WgradHalfOperands<__nv_bfloat16>{});
  } else if (plan.staged.operands_exact_in_tf32) {
    run(WgradTf32Operands<true>{});
  } else {
    run(WgradTf32Operands<false>{});
  }
}

}  // namespace ct3d::cuda
