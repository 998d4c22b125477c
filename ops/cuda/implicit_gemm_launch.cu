// Host side of the implicit GEMM: plans the stride phases, packs the weights, picks
// a tile configuration and launches one kernel per phase on the given stream.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <limits>

#include "ops/cuda/implicit_gemm.h"
#include "ops/cuda/implicit_gemm_kernel.cuh"
#include "ops/cuda/phase_plan.h"

namespace ct3d::cuda {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxShift = 32767;

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Column tiles per output-channel count: a block always covers all of a group's
// columns up to 64, so the input gathered into shared memory is used by every
// output channel it feeds. Wider groups take several column tiles.
int columns_tiles_for(int64_t cout_per_group) {
  const int64_t tiles = (cout_per_group + 7) / 8;
  if (tiles <= 4) return static_cast<int>(tiles);
  return tiles <= 6 ? 6 : 8;
}

template <class Cfg>
void launch_all_phases(const ConvTranspose3dArgs& args, const at::Tensor& input,
                       const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                       cudaStream_t stream) {
  const Int3 in = args.concrete_input_size();
  const Int3 out = args.concrete_output_size();
  const int64_t groups = args.groups;
  const int64_t cin_g = args.in_channels_per_group();
  const int64_t cout_g = args.out_channels_per_group();
  const int64_t taps = args.kernel_size[0] * args.kernel_size[1] * args.kernel_size[2];

  PhaseProblem p{};
  p.cin_per_group = static_cast<int>(cin_g);
  p.cout_per_group = static_cast<int>(cout_g);
  p.cin_padded = static_cast<int>(round_up(cin_g, kBlockK));
  p.cout_padded = static_cast<int>(round_up(cout_g, Cfg::kBlockN));
  p.kernel_h = static_cast<int>(args.kernel_size[1]);
  p.kernel_w = static_cast<int>(args.kernel_size[2]);
  p.packed_group_stride = taps * p.cin_padded * p.cout_padded;
  p.input_stride[2] = 1;
  p.input_stride[1] = in[2];
  p.input_stride[0] = in[1] * in[2];
  p.input_channel_stride = in[0] * in[1] * in[2];
  p.input_batch_stride = args.in_channels * p.input_channel_stride;
  p.output_stride[2] = 1;
  p.output_stride[1] = out[2];
  p.output_stride[0] = out[1] * out[2];
  p.output_channel_stride = out[0] * out[1] * out[2];
  p.output_batch_stride = args.out_channels * p.output_channel_stride;
  p.phases = 1;
  p.positions_per_sample = 1;
  for (int i = 0; i < kSpatialDims; ++i) {
    p.input_extent[i] = static_cast<int>(in[i]);
    DimParams& dim = p.dim[i];
    dim.stride = static_cast<int>(args.stride[i]);
    const std::vector<PhaseDimPlan> plans = plan_phases(
        in[i], out[i], args.kernel_size[i], args.stride[i], args.padding[i], args.dilation[i]);
    for (int r = 0; r < dim.stride; ++r) {
      ResidueParams& residue = dim.residue[r];
      residue.taps = static_cast<int>(plans[r].taps.size());
      residue.positions = static_cast<int>(plans[r].positions);
      for (int t = 0; t < residue.taps; ++t) {
        residue.kernel_tap[t] = static_cast<int8_t>(plans[r].taps[t]);
        residue.input_shift[t] = static_cast<int16_t>(plans[r].input_shift[t]);
      }
    }
    dim.max_positions = dim.residue[0].positions;
    p.phases *= dim.stride;
    p.positions_per_sample *= dim.max_positions;
  }
  p.rows = output.size(0) * p.positions_per_sample;

  // Weights are packed per call (they may change between calls); this is a few
  // microseconds against milliseconds of convolution.
  const int64_t packed_elements = groups * p.packed_group_stride;
  at::Tensor packed = at::empty({2, packed_elements}, weight.options());
  float* packed_hi = packed.mutable_data_ptr<float>();
  float* packed_lo = packed_hi + packed_elements;
  constexpr int kPackThreads = 256;
  const int64_t pack_blocks =
      std::min<int64_t>((packed_elements + kPackThreads - 1) / kPackThreads, 4096);
  pack_weights_kernel<<<pack_blocks, kPackThreads, 0, stream>>>(
      weight.const_data_ptr<float>(), packed_hi, packed_lo, packed_elements, p.cin_per_group,
      p.cout_per_group, p.cin_padded, p.cout_padded, static_cast<int>(taps));
  C10_CUDA_KERNEL_LAUNCH_CHECK();

  auto kernel = implicit_gemm_phase_kernel<Cfg>;
  C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      Cfg::kSharedBytes));
  const int64_t row_tiles = (p.rows + Cfg::kBlockM - 1) / Cfg::kBlockM;
  const dim3 grid(static_cast<unsigned>(row_tiles * p.phases),
                  static_cast<unsigned>(p.cout_padded / Cfg::kBlockN),
                  static_cast<unsigned>(groups));
  kernel<<<grid, Cfg::kThreads, Cfg::kSharedBytes, stream>>>(
      p, input.const_data_ptr<float>(), packed_hi, packed_lo,
      bias.defined() ? bias.const_data_ptr<float>() : nullptr, output.mutable_data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

bool implicit_gemm_supports(const ConvTranspose3dArgs& args, const at::Tensor& input) {
  if (input.scalar_type() != at::kFloat) return false;
  const Int3 in = args.concrete_input_size();
  const Int3 out = args.concrete_output_size();
  int64_t positions_per_sample = 1;
  int64_t phases = 1;
  for (int i = 0; i < kSpatialDims; ++i) {
    // Per-dimension tap masks are 32 bits, one launch covers kMaxResidues
    // residues, tap shifts are stored as int16; positions and in-sample row
    // numbers are 32-bit. Tensor offsets are 64-bit throughout.
    if (args.kernel_size[i] > kMaxPhaseTaps || args.stride[i] > kMaxResidues) return false;
    if (args.padding[i] + args.dilation[i] * args.kernel_size[i] > kMaxShift) return false;
    if (in[i] > kMaxShift) return false;
    positions_per_sample *= (out[i] + args.stride[i] - 1) / args.stride[i];
    phases *= args.stride[i];
  }
  const int64_t cout_g = args.out_channels_per_group();
  const int64_t column_tiles = columns_tiles_for(cout_g);
  const int64_t column_blocks = (cout_g + 8 * column_tiles - 1) / (8 * column_tiles);
  const int64_t rows = args.batch.expect_int() * positions_per_sample;
  return positions_per_sample < kMaxInt / 2 && rows / 64 * phases < kMaxInt &&
         args.groups <= kMaxGridY && column_blocks <= kMaxGridY &&
         args.in_channels_per_group() < kMaxInt / 2 && cout_g < kMaxInt / 2;
}

void launch_implicit_gemm_conv_transpose3d(const ConvTranspose3dArgs& args,
                                           const at::Tensor& input, const at::Tensor& weight,
                                           const at::Tensor& bias, at::Tensor& output,
                                           cudaStream_t stream) {
  switch (columns_tiles_for(args.out_channels_per_group())) {
    case 1: return launch_all_phases<TileConfig<4, 4, 1>>(args, input, weight, bias, output, stream);
    case 2: return launch_all_phases<TileConfig<4, 4, 2>>(args, input, weight, bias, output, stream);
    case 3: return launch_all_phases<TileConfig<4, 4, 3>>(args, input, weight, bias, output, stream);
    case 4: return launch_all_phases<TileConfig<4, 4, 4>>(args, input, weight, bias, output, stream);
    case 6: return launch_all_phases<TileConfig<8, 2, 6>>(args, input, weight, bias, output, stream);
    default: return launch_all_phases<TileConfig<8, 2, 8>>(args, input, weight, bias, output, stream);
  }
}

}  // namespace ct3d::cuda
