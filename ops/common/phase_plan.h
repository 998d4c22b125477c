// Stride-phase decomposition of a transposed convolution (host side, no CUDA).
//
// Split every output dimension by phase r = o mod stride and write
// o = q * stride + r. A tap k reaches phase r exactly when some input index sends
// output index r through it (DimGeometry::source_index), and then input index
// q + shift reaches output q * stride + r, with shift that source index of r. So
// each phase is a dense stride-1 gather over its own taps, and no multiply is spent
// on the zeros a zero-inserted input would have.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/common/conv_geometry.h"

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
std::vector<PhaseDimPlan> plan_phases(const DimGeometry& dim);

}  // namespace ct3d
