#include "ops/cuda/implicit_gemm_problem.h"

#include <vector>

namespace ct3d::cuda {

PhaseProblem make_phase_problem(const ConvTranspose3dArgs& args, int channel_chunk,
                                int block_channels, const at::Tensor& output) {
  const Int3 in = args.concrete_input_size();
  const Int3 out = args.concrete_output_size();
  const int64_t cin_g = args.in_channels_per_group();
  const int64_t cout_g = args.out_channels_per_group();
  const int64_t taps = args.kernel_size[0] * args.kernel_size[1] * args.kernel_size[2];

  PhaseProblem p{};
  p.cin_per_group = static_cast<int>(cin_g);
  p.cout_per_group = static_cast<int>(cout_g);
  p.cin_padded = static_cast<int>(round_up(cin_g, channel_chunk));
  p.cout_padded = static_cast<int>(round_up(cout_g, block_channels));
  p.kernel_h = static_cast<int>(args.kernel_size[1]);
  p.kernel_w = static_cast<int>(args.kernel_size[2]);
  p.packed_group_stride = taps * p.cin_padded * p.cout_padded * 2;
  // A staged position holds every group's padded channels.
  const int64_t padded_channels = args.groups * p.cin_padded;
  p.staged_stride[2] = padded_channels;
  p.staged_stride[1] = in[2] * p.staged_stride[2];
  p.staged_stride[0] = in[1] * p.staged_stride[1];
  p.staged_batch_stride = in[0] * p.staged_stride[0];
  p.output_batch_stride = output.stride(0);
  p.output_channel_stride = output.stride(1);
  for (int i = 0; i < kSpatialDims; ++i) p.output_stride[i] = output.stride(2 + i);
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
  p.per_sample_divider = FastDivider(static_cast<uint32_t>(p.positions_per_sample));
  p.width_divider = FastDivider(static_cast<uint32_t>(p.dim[2].max_positions));
  p.height_divider = FastDivider(static_cast<uint32_t>(p.dim[1].max_positions));

  return p;
}

}  // namespace ct3d::cuda
