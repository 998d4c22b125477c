#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

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

// The input gradient's gather along one dimension: one phase holding every input
// position and every tap (a tap that misses grad_output reads the zero halo).
PhaseDimPlan strided_gather_plan(const DimGeometry& d) {
  PhaseDimPlan plan;
  plan.positions = d.input;
  for (int64_t k = 0; k < d.kernel; ++k) {
    plan.taps.push_back(static_cast<int>(k));
    plan.input_shift.push_back(d.output_index(0, k));
  }
  return plan;
}

// The forward (reduce over C_in, gather the input for each output) or the input
// gradient (reduce over C_out, gather grad_output for each input). The weight is
// (C_in, C_out / groups, taps) either way.
GatherProblem transposed_conv_gather(const ConvGeometry& g, bool forward) {
  const int64_t taps = g.taps();
  const int64_t out_stride = taps, in_stride = g.out_channels_per_group() * taps;
  GatherProblem problem;
  problem.batch = g.batch;
  problem.groups = g.groups;
  problem.input_gradient = !forward;
  problem.reduce_channels = forward ? g.in_channels_per_group() : g.out_channels_per_group();
  problem.target_channels = forward ? g.out_channels_per_group() : g.in_channels_per_group();
  problem.weight.group_stride = g.in_channels_per_group() * in_stride;
  problem.weight.reduce_stride = forward ? in_stride : out_stride;
  problem.weight.target_stride = forward ? out_stride : in_stride;
  for (int i = 0; i < kSpatialDims; ++i) {
    const DimGeometry& d = g.dim[i];
    GatherDim& dim = problem.dim[i];
    dim.source_extent = forward ? d.input : d.output;
    dim.target_extent = forward ? d.output : d.input;
    dim.kernel = d.kernel;
    dim.position_step = forward ? 1 : d.stride;
    dim.phases = forward ? plan_phases(d) : std::vector<PhaseDimPlan>{strided_gather_plan(d)};
    dim.halo = staged_halo(dim);
  }
  return problem;
}

}  // namespace

GatherProblem forward_gather(const ConvGeometry& g) { return transposed_conv_gather(g, true); }

GatherProblem input_gradient_gather(const ConvGeometry& g) {
  return transposed_conv_gather(g, false);
}

StagedExtent staged_halo(const GatherDim& dim) {
  const int64_t last_position = dim.phases[0].positions - 1;
  StagedExtent halo;
  for (const PhaseDimPlan& plan : dim.phases) {
    for (const int64_t shift : plan.input_shift) {
      halo.low = std::max(halo.low, -shift);
      halo.high =
          std::max(halo.high, last_position * dim.position_step + shift - (dim.source_extent - 1));
    }
  }
  return halo;
}

PhaseProblem make_phase_problem(const GatherProblem& problem, int channel_chunk, int block_channels,
                                const at::Tensor& output) {
  PhaseProblem p{};
  p.cin_per_group = static_cast<int>(problem.reduce_channels);
  p.cout_per_group = static_cast<int>(problem.target_channels);
  p.cin_padded = static_cast<int>(round_up(problem.reduce_channels, channel_chunk));
  p.cout_padded = static_cast<int>(round_up(problem.target_channels, block_channels));
  p.kernel_h = static_cast<int>(problem.dim[1].kernel);
  p.kernel_w = static_cast<int>(problem.dim[2].kernel);
  p.packed_group_stride = problem.taps() * p.cin_padded * p.cout_padded * 2;
  p.output_batch_stride = output.stride(0);
  p.output_channel_stride = output.stride(1);
  for (int i = 0; i < kSpatialDims; ++i) p.output_stride[i] = output.stride(2 + i);
  p.phases = 1;
  p.positions_per_sample = 1;
  for (int i = 0; i < kSpatialDims; ++i) {
    const GatherDim& gather = problem.dim[i];
    p.source_extent[i] = static_cast<int>(gather.source_extent);
    const StagedExtent& halo = gather.halo;
    p.halo_low[i] = static_cast<int>(halo.low);
    p.staged_extent[i] = static_cast<int>(gather.source_extent + halo.low + halo.high);
    DimParams& dim = p.dim[i];
    dim.stride = static_cast<int>(gather.phases.size());
    for (int r = 0; r < dim.stride; ++r) {
      const ResidueParams residue = residue_params(gather.phases[r]);
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
  const int64_t padded_channels = problem.groups * p.cin_padded;
  p.staged_stride[2] = padded_channels;
  p.staged_stride[1] = p.staged_extent[2] * p.staged_stride[2];
  p.staged_stride[0] = p.staged_extent[1] * p.staged_stride[1];
  p.staged_batch_stride = p.staged_extent[0] * p.staged_stride[0];
  p.staged_origin = p.halo_low[0] * p.staged_stride[0] + p.halo_low[1] * p.staged_stride[1] +
                    p.halo_low[2] * p.staged_stride[2];
  for (int i = 0; i < kSpatialDims; ++i) {
    p.row_stride[i] = problem.dim[i].position_step * p.staged_stride[i];
  }
  p.rows = output.size(0) * p.positions_per_sample;
  p.per_sample_divider = FastDivider(static_cast<uint32_t>(p.positions_per_sample));
  p.width_divider = FastDivider(static_cast<uint32_t>(p.dim[2].max_positions));
  p.height_divider = FastDivider(static_cast<uint32_t>(p.dim[1].max_positions));
  return p;
}

}  // namespace ct3d::cuda
