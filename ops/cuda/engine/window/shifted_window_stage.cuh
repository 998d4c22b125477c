// What both shifted-window kernels (wgmma_shifted_window_kernel.cuh,
// wgmma_tap_rows_kernel.cuh) do alike: the order of their tiles and the producer's
// walk over a tile's stages with the window copies of each. Their operands and a
// k-step's products: window_operands.cuh.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"
#include "ops/cuda/engine/window/tile_taps.h"
#include "ops/cuda/engine/window/window_operands.cuh"

namespace ct3d::cuda {

// The block the window kernels (and the strided-lines form's) run: warpgroup 0 loads
// (one thread issues the copies), warpgroups 1 and 2 compute, up to kMaxSlots stages.
struct WarpSpecializedBlock {
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

// The block both window kernels run; kN is a compute warpgroup's wgmma N, Operands
// window_operands.cuh's.
template <int kColumns, class Operands>
struct WindowBlockShape : WarpSpecializedBlock {
  using Ops = Operands;
  using Mma = typename Operands::template Mma<kColumns>;
  static constexpr int kN = kColumns;
};

// Tile `index`: column block fastest, then channel block (of kMTiles x 64 channels;
// tiles that read the same windows run together), plane (sample, depth), group.
struct WindowTile {
  int64_t n, group;
  int qd, channel0, column0;
};

template <int kMTiles = 1>
__device__ __forceinline__ WindowTile window_tile(const ShiftedWindowPlan& plan, int64_t index) {
  // 32-bit (set_window_tiles: fewer than 2^31 tiles), by multiplies: the producer, the
  // epilogue and, where tiles leave taps out, every compute thread decode each tile.
  const uint32_t at = static_cast<uint32_t>(index);
  const uint32_t by_column = plan.column_block_divider.divide(at);
  const uint32_t by_channel = plan.channel_block_divider.divide(by_column);
  const uint32_t group = plan.plane_divider.divide(by_channel);
  const uint32_t plane = by_channel - group * plan.plane_divider.divisor;
  const uint32_t n = plan.depth_divider.divide(plane);
  WindowTile tile;
  tile.column0 =
      static_cast<int>(at - by_column * plan.column_block_divider.divisor) * plan.column_step;
  tile.channel0 = static_cast<int>(by_column - by_channel * plan.channel_block_divider.divisor) *
                  (kMTiles * kWindowBlockChannels);
  tile.group = group;
  tile.n = n;
  tile.qd = static_cast<int>(plane - n * plan.depth_divider.divisor);
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

// A tile's k-steps (depth tap, height tap, k-step of Ops::kStepChannels channels, in
// that nesting) and the pipeline stages that hold them, kStageSteps k-steps each. Where
// kStageSteps does not divide them, the last stage is padded with k-steps of zero
// weights over a repeated window (a stage with a branch among its wgmmas makes ptxas
// fence them, C7519).
template <class Ops, int kStageSteps>
struct WindowSteps {
  int total, stages;
  __device__ __forceinline__ explicit WindowSteps(const PhaseProblem& p)
      : total(p.dim[0].residue[0].taps * p.dim[1].residue[0].taps *
              (p.cin_padded / Ops::kStepChannels)),
        stages((total + kStageSteps - 1) / kStageSteps) {}
};

// A tile's (depth tap, height tap, k-step) walk over its taps (tile_taps.h): `by`
// k-steps on, into the next height tap and depth tap at the ends of theirs.
struct WindowStepCursor {
  int td, th, k_step;
  __device__ __forceinline__ explicit WindowStepCursor(const TileTaps& taps)
      : td(taps.depth.first), th(taps.height.first), k_step(0) {}
  __device__ __forceinline__ void advance(int by, int k_steps, const TileTaps& taps) {
    k_step += by;
    if (k_step == k_steps) {
      k_step = 0;
      if (++th == taps.height.first + taps.height.count) {
        th = taps.height.first;
        ++td;
      }
    }
  }
  // The stage's index in the walk over all taps (the packed weights' order), where
  // kStageSteps divides the k-steps.
  template <int kStageSteps>
  __device__ __forceinline__ int all_taps_stage(int height_taps, int k_steps) const {
    return ((td * height_taps + th) * k_steps + k_step) / kStageSteps;
  }
};

// Whether the tile's walk is produce_window_steps' (window_steps_cross_pairs, float16
// and bfloat16 only): it walks every tap.
template <class Ops, int kStageSteps>
__device__ __forceinline__ bool crossing_step_walk(const PhaseProblem& p) {
  return Ops::kHalf && kStageSteps > 1 &&
         window_steps_cross_pairs(p.cin_padded / Ops::kStepChannels, kStageSteps);
}

// The stages of a tile with these taps, as the producer's walk has them: the consumers
// count the same.
template <class Ops, int kStageSteps>
__device__ __forceinline__ int window_tile_stages(const PhaseProblem& p, const TileTaps& taps) {
  if (crossing_step_walk<Ops, kStageSteps>(p)) return WindowSteps<Ops, kStageSteps>(p).stages;
  return taps.depth.count * taps.height.count * (p.cin_padded / Ops::kStepChannels) / kStageSteps;
}

// The producer's walk over one tile's taps where kStageSteps divides the k-steps of a
// (depth tap, height tap) (always in float32): for every stage it waits for the slot,
// bulk-copies the windows of its k-steps' planes (Ops::kPlanesPerStep per k-step, one
// run: window_rows x 16 bytes each, one plane window apart in shared memory) and calls
// copy_weights(stage address past the windows, the stage's index in the walk over all
// taps, depth tap, height tap, first k-step, full barrier) for the weights. `ring` is
// the block's position over its tiles. The full barrier expects the windows' bytes +
// step_weight_bytes per k-step.
// Kept lean: the producer's per-stage work is on the short stages' critical path.
template <class Ops, int kStageSteps, class CopyWeights>
__device__ __forceinline__ void produce_window_runs(
    const PhaseProblem& p, const ShiftedWindowPlan& plan, const WindowTile& tile,
    const TileTaps& taps, const char* planes, uint32_t shared_base, uint32_t full0, uint32_t empty0,
    uint32_t step_weight_bytes, RingPosition& ring, CopyWeights&& copy_weights) {
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  const int k_steps = p.cin_padded / Ops::kStepChannels;
  const int stages = window_tile_stages<Ops, kStageSteps>(p, taps);
  const uint32_t plane_window_bytes = 16 * plan.window_pitch;
  const int64_t plane_bytes = 16 * plan.plane_rows;
  const char* group_planes =
      planes + (tile.n * plan.groups + tile.group) * k_steps * Ops::kPlanesPerStep * plane_bytes;
  const int64_t first_row =
      plan.origin + tile.qd * plan.plane_pitch + tile.column0 + plan.min_width_shift;
  const uint32_t expected =
      kStageSteps * (Ops::kPlanesPerStep * 16 * plan.window_rows + step_weight_bytes);
  WindowStepCursor at(taps);
  // Not unrolled: ptxas unrolled this loop by 2 in some instances, spilling the
  // producer's registers.
#pragma unroll 1
  for (int stage_index = 0; stage_index < stages; ++stage_index, ring.advance(plan.slots)) {
    mbarrier_wait(empty0 + 8 * ring.slot, ring.phase ^ 1);
    const uint32_t stage = shared_base + ring.slot * plan.stage_bytes;
    const uint32_t full = full0 + 8 * ring.slot;
    mbarrier_arrive_expect_bytes(full, expected);
    const int64_t row = first_row + (rd.first_shift + at.td * rd.shift_step) * plan.plane_pitch +
                        (rh.first_shift + at.th * rh.shift_step) * plan.line_pitch;
    const char* source = group_planes + at.k_step * Ops::kPlanesPerStep * plane_bytes + 16 * row;
#pragma unroll
    for (int i = 0; i < Ops::kPlanesPerStep * kStageSteps; ++i) {
      bulk_copy(stage + i * plane_window_bytes, source + i * plane_bytes, 16 * plan.window_rows,
                full);
    }
    copy_weights(stage + Ops::kPlanesPerStep * kStageSteps * plane_window_bytes,
                 at.all_taps_stage<kStageSteps>(rh.taps, k_steps), at.td, at.th, at.k_step, full);
    at.advance(kStageSteps, k_steps, taps);
  }
}

// The same walk where kStageSteps does not divide a (depth tap, height tap)'s k-steps
// (float16 and bfloat16 only): a stage's k-steps may cross to the next height or depth
// tap, each its own window, and the last stage is padded with k-steps that repeat the
// one before (their weights are zero: WindowSteps).
template <class Ops, int kStageSteps, class CopyWeights>
__device__ __forceinline__ void produce_window_steps(
    const PhaseProblem& p, const ShiftedWindowPlan& plan, const WindowTile& tile,
    const char* planes, uint32_t shared_base, uint32_t full0, uint32_t empty0,
    uint32_t step_weight_bytes, RingPosition& ring, CopyWeights&& copy_weights) {
  const ResidueParams& rd = p.dim[0].residue[0];
  const ResidueParams& rh = p.dim[1].residue[0];
  const int k_steps = p.cin_padded / Ops::kStepChannels;
  const WindowSteps<Ops, kStageSteps> steps(p);
  const uint32_t plane_window_bytes = 16 * plan.window_pitch;
  const int64_t plane_bytes = 16 * plan.plane_rows;
  const char* group_planes =
      planes + (tile.n * plan.groups + tile.group) * k_steps * Ops::kPlanesPerStep * plane_bytes;
  const int64_t first_row =
      plan.origin + tile.qd * plan.plane_pitch + tile.column0 + plan.min_width_shift;
  const uint32_t expected =
      kStageSteps * (Ops::kPlanesPerStep * 16 * plan.window_rows + step_weight_bytes);
  const TileTaps taps = all_tile_taps(p);
  WindowStepCursor at(taps);
  int step_index = 0;
  const char* source = group_planes;
#pragma unroll 1
  for (int stage_index = 0; stage_index < steps.stages; ++stage_index, ring.advance(plan.slots)) {
    mbarrier_wait(empty0 + 8 * ring.slot, ring.phase ^ 1);
    const uint32_t stage = shared_base + ring.slot * plan.stage_bytes;
    const uint32_t full = full0 + 8 * ring.slot;
    mbarrier_arrive_expect_bytes(full, expected);
    const WindowStepCursor first = at;
#pragma unroll
    for (int step = 0; step < kStageSteps; ++step, ++step_index) {
      if (step_index < steps.total) {
        const int64_t row = first_row +
                            (rd.first_shift + at.td * rd.shift_step) * plan.plane_pitch +
                            (rh.first_shift + at.th * rh.shift_step) * plan.line_pitch;
        source = group_planes + at.k_step * Ops::kPlanesPerStep * plane_bytes + 16 * row;
        at.advance(1, k_steps, taps);
      }
#pragma unroll
      for (int i = 0; i < Ops::kPlanesPerStep; ++i) {
        bulk_copy(stage + (step * Ops::kPlanesPerStep + i) * plane_window_bytes,
                  source + i * plane_bytes, 16 * plan.window_rows, full);
      }
    }
    copy_weights(stage + kStageSteps * Ops::kPlanesPerStep * plane_window_bytes, stage_index,
                 first.td, first.th, first.k_step, full);
  }
}

// A tile's stages, by whichever walk fits (produce_window_runs over the tile's taps,
// produce_window_steps over all).
template <class Ops, int kStageSteps, class CopyWeights>
__device__ __forceinline__ void produce_window_stages(
    const PhaseProblem& p, const ShiftedWindowPlan& plan, const WindowTile& tile,
    const TileTaps& taps, const void* planes, uint32_t shared_base, uint32_t full0, uint32_t empty0,
    uint32_t step_weight_bytes, RingPosition& ring, CopyWeights&& copy_weights) {
  const char* bytes = static_cast<const char*>(planes);
  if constexpr (Ops::kHalf && kStageSteps > 1) {
    if (crossing_step_walk<Ops, kStageSteps>(p)) {
      produce_window_steps<Ops, kStageSteps>(p, plan, tile, bytes, shared_base, full0, empty0,
                                             step_weight_bytes, ring, copy_weights);
      return;
    }
  }
  produce_window_runs<Ops, kStageSteps>(p, plan, tile, taps, bytes, shared_base, full0, empty0,
                                        step_weight_bytes, ring, copy_weights);
}

}  // namespace ct3d::cuda
