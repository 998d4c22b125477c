#include "ops/cuda/implicit_gemm_problem.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <vector>

namespace ct3d::cuda {
namespace {

// The residue's taps as a progression; checks that they are one.
ResidueParams residue_params(const PhaseDimPlan& plan) {
  ResidueParams residue{};
  residue.taps = static_cast<int>(plan.taps.size());
  residue.positions = static_cast<int>(plan.positions);
  if (residue.taps == 0) return residue;
  residue.first_tap = plan.taps[0];
  residue.first_shift = static_cast<int>(plan.input_shift[0]);
  if (residue.taps > 1) {
    residue.tap_step = plan.taps[1] - plan.taps[0];
    residue.shift_step = static_cast<int>(plan.input_shift[1] - plan.input_shift[0]);
  }
  for (int t = 0; t < residue.taps; ++t) {
    TORCH_INTERNAL_ASSERT(plan.taps[t] == residue.first_tap + t * residue.tap_step &&
                          plan.input_shift[t] == residue.first_shift + t * residue.shift_step);
  }
  return residue;
}

}  // namespace

StagedExtent staged_halo(const std::vector<PhaseDimPlan>& plans, int64_t input_extent) {
  const int64_t max_positions = plans[0].positions;
  StagedExtent halo;
  for (const PhaseDimPlan& plan : plans) {
    for (const int64_t shift : plan.input_shift) {
      halo.low = std::max(halo.low, -shift);
      halo.high = std::max(halo.high, max_positions - 1 + shift - (input_extent - 1));
    }
  }
  return halo;
}

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
  p.output_batch_stride = output.stride(0);
  p.output_channel_stride = output.stride(1);
  for (int i = 0; i < kSpatialDims; ++i) p.output_stride[i] = output.stride(2 + i);
  p.phases = 1;
  p.positions_per_sample = 1;
  for (int i = 0; i < kSpatialDims; ++i) {
    p.input_extent[i] = static_cast<int>(in[i]);
    const std::vector<PhaseDimPlan> plans = plan_phases(
        in[i], out[i], args.kernel_size[i], args.stride[i], args.padding[i], args.dilation[i]);
    const StagedExtent halo = staged_halo(plans, in[i]);
    p.halo_low[i] = static_cast<int>(halo.low);
    p.staged_extent[i] = static_cast<int>(in[i] + halo.low + halo.high);
    DimParams& dim = p.dim[i];
    dim.stride = static_cast<int>(args.stride[i]);
    for (int r = 0; r < dim.stride; ++r) {
      const ResidueParams residue = residue_params(plans[r]);
      dim.residue[r] = residue;
      if (residue.taps > 0 && residue.positions > 0) {
        dim.active_residue[dim.active_residues++] = static_cast<int8_t>(r);
      } else if (residue.positions > 0) {
        p.uncovered_outputs = true;
      }
    }
    dim.max_positions = dim.residue[0].positions;
    p.phases *= dim.active_residues;
    p.positions_per_sample *= dim.max_positions;
  }
  // A staged position holds every group's padded channels.
  const int64_t padded_channels = args.groups * p.cin_padded;
  p.staged_stride[2] = padded_channels;
  p.staged_stride[1] = p.staged_extent[2] * p.staged_stride[2];
  p.staged_stride[0] = p.staged_extent[1] * p.staged_stride[1];
  p.staged_batch_stride = p.staged_extent[0] * p.staged_stride[0];
  p.staged_origin = p.halo_low[0] * p.staged_stride[0] + p.halo_low[1] * p.staged_stride[1] +
                    p.halo_low[2] * p.staged_stride[2];
  p.rows = output.size(0) * p.positions_per_sample;
  p.per_sample_divider = FastDivider(static_cast<uint32_t>(p.positions_per_sample));
  p.width_divider = FastDivider(static_cast<uint32_t>(p.dim[2].max_positions));
  p.height_divider = FastDivider(static_cast<uint32_t>(p.dim[1].max_positions));
  return p;
}

}  // namespace ct3d::cuda
