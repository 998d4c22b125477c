// The strided-lines form's launch (strided_lines_plan.h): forwards with width stride 2
// and few target channels, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Runs the forward problem (groups folded `fold` at a time; arguments as
// launch_implicit_gemm) on the strided-lines form where it applies and returns true;
// returns false, having done nothing, where it does not (not sm_90a, folded groups, the
// plan's conditions).
bool launch_strided_lines(const GatherProblem& problem, int fold, const at::Tensor& source,
                          const at::Tensor& weight, const at::Tensor& bias, at::Tensor& output,
                          cudaStream_t stream);

}  // namespace ct3d::cuda
