#include "ops/cuda/engine/gather/gather_operands.h"

#include "ops/cuda/engine/problem/block_k.h"

namespace ct3d::cuda {

void fill_uncovered_outputs(const at::Tensor& bias, at::Tensor& output) {
  if (bias.defined()) {
    output.copy_(bias.view({1, -1, 1, 1, 1}).expand_as(output));
  } else {
    output.zero_();
  }
}

StagedLayout gather_staged_layout(const GatherProblem& problem) {
  StagedLayout layout;
  layout.groups = problem.groups;
  layout.channels_per_group = problem.reduce_channels;
  layout.padded_channels_per_group = round_up(problem.reduce_channels, kBlockK);
  for (int i = 0; i < kSpatialDims; ++i) {
    const GatherDim& dim = problem.dim[i];
    layout.extent[i] = dim.source_extent;
    layout.halo_low[i] = dim.halo.low;
    layout.staged_extent[i] = dim.source_extent + dim.halo.low + dim.halo.high;
  }
  return layout;
}

}  // namespace ct3d::cuda
