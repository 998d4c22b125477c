// What the gathering launchers share besides the GEMM: the outputs no tap reaches and
// the layout the source is staged in. Host code, on ATen tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/staging/staged_layout.h"

namespace ct3d::cuda {

// Outputs no tap reaches are the bias alone (PhaseProblem::uncovered_outputs): the
// gathering launchers fill the whole output with the bias (or zeros) first, then run the
// GEMM over the phases that have taps.
void fill_uncovered_outputs(const at::Tensor& bias, at::Tensor& output);

// The layout the GEMM stages its source in: channels padded to the pipeline's
// k-chunk, the problem's halos.
StagedLayout gather_staged_layout(const GatherProblem& problem);

}  // namespace ct3d::cuda
