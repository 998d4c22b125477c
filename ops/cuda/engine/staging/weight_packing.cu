// Host side of the weight-packing pass: the launch of pack_weight_fragments_kernel
// (weight_packing.cuh) on the stream.
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/engine/staging/weight_packing.cuh"
#include "ops/cuda/engine/staging/weight_packing.h"

namespace ct3d::cuda {

at::Tensor pack_weights(const GatherProblem& problem, const PhaseProblem& p, int fold,
                        bool positions_on_m, int wgmma_n, int* nonfinite, const at::Tensor& weight,
                        cudaStream_t stream) {
  const int64_t packed_elements = problem.groups * p.packed_group_stride;
  at::Tensor packed = at::empty({packed_elements}, weight.options());
  constexpr int kPackThreads = 256;
  const int64_t pack_blocks =
      std::min<int64_t>((packed_elements + kPackThreads - 1) / kPackThreads, 4096);
  pack_weight_fragments_kernel<<<pack_blocks, kPackThreads, 0, stream>>>(
      weight.const_data_ptr<float>(), problem.weight, packed.mutable_data_ptr<float>(),
      packed_elements, p.cin_per_group / fold, p.cout_per_group / fold, fold, p.cin_padded,
      p.cout_padded, static_cast<int>(problem.taps()), positions_on_m, wgmma_n, nonfinite);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return packed;
}

bool weight_packing_runs_here() {
  return has_kernel_image(reinterpret_cast<const void*>(&pack_weight_fragments_kernel));
}

}  // namespace ct3d::cuda
