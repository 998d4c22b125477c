// Host side of the weight-packing pass (weight_packing.cuh).
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// Packs the weights of `problem` (its groups folded `fold` at a time) for launch p on
// the stream, as pack_weight_fragments_kernel lays them out for that mainloop
// (positions_on_m, wgmma_n); clears *nonfinite when given. Run on every call: the
// weights may change between calls.
at::Tensor pack_weights(const GatherProblem& problem, const PhaseProblem& p, int fold,
                        bool positions_on_m, int wgmma_n, int* nonfinite, const at::Tensor& weight,
                        cudaStream_t stream);

// Whether this library holds packing code the current device runs (the engine's
// kernels are built for the same architectures).
bool weight_packing_runs_here();

}  // namespace ct3d::cuda
