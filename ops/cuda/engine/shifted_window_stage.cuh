// What both shifted-window kernels (wgmma_shifted_window_kernel.cuh,
// wgmma_tap_rows_kernel.cuh) do alike: the order of their tiles, the producer's walk
// over a tile's stages with the window copies of each, and the split products of a
// k-step with both operands in a stage's shared memory.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/hopper_ptx.cuh"
#include "ops/cuda/engine/implicit_gemm_problem.h"
#include "ops/cuda/engine/shifted_window_plan.h"
#include "ops/cuda/engine/wgmma_instructions.cuh"

namespace ct3d::cuda {

// The block both kernels run: warpgroup 0 loads (one thread issues the copies), warpgroups
// 1 and 2 compute; kN is a compute warpgroup's wgmma N, kExact as in
// window_step_products.
template <int kColumns, bool kExact>
struct WindowBlockShape {
  static constexpr int kN = kColumns;
  static constexpr bool kExactOperands = kExact;
  static constexpr int kThreads = 384;
  static constexpr int kComputeThreads = 256;
  static constexpr int kMaxSlots = 8;
  // The block starts with 168 registers a thread (64 K / 384); setmaxnreg moves them
  // from the producer warpgroup to the compute ones, whose .inc waits for them.
  static constexpr int kProducerRegisters = 56;
  static constexpr int kComputeRegisters = 224;
  static_assert(128 * (168 - kProducerRegisters) >= 256 * (kComputeRegisters - 168),
                "the compute warpgroups claim only registers the producer frees");
};

// Tile `index`: column block fastest, then channel block (tiles that read the same
// windows run together), plane (sample, depth), group.
struct WindowTile {
  int64_t n, group;
  int qd, channel0, column0;
};

__device__ __forceinline__ WindowTile window_tile(const PhaseProblem& p,
                                                  const ShiftedWindowPlan& plan, int64_t index) {
  WindowTile tile;
  tile.column0 = static_cast<int>(index % plan.column_blocks) * plan.column_step;
  index /= plan.column_blocks;
  tile.channel0 = static_cast<int>(index % plan.channel_blocks) * kWindowBlockChannels;
  index /= plan.channel_blocks;
  const int64_t planes = plan.samples * p.dim[0].max_positions;
  const int64_t plane = index % planes;
  tile.group = index / planes;
  tile.qd = static_cast<int>(plane % p.dim[0].max_positions);
  tile.n = plane / p.dim[0].max_positions;
  return tile;
}

// A stage's slot in the pipeline's ring and the parity of that slot's current use,
// carried over a block's tiles (counters, not a division per stage: the tap-rows
// kernel's short stages put it on their critical path).
struct RingPosition {
  int slot = 0, phase = 0;
  __device__ __forceinline__ void advance(int slots) {
    if (++slot == slots) {
      slot = 0;
      phase ^= 1;
    }
  }
};

// The producer's walk over one tile: for every stage (depth tap, height tap, and
// kStageSteps 8-channel k-steps, in that nesting) it waits for the slot, bulk-copies
// the window of the stage's quads (2 per k-step, hi and lo each: window_rows x 16
// bytes, one quad plane apart in shared memory) and calls copy_weights(stage address
// past the window, stage index, depth tap, height tap, first k-step, full barrier) for
// the weights. `ring` is the block's position over its tiles. The full barrier expects
// the window's bytes + weight_bytes.
template <int kStageSteps, class CopyWeights>
__device__ __forceinline__ void produce_window_stages(
    const PhaseProblem& p, const ShiftedWindowPlan& plan, const WindowTile& tile,
    const float* planes, uint32_t shared_base, uint32_t full0, uint32_t empty0,
    uint32_t weight_bytes, RingPosition& ring, CopyWeights&& copy_weights) {
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  const int chunks = p.cin_padded / 16;
  const int k_steps = 2 * chunks;
  static_assert(kStageSteps == 1 || kStageSteps == 2, "a stage is one k-step or a chunk");
  const int stages = rd.taps * rh.taps * k_steps / kStageSteps;
  const uint32_t quad_bytes = 16 * plan.window_pitch;
  const int64_t plane_floats = 4 * plan.plane_rows;
  const float* chunk_planes =
      planes + (tile.n * plan.groups + tile.group) * chunks * 8 * plane_floats;
  const int64_t first_row =
      plan.origin + tile.qd * plan.plane_pitch + tile.column0 + plan.min_width_shift;
  const uint32_t expected = kStageSteps * 4 * 16 * plan.window_rows + weight_bytes;
  int td = 0, th = 0, k_step = 0;
  for (int stage_index = 0; stage_index < stages; ++stage_index, ring.advance(plan.slots)) {
    mbarrier_wait(empty0 + 8 * ring.slot, ring.phase ^ 1);
    const uint32_t stage = shared_base + ring.slot * plan.stage_bytes;
    const uint32_t full = full0 + 8 * ring.slot;
    mbarrier_arrive_expect_bytes(full, expected);
    const int64_t row = first_row + (rd.first_shift + td * rd.shift_step) * plan.plane_pitch +
                        (rh.first_shift + th * rh.shift_step) * plan.line_pitch;
    // The k-step's quads (2s, 2s + 1; hi, lo) are planes 4 s .. 4 s + 3 of the chunk's 8.
    const float* source =
        chunk_planes + (8 * (k_step >> 1) + 4 * (k_step & 1)) * plane_floats + 4 * row;
#pragma unroll
    for (int i = 0; i < 4 * kStageSteps; ++i) {
      bulk_copy(stage + i * quad_bytes, source + i * plane_floats, 16 * plan.window_rows, full);
    }
    copy_weights(stage + 4 * kStageSteps * quad_bytes, stage_index, td, th, k_step, full);
    k_step += kStageSteps;
    if (k_step == k_steps) {
      k_step = 0;
      if (++th == rh.taps) {
        th = 0;
        ++td;
      }
    }
  }
}

// One k-step's 3xTF32 products into acc, small terms first: lo*hi, hi*lo, hi*hi (hi*hi
// alone for exact operands, whose lo parts are zero); accumulate 0 starts a new chain.
// A: the weights' hi part at `weights`, the lo part `weight_lo_bytes` on (K-major core
// matrices, the k-step's two halves 128 bytes apart, 8-row groups 256 bytes apart).
// B: the window's columns as staged, hi quads at `columns`, lo quads one quad plane
// (quad_bytes) on, the k-step's second quad two planes on.
template <class Mma, bool kExact, int kAccumulators>
__device__ __forceinline__ void window_step_products(float (&acc)[kAccumulators], uint32_t weights,
                                                     uint32_t weight_lo_bytes, uint32_t columns,
                                                     uint32_t quad_bytes, int accumulate) {
  const uint64_t a_hi = matrix_descriptor(weights, 128, 256);
  const uint64_t b_hi = matrix_descriptor(columns, 2 * quad_bytes, 128);
  const uint64_t a_lo = matrix_descriptor(weights + weight_lo_bytes, 128, 256);
  const uint64_t b_lo = matrix_descriptor(columns + quad_bytes, 2 * quad_bytes, 128);
  if constexpr (!kExact) {
    Mma::run(acc, a_lo, b_hi, accumulate);
    Mma::run(acc, a_hi, b_lo, 1);
    accumulate = 1;
  }
  Mma::run(acc, a_hi, b_hi, accumulate);
}

}  // namespace ct3d::cuda
