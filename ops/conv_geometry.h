// The one description of a transposed convolution's geometry that every CUDA
// implicit GEMM (forward, input gradient, weight gradient) is planned from.
//
// Along each spatial dimension, input index i reaches output index
//   o = i * stride - padding + k * dilation
// through kernel tap k; output_index() is the only place that formula is written
// for the engine. The forward gathers inputs for each output, the input gradient
// gathers grad_output for each input, and the weight gradient pairs the two.
#pragma once

#include <array>
#include <cstdint>

#include "ops/conv_transpose3d_args.h"
#include "ops/conv_transpose3d_backward_args.h"

namespace ct3d {

struct DimGeometry {
  int64_t input = 1, output = 1, kernel = 1, stride = 1, padding = 0, dilation = 1;

  int64_t output_index(int64_t input_index, int64_t tap) const {
    return input_index * stride - padding + tap * dilation;
  }
};

struct ConvGeometry {
  int64_t batch = 1;
  int64_t in_channels = 0, out_channels = 0, groups = 1;
  std::array<DimGeometry, kSpatialDims> dim{};

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  int64_t taps() const { return dim[0].kernel * dim[1].kernel * dim[2].kernel; }
  int64_t input_positions() const { return dim[0].input * dim[1].input * dim[2].input; }
  int64_t output_positions() const { return dim[0].output * dim[1].output * dim[2].output; }
};

// Concrete sizes only (the CUDA kernels never see symbolic shapes). The forward's
// batch is 1 for unbatched input.
ConvGeometry geometry_of(const ConvTranspose3dArgs& args);
ConvGeometry geometry_of(const BackwardProblem& problem);

}  // namespace ct3d
