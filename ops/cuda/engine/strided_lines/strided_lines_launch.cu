// Host side of the strided-lines form (wgmma_strided_lines_kernel.cuh): the plan, the
// weights packed per (residues, taps, k-step) in (width tap, channel) rows, the source's
// TMA map and the launch.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <type_traits>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/staging/tap_row_weights.cuh"
#include "ops/cuda/engine/strided_lines/strided_lines.h"
#include "ops/cuda/engine/strided_lines/wgmma_strided_lines_kernel.cuh"
#include "ops/cuda/engine/window/window_tensor_map.h"

namespace ct3d::cuda {
namespace {

struct StridedLinesPacking {
  WeightLayout layout;
  int cin_per_group, cout_per_group, kernel_h, kernel_w;
  int rows, channel_block, channel_blocks, k_steps;
  int depth_stride, height_stride, depth_taps, height_taps;
  ResidueParams depth[kMaxResidues], height[kMaxResidues];
};

// The weights as the kernel's stages read them (strided_lines_weight_stage):
// [group][channel block][depth residue][height residue][depth tap][height tap][k-step]
// [hi, lo][rows][8] (tap_row_weights.cuh), row = width tap x channel_block + target
// channel, in the boxes' K order (source channel 2 e + half of the k-step). Zero in the padding
// rows, channels and taps. Run on every call: the weights may change.
__global__ void pack_strided_line_weights_kernel(const float* __restrict__ weight,
                                                 float* __restrict__ packed, int64_t total,
                                                 const StridedLinesPacking s) {
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    const TapRowElement element = tap_row_element(index, s.rows);
    const int e = element.e, half = element.half, row = element.row;
    int64_t rest = element.rest;
    const int k_step = static_cast<int>(rest % s.k_steps);
    rest /= s.k_steps;
    const int th = static_cast<int>(rest % s.height_taps);
    rest /= s.height_taps;
    const int td = static_cast<int>(rest % s.depth_taps);
    rest /= s.depth_taps;
    const ResidueParams& rh = s.height[rest % s.height_stride];
    rest /= s.height_stride;
    const ResidueParams& rd = s.depth[rest % s.depth_stride];
    rest /= s.depth_stride;
    const int channel_block = static_cast<int>(rest % s.channel_blocks);
    const int64_t group = rest / s.channel_blocks;
    const int tw = row / s.channel_block;
    const int channel = channel_block * s.channel_block + row % s.channel_block;
    const int in_channel = 8 * k_step + 2 * e + half;
    float value = 0.f;
    if (td < rd.taps && th < rh.taps && channel < s.cout_per_group &&
        in_channel < s.cin_per_group) {
      value = weight_at_tap(weight, s.layout, group, in_channel, channel,
                            rd.first_tap + td * rd.tap_step, rh.first_tap + th * rh.tap_step, tw,
                            s.kernel_h, s.kernel_w);
    }
    packed[index] = tf32_part(value, element.lo);
  }
}

at::Tensor pack_strided_line_weights(const GatherProblem& problem, const PhaseProblem& p,
                                     const StridedLinesPlan& plan, const at::Tensor& weight,
                                     cudaStream_t stream) {
  StridedLinesPacking s{};
  s.layout = problem.weight;
  s.cin_per_group = p.cin_per_group;
  s.cout_per_group = p.cout_per_group;
  s.kernel_h = p.kernel_h;
  s.kernel_w = p.kernel_w;
  s.rows = plan.width_taps * plan.channel_block;
  s.channel_block = plan.channel_block;
  s.channel_blocks = plan.channel_blocks;
  s.k_steps = plan.k_steps;
  s.depth_stride = p.dim[0].stride;
  s.height_stride = p.dim[1].stride;
  s.depth_taps = plan.depth_taps;
  s.height_taps = plan.height_taps;
  std::copy(p.dim[0].residue, p.dim[0].residue + kMaxResidues, s.depth);
  std::copy(p.dim[1].residue, p.dim[1].residue + kMaxResidues, s.height);
  const int64_t total = problem.groups * plan.channel_blocks * s.depth_stride * s.height_stride *
                        s.depth_taps * s.height_taps * s.k_steps * 2 * int64_t{s.rows} * 8;
  return launch_tap_row_packing(pack_strided_line_weights_kernel, s, total, weight, stream);
}

template <class Cfg>
void launch(const PhaseProblem& p, const StridedLinesPlan& plan, const at::Tensor& source,
            const at::Tensor& packed, const at::Tensor& bias, at::Tensor& output,
            cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(plan.m_tiles == Cfg::kMTiles && plan.stage_bytes == Cfg::kStageBytes &&
                        (plan.flush_stages > 0) == Cfg::kFlush && plan.slots <= Cfg::kMaxSlots &&
                        Cfg::kStagedFloats == plan.channel_block * kStridedLinesStagedPitch);
  auto kernel = wgmma_strided_lines_kernel<Cfg>;
  C10_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.shared_bytes));
  // The planes seen flat: one line of height x width positions.
  const at::Tensor flat = source.view(
      {source.size(0), source.size(1), source.size(2), 1, source.size(3) * source.size(4)});
  const CUtensorMap map = encode_window_map(flat, Cfg::kBoxWidth, 1, 8 * Cfg::kStageSteps);
  const int64_t blocks = std::min<int64_t>(plan.tiles, multiprocessor_count());
  kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, plan.shared_bytes, stream>>>(
      p, plan, map, packed.const_data_ptr<float>(),
      bias.defined() ? bias.const_data_ptr<float>() : nullptr, output.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void launch_strided_lines(const GemmPlan& gemm_plan, const at::Tensor& source,
                          const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                          cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(gemm_plan.form == GemmForm::kStridedLines);
  const GatherProblem& problem = gemm_plan.folded;
  const PhaseProblem& p = gemm_plan.phase;
  const StridedLinesPlan& plan = gemm_plan.strided_lines;
  if (p.uncovered_outputs) fill_uncovered_outputs(bias, output);
  const at::Tensor packed = pack_strided_line_weights(problem, p, plan, weight, stream);
  const auto run = [&](auto exact) {
    constexpr bool kExact = decltype(exact)::value;
    const auto launch_config = [&](auto config) {
      launch<decltype(config)>(p, plan, source, packed, bias, output, stream);
    };
    const bool narrow = plan.channel_block == 16;
    if constexpr (!kExact) {
      if (plan.flush_stages > 0) {
        if (plan.width_taps == 3) {
          narrow ? launch_config(StridedLinesConfig<3, 16, 1, false, true>{})
                 : launch_config(StridedLinesConfig<3, 32, 1, false, true>{});
        } else {
          narrow ? launch_config(StridedLinesConfig<4, 16, 1, false, true>{})
                 : launch_config(StridedLinesConfig<4, 32, 1, false, true>{});
        }
        return;
      }
    }
    if (plan.width_taps == 3) {
      narrow ? launch_config(StridedLinesConfig<3, 16, strided_lines_m_tiles(48), kExact>{})
             : launch_config(StridedLinesConfig<3, 32, strided_lines_m_tiles(96), kExact>{});
    } else {
      narrow ? launch_config(StridedLinesConfig<4, 16, strided_lines_m_tiles(64), kExact>{})
             : launch_config(StridedLinesConfig<4, 32, strided_lines_m_tiles(128), kExact>{});
    }
  };
  problem.operands_exact_in_tf32 ? run(std::true_type{}) : run(std::false_type{});
}

}  // namespace ct3d::cuda
