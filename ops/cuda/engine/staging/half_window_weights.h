// The weights of the shifted-window kernels' float16 / bfloat16 form
// (window_operands.cuh, HalfOperands), packed as their stages read them: per (outer
// index, 16-channel chunk) a block of M rows x 16 input channels as wgmma's K-major
// core matrices (8 rows x 8 values; the chunk's channels 0-7 and 8-15 128 bytes apart,
// 8-row groups 256 bytes apart), zero in the padding rows and channels:
//   [group][step = outer x chunks + chunk, padded to steps_per_group][rows / 8][2][8][8].
// The shifted-window GEMM: outer = the kernel tap, rows = the target channels padded
// to blocks of 64. The tap-rows form: outer = (depth tap, height tap) of the phase,
// rows = (width tap, target channel) pairs, width tap tw's channels from row
// tw * channel_pitch; its steps padded (zero) to whole pipeline stages. Run on every
// call: the weights may change.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// The packed weights (the weight's dtype) and the bias widened to float32 (undefined
// without a bias), which the kernels add before their one rounding. The same launch
// widens the bias: a separate cast was a third of a small layer's host time.
struct HalfPackedWeights {
  at::Tensor weights, bias;
};

// rows: M rows per step; channel_pitch 0 for the shifted-window GEMM's layout, else the
// tap-rows form's rows per width tap; stage_steps: the steps are padded to a multiple
// of it. weight: float16 or bfloat16, contiguous; bias: undefined, or contiguous in the
// weight's dtype.
HalfPackedWeights pack_half_window_weights(const GatherProblem& problem, const PhaseProblem& p,
                                           int rows, int channel_pitch, int stage_steps,
                                           const at::Tensor& weight, const at::Tensor& bias,
                                           cudaStream_t stream);

}  // namespace ct3d::cuda
