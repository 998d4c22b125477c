// The CPU forward in its input-stationary form (AVX-512 only): every
// (input position, tap) product is scattered into the output split by stride
// residue (residue_layout.h), so no product is spent on taps that land in the
// input's zero halo, which the phase-gathering forward computes (up to 2x the
// useful products on stride-1 layers whose kernel is large next to the input).
#pragma once

#include <ATen/core/Tensor.h>

#include "ops/common/conv_geometry.h"

namespace ct3d::cpu {

// Products the two forms multiply, for the planner's choice between them (cpu_plan.h):
// the input-stationary form where it multiplies fewer; it needs ct3d's AVX-512 GEMM.
int64_t scatter_forward_products(const ConvGeometry& g);
int64_t gather_forward_products(const ConvGeometry& g);

// input: contiguous (N, C_in, D, H, W) float32 or float64; weight contiguous; bias
// null or C_out values; output: contiguous (N, C_out, ...), every element written.
template <typename scalar_t>
void scatter_forward(const ConvGeometry& g, const at::Tensor& input, const at::Tensor& weight,
                     const scalar_t* bias, at::Tensor& output);

}  // namespace ct3d::cpu
