// Stride-phase decomposition of a transposed convolution (host side, no CUDA).
//
// Output index o = i * stride - padding + k * dilation. Split every output
// dimension by phase r = o mod stride and write o = q * stride + r: the taps k that
// reach phase r are exactly those with (r + padding - k * dilation) divisible by
// stride, and for them the input index is i = q + (r + padding - k * dilation) /
// stride. So each phase is a dense stride-1 gather over its own taps, and no
// multiply is spent on the zeros a zero-inserted input would have.
#pragma once

#include <cstdint>
#include <vector>

namespace ct3d {

struct PhaseDimPlan {
  int64_t residue = 0;               // output index = phase index * stride + residue
  int64_t positions = 0;             // phase indices q in [0, positions)
  std::vector<int> taps;             // kernel tap index k of each phase tap
  std::vector<int64_t> input_shift;  // input index = q + input_shift
};

// Every phase of one dimension, residue 0 .. stride - 1, including empty ones.
// Taps that cannot reach the input for any q are dropped. A phase's taps are an
// arithmetic progression: the k solving (r + padding - k * dilation) = 0 mod stride
// step by stride / gcd(stride, dilation), their shifts by -dilation / gcd, and the
// dropped ones lie at either end.
std::vector<PhaseDimPlan> plan_phases(int64_t input_extent, int64_t output_extent, int64_t kernel,
                                      int64_t stride, int64_t padding, int64_t dilation);

}  // namespace ct3d
