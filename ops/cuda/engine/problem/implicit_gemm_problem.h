// The problem one gathering implicit-GEMM launch solves. The engine computes
//   target[n][m][q * phases + r] = sum over (tap t, channel c) of
//       source[n][c][q * position_step + shift_r(t)] * weight(m, c, tap_r(t))
// per dimension and group, which covers two of ct3d's three ops (GatherProblem):
// the forward (source = input, target = output, one phase per output residue,
// position_step 1) and the input gradient (source = grad_output, target = input
// gradient, one phase, position_step = stride). PhaseProblem is its launch form,
// computed on the host and passed to the kernel by value (it fits the 4 KB
// parameter space).
//
// GEMM view, per (folded) group and phase: target channels of the group on the
// mma's M side, phase positions (n, qd, qh, qw) on its N side ("rows" below, qw
// fastest), reduction over (phase tap, source channel). The source is first staged
// channels-last ([N][D'][H'][W'][group][cin_padded]), so one position of one tap is
// cin_padded consecutive floats: 16-byte copies, no per-channel predicate. D', H',
// W' carry a zero halo wide enough that every tap of every row stays inside: the
// gather needs no per-row validity test. All phases share one row numbering, sized
// by the largest phase (residue 0); rows past a smaller phase's end are computed
// (from the halo) and not stored.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <vector>

#include "ops/common/conv_geometry.h"
#include "ops/common/phase_plan.h"
#include "ops/cuda/engine/problem/fast_divider.h"

namespace ct3d::cuda {

// Residues per dimension the single launch covers, i.e. the largest stride of the
// fast path.
constexpr int kMaxResidues = 8;

// The taps of one residue of one dimension, an arithmetic progression (phase_plan.h):
// phase tap t is kernel tap first_tap + t * tap_step and reads input index
// q + first_shift + t * shift_step.
struct ResidueParams {
  int taps;
  int positions;  // phase indices q in [0, positions)
  int first_tap, tap_step;
  int first_shift, shift_step;
};

struct DimParams {
  int stride;         // = number of residues
  int max_positions;  // positions of residue 0, the largest
  // Residues that have both taps and positions, ascending: only their phases are
  // launched.
  int active_residues;
  int8_t active_residue[kMaxResidues];
  ResidueParams residue[kMaxResidues];
};

// Zero halo of one staged dimension: staged index = input index + low.
struct StagedExtent {
  int64_t low = 0, high = 0;
};

// One dimension of a GatherProblem.
struct GatherDim {
  int64_t source_extent = 1;  // the staged operand's extent
  int64_t target_extent = 1;  // the GEMM output's extent
  int64_t kernel = 1;
  int64_t position_step = 1;         // source index advance per phase position
  std::vector<PhaseDimPlan> phases;  // residue 0 .. phase count - 1
  StagedExtent halo;                 // staged_halo(*this), worked out once with the phases
};

// Where weight(m, c, tap) of a convolution group lies in the weight tensor, in
// floats; the taps of one (m, c) are consecutive.
struct WeightLayout {
  int64_t group_stride = 0, reduce_stride = 0, target_stride = 0;
};

struct GatherProblem {
  int64_t batch = 1, groups = 1;
  int64_t reduce_channels = 0, target_channels = 0;  // per group
  std::array<GatherDim, kSpatialDims> dim;
  WeightLayout weight;
  // Every source and weight value is a TF32 value (float16 or bfloat16 widened to
  // float32): one TF32 product per multiply-add is exact, 3xTF32 is not needed.
  bool operands_exact_in_tf32 = false;
  // The input gradient's problem (input_gradient_gather), else the forward's.
  bool input_gradient = false;

  int64_t taps() const { return dim[0].kernel * dim[1].kernel * dim[2].kernel; }
};

// The forward: output[n][co][o] = sum of input[n][ci][i] * weight[ci][co][k] over
// the taps that reach o, split by stride phase.
GatherProblem forward_gather(const ConvGeometry& geometry);
// The input gradient, a strided convolution: grad_input[n][ci][i] = sum of
// grad_output[n][co][i * stride - padding + k * dilation] * weight[ci][co][k].
GatherProblem input_gradient_gather(const ConvGeometry& geometry);

struct PhaseProblem {
  DimParams dim[3];  // depth, height, width
  // Phases launched: the product of the active residues. A residue with positions
  // but no taps (e.g. dilation 2 with stride 2: every other residue) leaves outputs
  // that are bias alone; uncovered_outputs says the launch must fill them first.
  int phases;
  bool uncovered_outputs;
  int positions_per_sample;  // product of max_positions
  // Row decoding: by positions_per_sample, and by the width and height
  // max_positions.
  FastDivider per_sample_divider, width_divider, height_divider;
  int64_t rows;  // batch * positions_per_sample
  int source_extent[3];
  int halo_low[3];       // staged index = source index + halo_low
  int staged_extent[3];  // source extent plus both halos
  // Staged input, in floats: one spatial position holds groups * cin_padded values.
  int64_t staged_batch_stride, staged_stride[3];
  int64_t staged_origin;  // offset of input position (0, 0, 0) in a staged sample
  int64_t row_stride[3];  // staged offset per phase position: position_step * staged_stride
  int64_t output_batch_stride, output_channel_stride, output_stride[3];
  int cin_per_group, cout_per_group;
  // Channels per group rounded up to the pipeline's k-chunk; the padding is zero in
  // both the staged input and the packed weights.
  int cin_padded, cout_padded;
  int kernel_h, kernel_w;
  // Packed weights, floats per group (layout: pack_weight_fragments_kernel).
  int64_t packed_group_stride;
};

inline int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The zero halo one dimension needs so that rows q < max_positions of every residue
// read inside the staged source at every one of their taps.
StagedExtent staged_halo(const GatherDim& dim);

// The problem of one launch (host code): a GatherProblem with its groups already
// folded, source channels padded to channel_chunk, target channels to
// block_channels, and the target's (batched, 5-D) strides.
PhaseProblem make_phase_problem(const GatherProblem& problem, int channel_chunk, int block_channels,
                                const at::Tensor& output);

}  // namespace ct3d::cuda
