// The strided-lines form's launch (strided_lines_plan.h): forwards with width stride 2
// and few target channels, on Hopper.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/planner/gemm_plan.h"

namespace ct3d::cuda {

// Runs a plan of the strided-lines form (gemm_plan.h).
void launch_strided_lines(const GemmPlan& plan, const at::Tensor& source, const at::Tensor& weight,
                          const at::Tensor& bias, at::Tensor& output, cudaStream_t stream);

}  // namespace ct3d::cuda
