// Both shifted-window launches (shifted_window_launch.cu, tap_rows_launch.cu) run
// over the batch a chunk of samples at a time: the chunk's source staged on the
// plan's compact grid (quad_staging.h: split quad planes, or octet planes for
// float16 and bfloat16), then the kernel.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/staging/staging.h"
#include "ops/cuda/engine/staging/quad_staging.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"

namespace ct3d::cuda {

// Calls launch(planes, first sample, samples) per chunk, chunks sized so that the
// planes stay within staging_budget_floats (counted as 4-byte floats). kRawQuads:
// float32 quad planes unsplit (RawTf32Operands).
template <bool kHalfOperands, bool kRawQuads = false, class Launch>
void for_each_window_chunk(const GatherProblem& problem, const ShiftedWindowPlan& plan,
                           const at::Tensor& source, cudaStream_t stream,
                           int64_t staging_budget_floats, Launch&& launch) {
  // The compact grid (shifted_window_plan.h): staged extents of plan's pitches.
  StagedLayout layout = gather_staged_layout(problem);
  layout.staged_extent[1] = plan.plane_lines;
  layout.staged_extent[2] = plan.line_pitch;
  const int64_t batch = source.size(0);
  const int64_t sample_floats = kHalfOperands
                                    ? (octet_planes_bytes(layout, plan.plane_rows) + 3) / 4
                                : kRawQuads ? raw_quad_planes_floats(layout, plan.plane_rows)
                                            : quad_planes_floats(layout, plan.plane_rows);
  const int64_t chunk = staging_chunk_samples(sample_floats, staging_budget_floats, batch);
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    const int64_t samples = std::min(chunk, batch - n0);
    const at::Tensor chunk_source = source.narrow(0, n0, samples);
    launch(kHalfOperands ? stage_octets(layout, plan.plane_rows, chunk_source, stream)
                         : stage_quads(layout, plan.plane_rows, chunk_source, stream, !kRawQuads),
           n0, samples);
  }
}

}  // namespace ct3d::cuda
