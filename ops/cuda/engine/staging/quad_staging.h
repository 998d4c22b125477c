// The shifted-window GEMM's staged source (wgmma_shifted_window_kernel.cuh): a
// staged grid as stage_channels_last's (data at halo_low, zero elsewhere, a group's
// channels zero-padded to 16; layout.staged_extent gives the pitches, which may be
// less than extent plus both halos: shifted_window_plan.h's compact grid), but
// already split into TF32 hi and lo and cut into "quad planes":
// per sample, group and 16-channel chunk, quad j holds channels j, j + 4, j + 8 and
// j + 12 of the chunk (the K order of a k-step's half in wgmma_weight_layout.h) as
// plane_rows positions x 4 floats, hi plane then lo plane:
//   [n][group][chunk][quad][hi, lo][plane_rows][4].
// So the rows a stage needs of one quad are one contiguous run: one bulk copy, and
// a K-major wgmma operand as it lands (8 rows x 16 bytes per core matrix).
//
// A float16 or bfloat16 source is staged as it is, in "octet planes" of the same 16
// bytes per row: octet o of a chunk holds its channels 8 o .. 8 o + 7,
//   [n][group][chunk][octet][plane_rows][8].
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/cuda/engine/staging/staging.h"

namespace ct3d::cuda {

// Floats of one sample's quad planes.
int64_t quad_planes_floats(const StagedLayout& layout, int64_t plane_rows);

// source: contiguous float32 (N, groups * channels_per_group, *extent), N <= 65535
// per launch (chunked inside). Positions from the staged grid's end to plane_rows are
// zero.
at::Tensor stage_split_quads(const StagedLayout& layout, int64_t plane_rows,
                             const at::Tensor& source, cudaStream_t stream);

// The same positions unsplit, one plane per quad (the tap-columns form with A from
// registers splits them itself, KERNEL_LOG "unsplit quad planes"):
// [n][group][chunk][quad][plane_rows][4].
int64_t raw_quad_planes_floats(const StagedLayout& layout, int64_t plane_rows);
// split: stage_split_quads' planes; else the raw quad planes.
at::Tensor stage_quads(const StagedLayout& layout, int64_t plane_rows, const at::Tensor& source,
                       cudaStream_t stream, bool split);

// Bytes of one sample's octet planes.
int64_t octet_planes_bytes(const StagedLayout& layout, int64_t plane_rows);

// source: contiguous float16 or bfloat16, otherwise as stage_split_quads'. Returns the
// octet planes in the source's dtype.
at::Tensor stage_octets(const StagedLayout& layout, int64_t plane_rows, const at::Tensor& source,
                        cudaStream_t stream);

}  // namespace ct3d::cuda
