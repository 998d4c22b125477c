// Host side of the tap-rows form (wgmma_tap_rows_kernel.cuh): the plan, the weights
// packed in (width tap, channel) rows, the source staged as split quad planes (octet
// planes for float16 and bfloat16) a chunk of samples at a time or, for the
// tap-columns form where it can, read by TMA as it is (window_boxes.cuh), and the
// launch.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/staging/half_window_weights.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/staging/tap_row_weights.cuh"
#include "ops/cuda/engine/window/tap_rows.h"
#include "ops/cuda/engine/window/wgmma_tap_rows_kernel.cuh"
#include "ops/cuda/engine/window/window_chunks.h"
#include "ops/cuda/engine/window/window_tensor_map.h"

namespace ct3d::cuda {
namespace {

struct TapRowsPacking {
  WeightLayout layout;
  int cin_per_group, cout_per_group, chunks, kernel_h, kernel_w;
  int rows;           // a stage's rows: 64 x halves (on N in the tap-columns form: rows_used)
  int channel_pitch;  // rows per width tap
  bool box_order;     // the K order of the window's boxes (window_boxes.cuh)
  ResidueParams rd, rh, rw;
};

// The weights as the kernel's stages read them: [group][depth tap][height tap]
// [k-step][hi, lo][rows][8] with row = width tap * channel_pitch + target channel,
// each k-step's rows as wgmma's K-major core matrices (8 rows x 4 values; the k-step's
// two halves 128 bytes apart, 8-row groups 256 bytes apart) in the quad planes' K
// order (input channel 4 e + 2 s + half of the chunk, wgmma_weight_layout.h), or in
// the boxes' (channel 2 e + half of the k-step). Zero in the padding rows and channels.
// Run on every call: the weights may change.
__global__ void pack_tap_row_weights_kernel(const float* __restrict__ weight,
                                            float* __restrict__ packed, int64_t total,
                                            const TapRowsPacking s) {
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    const TapRowElement element = tap_row_element(index, s.rows);
    const int e = element.e, half = element.half, row = element.row;
    int64_t rest = element.rest;
    const int k_step = static_cast<int>(rest % (2 * s.chunks));
    rest /= 2 * s.chunks;
    const int th = static_cast<int>(rest % s.rh.taps);
    rest /= s.rh.taps;
    const int td = static_cast<int>(rest % s.rd.taps);
    const int64_t group = rest / s.rd.taps;
    const int tw = row / s.channel_pitch, channel = row % s.channel_pitch;
    const int in_channel = s.box_order ? 8 * k_step + 2 * e + half
                                       : (k_step >> 1) * 16 + 4 * e + 2 * (k_step & 1) + half;
    float value = 0.f;
    if (tw < s.rw.taps && channel < s.cout_per_group && in_channel < s.cin_per_group) {
      value =
          weight_at_tap(weight, s.layout, group, in_channel, channel,
                        s.rd.first_tap + td * s.rd.tap_step, s.rh.first_tap + th * s.rh.tap_step,
                        s.rw.first_tap + tw * s.rw.tap_step, s.kernel_h, s.kernel_w);
    }
    packed[index] = tf32_part(value, element.lo);
  }
}

at::Tensor pack_tap_row_weights(const GatherProblem& problem, const PhaseProblem& p,
                                const TapRowsPlan& plan, const at::Tensor& weight,
                                cudaStream_t stream) {
  TapRowsPacking s{};
  s.layout = problem.weight;
  s.cin_per_group = p.cin_per_group;
  s.cout_per_group = p.cout_per_group;
  s.chunks = p.cin_padded / 16;
  s.kernel_h = p.kernel_h;
  s.kernel_w = p.kernel_w;
  s.rows = plan.positions_on_m ? plan.rows_used : 64 * plan.halves;
  s.channel_pitch = plan.channel_pitch;
  s.box_order = plan.box_width > 0;
  s.rd = p.dim[0].residue[0];
  s.rh = p.dim[1].residue[0];
  s.rw = p.dim[2].residue[0];
  const int64_t total =
      problem.groups * s.rd.taps * s.rh.taps * 2 * s.chunks * 2 * int64_t{s.rows} * 8;
  return launch_tap_row_packing(pack_tap_row_weights_kernel, s, total, weight, stream);
}

// The plan of one launch over `samples` samples: every group's tiles, one channel block.
TapRowsPlan launch_plan(const GatherProblem& problem, const PhaseProblem& p,
                        const TapRowsPlan& plan, int64_t samples) {
  TapRowsPlan launch = plan;
  TORCH_CHECK(set_window_tiles(launch.window, problem.groups, samples, p.dim[0].max_positions, 1),
              "conv_transpose3d: too many output tiles for one launch");
  return launch;
}

// The register-A form with its window in TMA boxes of the source: the whole batch in
// one launch.
template <class Cfg>
void launch_boxes(const GatherProblem& problem, const PhaseProblem& p, const TapRowsPlan& plan,
                  const at::Tensor& source, const at::Tensor& packed, const float* bias_data,
                  typename Cfg::Ops::Output* output_data, cudaStream_t stream) {
  auto kernel = wgmma_tap_rows_kernel<Cfg, true>;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.shared_bytes));
  const TapRowsPlan batch_plan = launch_plan(problem, p, plan, source.size(0));
  TORCH_CHECK(source.size(3) == p.source_extent[1] && source.size(4) == p.source_extent[2],
              "ct3d: the boxes' source is not the phase's");
  // Line and flat tiles read each plane flat: one line of height x width positions.
  const at::Tensor boxed = flat_rows(plan)
                               ? source.view({source.size(0), source.size(1), source.size(2), 1,
                                              source.size(3) * source.size(4)})
                               : source;
  const CUtensorMap map =
      encode_window_map(boxed, plan.box_width, plan.box_lines, 8 * Cfg::kStageSteps);
  const int64_t blocks = std::min<int64_t>(batch_plan.window.tiles, multiprocessor_count());
  kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, plan.shared_bytes, stream>>>(
      p, batch_plan, nullptr, map, packed.const_data_ptr(), bias_data, output_data);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class Cfg>
void launch_chunks(const GatherProblem& problem, const PhaseProblem& p, const TapRowsPlan& plan,
                   const at::Tensor& source, const at::Tensor& packed, const at::Tensor& bias,
                   at::Tensor& output, cudaStream_t stream, int64_t staging_budget_floats) {
  const float* bias_data = bias.defined() ? bias.const_data_ptr<float>() : nullptr;
  using Output = typename Cfg::Ops::Output;
  auto* output_data = static_cast<Output*>(output.mutable_data_ptr());
  if constexpr (Cfg::kRegisterA) {
    if (plan.box_width > 0) {
      launch_boxes<Cfg>(problem, p, plan, source, packed, bias_data, output_data, stream);
      return;
    }
  }
  auto kernel = wgmma_tap_rows_kernel<Cfg>;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.shared_bytes));
  const int multiprocessors = multiprocessor_count();
  const CUtensorMap no_map{};
  for_each_window_chunk<Cfg::Ops::kHalf, Cfg::Ops::kRawQuads>(
      problem, plan.window, source, stream, staging_budget_floats,
      [&](const at::Tensor& planes, int64_t n0, int64_t samples) {
        const TapRowsPlan chunk_plan = launch_plan(problem, p, plan, samples);
        const int64_t blocks = std::min<int64_t>(chunk_plan.window.tiles, multiprocessors);
        kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, plan.shared_bytes, stream>>>(
            p, chunk_plan, planes.const_data_ptr(), no_map, packed.const_data_ptr(), bias_data,
            output_data + n0 * p.output_batch_stride);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
}

template <class Ops>
void launch_configuration(const GatherProblem& problem, const PhaseProblem& p,
                          const TapRowsPlan& plan, const at::Tensor& source,
                          const at::Tensor& packed, const at::Tensor& bias, at::Tensor& output,
                          cudaStream_t stream, int64_t staging_budget_floats) {
  const auto launch = [&](auto config) {
    launch_chunks<decltype(config)>(problem, p, plan, source, packed, bias, output, stream,
                                    staging_budget_floats);
  };
  const bool wide = plan.window.columns == 160;
  if (plan.halves == 2) {
    wide ? launch(TapRowsConfig<160, 2, Ops>{}) : launch(TapRowsConfig<128, 2, Ops>{});
  } else {
    wide ? launch(TapRowsConfig<160, 1, Ops>{}) : launch(TapRowsConfig<128, 1, Ops>{});
  }
}

// The tap-columns form on unsplit quad planes (KERNEL_LOG, the entry of that name), A from
// registers: its default.
void launch_raw_tap_columns(const GatherProblem& problem, const PhaseProblem& p,
                            const TapRowsPlan& plan, const at::Tensor& source,
                            const at::Tensor& packed, const at::Tensor& bias, at::Tensor& output,
                            cudaStream_t stream, int64_t staging_budget_floats) {
  using Ops = RawTf32Operands;
  const auto launch = [&](auto config) {
    launch_chunks<decltype(config)>(problem, p, plan, source, packed, bias, output, stream,
                                    staging_budget_floats);
  };
  static_assert(kTapColumnsRowChoices[0] == 48 && kTapColumnsRowChoices[7] == 160);
  switch (plan.rows_used) {
    case 48:
      return launch(TapColumnsConfig<48, tap_columns_m_tiles(48), Ops>{});
    case 64:
      return launch(TapColumnsConfig<64, tap_columns_m_tiles(64), Ops>{});
    case 72:
      return launch(TapColumnsConfig<72, tap_columns_m_tiles(72), Ops>{});
    case 80:
      return launch(TapColumnsConfig<80, tap_columns_m_tiles(80), Ops>{});
    case 96:
      return launch(TapColumnsConfig<96, tap_columns_m_tiles(96), Ops>{});
    case 112:
      return launch(TapColumnsConfig<112, tap_columns_m_tiles(112), Ops>{});
    case 144:
      return launch(TapColumnsConfig<144, tap_columns_m_tiles(144), Ops>{});
    default:
      return launch(TapColumnsConfig<160, tap_columns_m_tiles(160), Ops>{});
  }
}

}  // namespace

void launch_tap_rows(const GemmPlan& gemm_plan, const at::Tensor& source, const at::Tensor& weight,
                     const at::Tensor& bias, at::Tensor& output, cudaStream_t stream,
                     int64_t staging_budget_floats) {
  TORCH_INTERNAL_ASSERT(gemm_plan.form == GemmForm::kTapRows ||
                        gemm_plan.form == GemmForm::kTapColumns);
  const GatherProblem& problem = gemm_plan.folded;
  const PhaseProblem& p = gemm_plan.phase;
  const TapRowsPlan& plan = gemm_plan.tap_rows;
  const at::Tensor packed = pack_tap_row_weights(problem, p, plan, weight, stream);
  if (plan.positions_on_m) {
    launch_raw_tap_columns(problem, p, plan, source, packed, bias, output, stream,
                           staging_budget_floats);
  } else if (problem.operands_exact_in_tf32) {
    launch_configuration<SplitTf32Operands<true>>(problem, p, plan, source, packed, bias, output,
                                                  stream, staging_budget_floats);
  } else {
    launch_configuration<SplitTf32Operands<false>>(problem, p, plan, source, packed, bias, output,
                                                   stream, staging_budget_floats);
  }
}

void launch_half_tap_rows(const HalfPlan& half_plan, const GatherProblem& problem,
                          const at::Tensor& source, const at::Tensor& weight,
                          const at::Tensor& bias, at::Tensor& output, cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(half_plan.form == HalfForm::kTapRows);
  const PhaseProblem& p = half_plan.phase;
  const TapRowsPlan& plan = half_plan.tap_rows;
  const HalfPackedWeights packed =
      pack_half_window_weights(problem, p, 64 * plan.halves, plan.channel_pitch,
                               tap_rows_stage_steps(plan.halves, true), weight, bias, stream);
  if (source.scalar_type() == at::kHalf) {
    launch_configuration<HalfOperands<__half>>(problem, p, plan, source, packed.weights,
                                               packed.bias, output, stream, kUnlimitedStaging);
  } else {
    launch_configuration<HalfOperands<__nv_bfloat16>>(
        problem, p, plan, source, packed.weights, packed.bias, output, stream, kUnlimitedStaging);
  }
}

}  // namespace ct3d::cuda
