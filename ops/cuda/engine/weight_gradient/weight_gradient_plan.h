// The weight gradient's plan of one call and the hook the fused backward gives it: what
// its launch (weight_gradient.h) and its kernels' host side (weight_gradient_splits.h)
// share.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "ops/common/conv_geometry.h"
#include "ops/cuda/engine/staging/staging.h"

namespace ct3d::cuda {

// The plan of one call, made once: small groups folded (block-diagonal tiles whose
// off-diagonal blocks are computed and dropped) and both operands' staged layouts.
struct WeightGradientPlan {
  ConvGeometry geometry;
  int64_t fold = 1, groups = 1, cin = 0, cout = 0;  // folded groups and their channels
  StagedLayout input, output;
  // Operands widened from float16 or bfloat16: exact in TF32, so the wgmma mainloop
  // takes one product per multiply-add (hi*hi) instead of three.
  bool operands_exact_in_tf32 = false;
  // The staged copies of a chunk of samples take at most this many floats: the backward's
  // budget (staging.h) for the input and grad_output.
  int64_t staging_floats = 0;
};

WeightGradientPlan plan_weight_gradient(const ConvGeometry& geometry);

// The most floats the per-split partial tiles take at once (both mainloops' launches).
constexpr int64_t kWeightGradientWorkspaceFloats = int64_t{1} << 24;  // 64 MB

// Called once per chunk of samples, after the chunk's GEMM is queued, with the
// chunk's grad_output staged in plan.output's layout: the fused backward runs the
// input gradient on it, so grad_output is staged once for both gradients.
using StagedChunkHook = std::function<void(int64_t first_sample, int64_t samples,
                                           const at::Tensor& staged_grad_output)>;

}  // namespace ct3d::cuda
