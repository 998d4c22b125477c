// The one description of a transposed convolution's geometry: every kernel of the
// three ops (forward, input gradient, weight gradient), on every backend, is
// planned from it.
//
// Along each spatial dimension, input index i reaches output index
//   o = i * stride - padding + k * dilation
// through kernel tap k. output_index() and source_index() are the only places that
// map is written, in its two directions. The forward gathers inputs for each
// output, the input gradient gathers grad_output for each input, and the weight
// gradient pairs the two.
#pragma once

#include <cstdint>

#include "ops/common/conv_transpose3d_args.h"

#ifdef __CUDACC__
#define CT3D_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CT3D_HOST_DEVICE inline
#endif

namespace ct3d {

struct DimGeometry {
  int64_t input = 1, output = 1, kernel = 1, stride = 1, padding = 0, dilation = 1;

  // The output index input index i reaches through tap k (may lie outside the output).
  CT3D_HOST_DEVICE int64_t output_index(int64_t i, int64_t tap) const {
    return i * stride - padding + tap * dilation;
  }
  // The output index, or -1 where it falls outside [0, output).
  CT3D_HOST_DEVICE int64_t output_index_inside(int64_t i, int64_t tap) const {
    const int64_t o = output_index(i, tap);
    return (o >= 0 && o < output) ? o : -1;
  }
  // The inverse: whether some integer i (in range or not) reaches output index o
  // through tap k, and that i.
  CT3D_HOST_DEVICE bool source_index(int64_t o, int64_t tap, int64_t& i) const {
    const int64_t numerator = o + padding - tap * dilation;
    // C++ division truncates toward zero; a negative multiple of stride is still exact.
    if (numerator % stride != 0) return false;
    i = numerator / stride;
    return true;
  }
  // The input index that reaches output index o through tap k, or -1 where none in
  // [0, input) does.
  CT3D_HOST_DEVICE int64_t source_index_inside(int64_t o, int64_t tap) const {
    int64_t i = 0;
    return (source_index(o, tap, i) && i >= 0 && i < input) ? i : -1;
  }
};

// Plain data (no std containers) so that kernels take it by value.
struct ConvGeometry {
  int64_t batch = 1;
  int64_t in_channels = 0, out_channels = 0, groups = 1;
  DimGeometry dim[kSpatialDims];

  CT3D_HOST_DEVICE int64_t in_channels_per_group() const { return in_channels / groups; }
  CT3D_HOST_DEVICE int64_t out_channels_per_group() const { return out_channels / groups; }
  CT3D_HOST_DEVICE int64_t taps() const { return dim[0].kernel * dim[1].kernel * dim[2].kernel; }
  CT3D_HOST_DEVICE int64_t input_positions() const {
    return dim[0].input * dim[1].input * dim[2].input;
  }
  CT3D_HOST_DEVICE int64_t output_positions() const {
    return dim[0].output * dim[1].output * dim[2].output;
  }
  // Elements of the batched input and output (grad_input and grad_output alike).
  int64_t input_elements() const { return batch * in_channels * input_positions(); }
  int64_t output_elements() const { return batch * out_channels * output_positions(); }
};

// Concrete sizes only (kernels never see symbolic shapes). batch is 1 for
// unbatched input.
ConvGeometry geometry_of(const ConvTranspose3dArgs& args);

}  // namespace ct3d
