// Host side of the shifted-window GEMM (wgmma_shifted_window_kernel.cuh): the plan,
// the weights packed for blocks of 64 channels, the source staged as split quad
// planes or, for float16 and bfloat16, octet planes (quad_staging.h) a chunk of
// samples at a time, and the launch.
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstdint>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/staging/half_window_weights.h"
#include "ops/cuda/engine/staging/weight_packing.h"
#include "ops/cuda/engine/window/shifted_window.h"
#include "ops/cuda/engine/window/wgmma_shifted_window_kernel.cuh"
#include "ops/cuda/engine/window/window_chunks.h"

namespace ct3d::cuda {
namespace {

template <class Cfg>
void launch_chunks(const GatherProblem& problem, const PhaseProblem& p,
                   const ShiftedWindowPlan& plan, const at::Tensor& source,
                   const at::Tensor& packed, const at::Tensor& bias, at::Tensor& output,
                   cudaStream_t stream, int64_t staging_budget_floats) {
  const int shared_bytes = plan.slots * plan.stage_bytes + plan.park_bytes;
  auto kernel = wgmma_shifted_window_kernel<Cfg>;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
  const float* bias_data = bias.defined() ? bias.const_data_ptr<float>() : nullptr;
  const int multiprocessors = multiprocessor_count();
  ShiftedWindowPlan chunk_plan = plan;
  using Output = typename Cfg::Ops::Output;
  for_each_window_chunk<Cfg::Ops::kHalf>(
      problem, plan, source, stream, staging_budget_floats,
      [&](const at::Tensor& planes, int64_t n0, int64_t samples) {
        TORCH_CHECK(set_window_tiles(chunk_plan, problem.groups, samples, p.dim[0].max_positions,
                                     p.cout_padded / (Cfg::kMTiles * kWindowBlockChannels)),
                    "conv_transpose3d: too many output tiles for one launch");
        const int64_t blocks = std::min<int64_t>(chunk_plan.tiles, multiprocessors);
        kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, shared_bytes, stream>>>(
            p, chunk_plan, planes.const_data_ptr(), packed.const_data_ptr(), bias_data,
            static_cast<Output*>(output.mutable_data_ptr()) + n0 * p.output_batch_stride);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
}

template <class Ops, int kMTiles = 1, int kWidthTaps = 0>
void launch_columns(const GatherProblem& problem, const PhaseProblem& p,
                    const ShiftedWindowPlan& plan, const at::Tensor& source,
                    const at::Tensor& packed, const at::Tensor& bias, at::Tensor& output,
                    cudaStream_t stream, int64_t staging_budget_floats) {
  const auto launch = [&](auto config) {
    launch_chunks<decltype(config)>(problem, p, plan, source, packed, bias, output, stream,
                                    staging_budget_floats);
  };
  switch (plan.columns) {
    case 96:
      launch(ShiftedWindowConfig<96, Ops, kMTiles, kWidthTaps>{});
      break;
    case 128:
      launch(ShiftedWindowConfig<128, Ops, kMTiles, kWidthTaps>{});
      break;
    case 144:
      launch(ShiftedWindowConfig<144, Ops, kMTiles, kWidthTaps>{});
      break;
    default:
      launch(ShiftedWindowConfig<160, Ops, kMTiles, kWidthTaps>{});
      break;
  }
}

// Three width taps (the k3 layers) unrolled (KERNEL_LOG, the fixed taps: faster than the
// tap loop, which the other tap counts run).
bool three_width_taps(const PhaseProblem& p) { return p.dim[2].residue[0].taps == 3; }

// The half form's launch: blocks of two m-tiles where the plan has them.
template <class Element>
void launch_half_columns(const GatherProblem& problem, const PhaseProblem& p,
                         const ShiftedWindowPlan& plan, const at::Tensor& source,
                         const at::Tensor& packed, const at::Tensor& bias, at::Tensor& output,
                         cudaStream_t stream) {
  const bool three_taps = three_width_taps(p);
  using Ops = HalfOperands<Element>;
  if (plan.m_tiles == kWindowMaxMTiles && three_taps) {
    launch_columns<Ops, kWindowMaxMTiles, 3>(problem, p, plan, source, packed, bias, output, stream,
                                             kUnlimitedStaging);
  } else if (plan.m_tiles == kWindowMaxMTiles) {
    launch_columns<Ops, kWindowMaxMTiles>(problem, p, plan, source, packed, bias, output, stream,
                                          kUnlimitedStaging);
  } else if (three_taps) {
    launch_columns<Ops, 1, 3>(problem, p, plan, source, packed, bias, output, stream,
                              kUnlimitedStaging);
  } else {
    launch_columns<Ops>(problem, p, plan, source, packed, bias, output, stream, kUnlimitedStaging);
  }
}

}  // namespace

void launch_shifted_window(const GemmPlan& gemm_plan, const at::Tensor& source,
                           const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                           cudaStream_t stream, int64_t staging_budget_floats) {
  TORCH_INTERNAL_ASSERT(gemm_plan.form == GemmForm::kShiftedWindow);
  const GatherProblem& problem = gemm_plan.folded;
  const PhaseProblem& p = gemm_plan.phase;
  const ShiftedWindowPlan& plan = gemm_plan.window;
  const at::Tensor packed =
      pack_weights(problem, p, 1, false, kWindowBlockChannels, nullptr, weight, stream);
  if (problem.operands_exact_in_tf32) {
    launch_columns<SplitTf32Operands<true>>(problem, p, plan, source, packed, bias, output, stream,
                                            staging_budget_floats);
  } else if (three_width_taps(p)) {
    launch_columns<SplitTf32Operands<false>, 1, 3>(problem, p, plan, source, packed, bias, output,
                                                   stream, staging_budget_floats);
  } else {
    launch_columns<SplitTf32Operands<false>>(problem, p, plan, source, packed, bias, output, stream,
                                             staging_budget_floats);
  }
}

void launch_half_shifted_window(const HalfPlan& half_plan, const GatherProblem& problem,
                                const at::Tensor& source, const at::Tensor& weight,
                                const at::Tensor& bias, at::Tensor& output, cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(half_plan.form == HalfForm::kShiftedWindow);
  const PhaseProblem& p = half_plan.phase;
  const ShiftedWindowPlan& plan = half_plan.window;
  const HalfPackedWeights packed =
      pack_half_window_weights(problem, p, p.cout_padded, 0, 1, weight, bias, stream);
  if (source.scalar_type() == at::kHalf) {
    launch_half_columns<__half>(problem, p, plan, source, packed.weights, packed.bias, output,
                                stream);
  } else {
    launch_half_columns<__nv_bfloat16>(problem, p, plan, source, packed.weights, packed.bias,
                                       output, stream);
  }
}

}  // namespace ct3d::cuda
