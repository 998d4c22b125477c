// The tap-columns form's compute warpgroups with A from registers (wgmma's RS form;
// KERNEL_LOG "A from registers", "unsplit quad planes"): per k-step a lane loads its window
// fragment from the stage's unsplit quad planes once and splits it into TF32 hi and lo, and the
// three products read them from registers; only B (the weights) comes from shared memory. The form
// with both operands there reads the 64-position A for each of the three wgmmas and
// needs twice the window's bytes staged, which is what capped it (the shared-memory
// model in KERNEL_LOG "(width tap, channel) rows on wgmma's N"). Two fragment sets alternate
// between stages, so a stage's loads overlap the previous stage's wgmmas; one stage stays in
// flight.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/gather/implicit_gemm_warp_tiles.cuh"  // split_tf32
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/window/shifted_window_stage.cuh"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/window_boxes.cuh"

namespace ct3d::cuda {

// A lane's A values of one stage, split: per k-step and m-tile, rows g and g + 8 at
// k t and t + 4 ({row g, k t}, {row g + 8, k t}, {row g, k t + 4}, {row g + 8, k t + 4}).
template <int kStageSteps, int kMTiles>
struct WindowFragments {
  uint32_t hi[kStageSteps][kMTiles][4], lo[kStageSteps][kMTiles][4];

  // Keeps the compiler from reusing these registers before the wgmmas reading them
  // are known done.
  __device__ __forceinline__ void hold() {
#pragma unroll
    for (int step = 0; step < kStageSteps; ++step)
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        fence_registers(hi[step][mt]);
        fence_registers(lo[step][mt]);
      }
  }
};

// Loads and splits the fragments of the stage at `stage` (floats) from the staged quad
// planes: a k-step's planes are quad 0 and quad 1 (channels 0-3 and 4-7), each
// window_pitch rows of 4 floats: element (row, k) at quad k / 4, element k % 4. `row0`
// is this lane's row g of m-tile 0, m-tile mt's 64 rows on. (Written out rather than
// through FragmentOffsets: offsets as constants from one base made L1-70 5 % faster
// than per-tile registers, KERNEL_LOG "why the box kernel is slow".)
template <int kStageSteps, int kMTiles>
__device__ __forceinline__ void load_staged_fragments(const float* stage, int window_pitch,
                                                      int row0, int t,
                                                      WindowFragments<kStageSteps, kMTiles>& f) {
  const int plane = 4 * window_pitch;  // floats
#pragma unroll
  for (int step = 0; step < kStageSteps; ++step) {
    const float* planes = stage + step * 2 * plane;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const int r0 = 4 * (row0 + 64 * mt) + t, r1 = r0 + 32;
      split_tf32(make_float4(planes[r0], planes[r1], planes[plane + r0], planes[plane + r1]),
                 f.hi[step][mt], f.lo[step][mt]);
    }
  }
}

// The same from a stage's TMA boxes (window_boxes.cuh), where `offsets` places them.
template <int kStageSteps, int kMTiles>
__device__ __forceinline__ void load_box_fragments(const float* stage,
                                                   const FragmentOffsets<kMTiles>& offsets,
                                                   WindowFragments<kStageSteps, kMTiles>& f) {
#pragma unroll
  for (int step = 0; step < kStageSteps; ++step) {
    const float* k_low = stage + step * offsets.step + offsets.k_offset[0];
    const float* k_high = stage + step * offsets.step + offsets.k_offset[1];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const int r0 = offsets.row_offset[mt][0], r1 = offsets.row_offset[mt][1];
      split_tf32(make_float4(k_low[r0], k_low[r1], k_high[r0], k_high[r1]), f.hi[step][mt],
                 f.lo[step][mt]);
    }
  }
}

// The same from line or flat tiles' boxes (flat_rows): a box per kFlatBoxRows rows, a
// channel kFlatBoxWidth floats, so each value lies a compile-time distance from `lane`
// (flat_fragment_lane) and the loads need no address arithmetic: with runtime offsets
// (load_box_fragments) L1-70's flat tiles ran 190 instructions a k-step against the
// staged form's 168, and 61, 58 and 70 were 4-6 % slower (KERNEL_LOG "fragments at compile-time
// offsets").
template <int kStageSteps, int kMTiles>
__device__ __forceinline__ const float* flat_fragment_lane(const float* stage, int row0, int t) {
  // A lane's rows (row0, + 8, + 64 per m-tile) share row0's box: row0 % 128 is below
  // 64 with two m-tiles, below 56 + 64 with one (wgmma_tap_rows_kernel.cuh).
  static_assert(kMTiles <= 2, "a lane's rows in one box");
  constexpr int kBoxFloats = kStageSteps * 8 * kFlatBoxWidth;
  return stage + (row0 / kFlatBoxRows) * kBoxFloats + row0 % kFlatBoxRows + 2 * t * kFlatBoxWidth;
}

template <int kStageSteps, int kMTiles>
__device__ __forceinline__ void load_flat_fragments(const float* lane,
                                                    WindowFragments<kStageSteps, kMTiles>& f) {
#pragma unroll
  for (int step = 0; step < kStageSteps; ++step) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const float* k_low = lane + step * 8 * kFlatBoxWidth + 64 * mt;
      const float* k_high = k_low + kFlatBoxWidth;
      split_tf32(make_float4(k_low[0], k_low[8], k_high[0], k_high[8]), f.hi[step][mt],
                 f.lo[step][mt]);
    }
  }
}

// One stage's products: per k-step the weights' hi and lo descriptors (K-major core
// matrices, as the SS form's B), per m-tile lo*hi, hi*lo, hi*hi. accumulate 0 starts
// the chain.
template <int kN, int kStageSteps, int kMTiles, int kAccumulators>
__device__ __forceinline__ void register_a_products(float (&acc)[kMTiles][kAccumulators],
                                                    const WindowFragments<kStageSteps, kMTiles>& f,
                                                    uint32_t weights, uint32_t weight_part_bytes,
                                                    uint32_t step_weight_bytes, int accumulate) {
#pragma unroll
  for (int step = 0; step < kStageSteps; ++step) {
    const uint32_t step_weights = weights + step * step_weight_bytes;
    const uint64_t b_hi = matrix_descriptor(step_weights, 128, 256);
    const uint64_t b_lo = matrix_descriptor(step_weights + weight_part_bytes, 128, 256);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      Wgmma<kN>::run(acc[mt], f.lo[step][mt], b_hi, accumulate);
      Wgmma<kN>::run(acc[mt], f.hi[step][mt], b_lo, 1);
      Wgmma<kN>::run(acc[mt], f.hi[step][mt], b_hi, 1);
    }
    accumulate = 1;
  }
}

}  // namespace ct3d::cuda
