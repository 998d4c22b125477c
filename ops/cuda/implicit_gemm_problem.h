// The problem one implicit-GEMM launch solves, computed on the host and passed to
// the kernel by value (it fits the 4 KB parameter space).
//
// GEMM view, per (folded) group and stride-phase: output channels of the group on
// the mma's M side, phase positions (n, qd, qh, qw) on its N side ("rows" below, qw
// fastest), reduction over (phase tap, input channel). The input is first staged
// channels-last ([N][D][H][W][group][cin_padded]), so one position of one tap is
// cin_padded consecutive floats: 16-byte copies, no per-channel predicate. All
// phases share one row numbering, sized by the largest phase (residue 0); rows past
// a smaller phase's end are masked.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "ops/conv_transpose3d_args.h"
#include "ops/cuda/fast_divider.h"
#include "ops/cuda/phase_plan.h"

namespace ct3d::cuda {

// Residues per dimension the single launch covers, i.e. the largest stride of the
// fast path.
constexpr int kMaxResidues = 8;

struct ResidueParams {
  int taps;                            // kernel taps landing on this residue
  int positions;                       // phase indices q in [0, positions)
  int8_t kernel_tap[kMaxPhaseTaps];    // which kernel tap each phase tap is
  int16_t input_shift[kMaxPhaseTaps];  // input index = q + input_shift
};

struct DimParams {
  int stride;         // = number of residues
  int max_positions;  // positions of residue 0, the largest
  ResidueParams residue[kMaxResidues];
};

struct PhaseProblem {
  DimParams dim[3];          // depth, height, width
  int phases;                // stride_d * stride_h * stride_w
  int positions_per_sample;  // product of max_positions
  // Row decoding: by positions_per_sample, and by the width and height
  // max_positions.
  FastDivider per_sample_divider, width_divider, height_divider;
  int64_t rows;  // batch * positions_per_sample
  int input_extent[3];
  // Staged input, in floats: one spatial position holds groups * cin_padded values.
  int64_t staged_batch_stride, staged_stride[3];
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

// The problem of one launch (host code): args with its groups already folded,
// input channels padded to channel_chunk, output channels to block_channels, and
// the output's (batched, 5-D) strides.
PhaseProblem make_phase_problem(const ConvTranspose3dArgs& args, int channel_chunk,
                                int block_channels, const at::Tensor& output);

}  // namespace ct3d::cuda
