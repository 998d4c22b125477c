// The input gradient of a strided transposed convolution as one stride-1 transposed
// convolution on ct3d's own forward (KERNEL_LOG dg1). Per dimension (dilation 1, stride
// s, padding p, kernel K), grad_output index s i - p + k splits by its residue r mod s:
// taps k = c_r + s m (c_r = (r + p) mod s, m < M_r) read the phase r of grad_output at
// i + m + e_r (e_r = (c_r - r - p) / s). Staging each phase shifted by e_r puts every
// phase's taps on one grid of T = max M_r taps, so
//   grad_input[ci][i] = sum over (phase, co, m < T) of staged[(phase, co)][i + m] * U[(phase,
//   co)][ci][m]
// with U zero where m >= M_r: a stride-1 correlation, i.e. ct3d's forward with stride 1,
// padding T - 1 and the taps flipped. Taps wasted: none for k4 stride 2 (M = 2, 2), a
// quarter per dimension for k3 stride 2 (M = 1, 2). Backend-agnostic (ATen ops and the
// forward passed in).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "ops/conv_geometry.h"

namespace ct3d {

// ct3d's forward with stride 1, output padding 0 and dilation 1: (input, weight,
// padding, groups) -> output.
using StrideOneForward = std::function<at::Tensor(const at::Tensor& input, const at::Tensor& weight,
                                                  const Int3& padding, int64_t groups)>;

// Whether the form applies: dilation 1 in every dimension and a stride above 1 in one.
bool polyphase_input_gradient_applies(const ConvGeometry& geometry);

// grad_input (N, C_in, D, H, W) of grad_output (N, C_out, D', H', W') and weight
// (C_in, C_out / groups, kD, kH, kW), both 5-D.
at::Tensor polyphase_input_gradient(const ConvGeometry& geometry, const at::Tensor& grad_output,
                                    const at::Tensor& weight, const StrideOneForward& forward);

}  // namespace ct3d
