// A direct (no GEMM) stride-1 correlation on AVX-512 CPUs:
//   target[c][p] = bias[c] + sum over taps t, source channels s of
//                  source[s][p + offset_t] * weights[t][s][c]
// with p running over the target's own extents (no positions on a padded pitch)
// and taps whose source row lies wholly in the zero halo skipped per row. It serves
// the stride-1 forward (source = input, offsets = -c_k) and the stride-1 input
// gradient (source = grad_output, offsets = +c_k) of stride-1 layers, where the
// GEMM forms multiply up to 1.8x the useful products on a padded pitch and run
// small GEMMs for layers with few channels.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <vector>

#include "ops/common/conv_geometry.h"
#include "ops/cpu/shifted_gemm.h"

namespace ct3d::cpu {

struct CorrelationTap {
  std::array<int64_t, 3> shift;  // source index = target index + shift (per dimension)
};

// Target channels computed together (accumulators in registers).
constexpr int64_t kDirectChannels = 16;

// source: one part, its `low` the halo; target: contiguous (N, C_t, TD, TH, TW);
// weights: (taps, C_s, C_t) per group, contiguous; bias: null or C_t values of the
// group. Groups: source channels [group * C_s, ...), target channels
// [group * C_t, ...). Parallel over (sample, group, channel block, target plane).
template <typename T>
void direct_correlation(const PaddedVolume& source, int64_t source_channels_total, int64_t groups,
                        int64_t source_channels, int64_t target_channels,
                        const std::vector<CorrelationTap>& taps, const T* weights, const T* bias,
                        std::array<int64_t, 3> source_extent, T* target, int64_t batch,
                        std::array<int64_t, 3> target_extent);

// The forward and the input gradient as direct correlations (stride 1 only).
template <typename T>
void direct_forward(const ConvGeometry& g, const at::Tensor& input, const at::Tensor& weight,
                    const T* bias, at::Tensor& output);
template <typename T>
void direct_input_gradient(const ConvGeometry& g, const at::Tensor& grad_output,
                           const at::Tensor& weight, at::Tensor& grad_input);

}  // namespace ct3d::cpu
