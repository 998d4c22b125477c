#include "ops/polyphase_input_gradient.h"

#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/stack.h>

#include <algorithm>
#include <vector>

namespace ct3d {
namespace {

// One dimension's phases (see the header): per residue r its first tap c, tap count M
// and shift e; the common tap count T, the staged extent and grad_output's zero padding.
struct PhaseSplit {
  int64_t stride = 1, taps = 0, staged = 0, pad_low = 0, pad_high = 0;
  std::vector<int64_t> first_tap, tap_count, shift;
};

PhaseSplit split_dimension(const DimGeometry& dim) {
  PhaseSplit split;
  const int64_t s = dim.stride, p = dim.padding, kernel = dim.kernel;
  split.stride = s;
  for (int64_t r = 0; r < s; ++r) {
    const int64_t c = (r + p) % s;
    split.first_tap.push_back(c);
    split.tap_count.push_back(c < kernel ? (kernel - 1 - c) / s + 1 : 0);
    split.shift.push_back((c - r - p) / s);  // exact: c = r + p (mod s)
    split.taps = std::max(split.taps, split.tap_count.back());
  }
  split.staged = dim.input + split.taps - 1;
  for (int64_t r = 0; r < s; ++r) {
    const int64_t first = s * split.shift[r] + r;
    const int64_t last = s * (split.staged - 1 + split.shift[r]) + r;
    split.pad_low = std::max(split.pad_low, -first);
    split.pad_high = std::max(split.pad_high, last - (dim.output - 1));
  }
  return split;
}

}  // namespace

bool polyphase_input_gradient_applies(const ConvGeometry& geometry) {
  bool strided = false;
  for (const DimGeometry& dim : geometry.dim) {
    if (dim.dilation != 1) return false;
    strided = strided || dim.stride > 1;
  }
  return strided;
}

at::Tensor polyphase_input_gradient(const ConvGeometry& geometry, const at::Tensor& grad_output,
                                    const at::Tensor& weight, const StrideOneForward& forward) {
  const int64_t groups = geometry.groups, batch = grad_output.size(0);
  const int64_t cout_g = geometry.out_channels_per_group(),
                cin_g = geometry.in_channels_per_group();
  PhaseSplit split[kSpatialDims];
  std::vector<int64_t> pad;  // constant_pad_nd's order: last dimension first
  for (int d = kSpatialDims - 1; d >= 0; --d) {
    split[d] = split_dimension(geometry.dim[d]);
    pad.push_back(split[d].pad_low);
    pad.push_back(split[d].pad_high);
  }
  const at::Tensor padded = at::constant_pad_nd(grad_output, pad, 0);
  // Each kernel dimension padded with zero taps to stride x T: tap c + s m with m >= M
  // (one a phase lacks) lies in the pad, so a phase's taps are one strided slice.
  std::vector<int64_t> weight_pad;
  for (int d = kSpatialDims - 1; d >= 0; --d) {
    weight_pad.push_back(0);
    weight_pad.push_back(split[d].stride * split[d].taps - geometry.dim[d].kernel);
  }
  const at::Tensor padded_weight = at::constant_pad_nd(weight, weight_pad, 0);
  std::vector<at::Tensor> phases, phase_weights;
  const auto add_phase = [&](const int64_t (&residue)[kSpatialDims]) {
    at::Tensor phase = padded, phase_weight = padded_weight;
    for (int d = 0; d < kSpatialDims; ++d) {
      const PhaseSplit& s = split[d];
      const int64_t r = residue[d];
      const int64_t start = s.stride * s.shift[r] + r + s.pad_low;
      phase = phase.slice(2 + d, start, start + s.stride * (s.staged - 1) + 1, s.stride);
      const int64_t first = s.first_tap[r];
      phase_weight =
          phase_weight.slice(2 + d, first, first + s.stride * (s.taps - 1) + 1, s.stride);
    }
    phases.push_back(
        phase.reshape({batch, groups, cout_g, split[0].staged, split[1].staged, split[2].staged}));
    // (C_in, C_out / g, taps) -> (g, C_out / g, C_in / g, taps): the forward's weight
    // takes the staged channels as its input channels.
    phase_weights.push_back(
        phase_weight.reshape({groups, cin_g, cout_g, split[0].taps, split[1].taps, split[2].taps})
            .transpose(1, 2));
  };
  int64_t residue[kSpatialDims];
  for (residue[0] = 0; residue[0] < split[0].stride; ++residue[0]) {
    for (residue[1] = 0; residue[1] < split[1].stride; ++residue[1]) {
      for (residue[2] = 0; residue[2] < split[2].stride; ++residue[2]) add_phase(residue);
    }
  }
  const int64_t count = static_cast<int64_t>(phases.size());
  // Staged channels (group, phase, C_out / g), so that the forward's groups stay whole.
  const at::Tensor staged = at::stack(phases, 2).reshape(
      {batch, groups * count * cout_g, split[0].staged, split[1].staged, split[2].staged});
  // Flipped once for all phases: staged tap k' is phase tap m = T - 1 - k'.
  const at::Tensor staged_weight =
      at::stack(phase_weights, 1)
          .reshape({groups * count * cout_g, cin_g, split[0].taps, split[1].taps, split[2].taps})
          .flip({2, 3, 4});
  return forward(staged, staged_weight, {split[0].taps - 1, split[1].taps - 1, split[2].taps - 1},
                 groups);
}

}  // namespace ct3d
