// The tap-rows form of the shifted-window GEMM (tap_rows_plan.h): M rows are
// (width tap, target channel) pairs, output positions on N, both operands in shared
// memory. Warpgroup 0 loads; warpgroups 1 and 2 compute, either each half of the
// block's columns with all its rows (one 64-row half) or both the same columns with
// one 64-row half each. A stage (kStageSteps k-steps of the tile's (depth tap, height
// tap, k-step) sequence, padded with zero weights) is the windows (a bulk copy per
// plane of each k-step, as the shifted-window GEMM's) and one bulk copy of its
// weights, packed in (width tap, channel) rows (tap_rows_launch.cu). Per k-step a
// warpgroup runs its products (window_operands.cuh: for float32 three wgmmas, lo*hi,
// hi*lo, hi*hi, or hi*hi alone for exact operands; for float16 and bfloat16 one),
// the chain added into a float32 total every flush_stages stages. The
// compute warpgroups write a tile's partial sums to shared memory and go on; the
// producer warpgroup's other three warps add each output's width taps from there and
// store it. Persistent grid, as the shifted-window GEMM's.
//
// The tap-columns form (TapColumnsConfig, float32) swaps the operands' roles: the
// window's positions on M (64 x kMTiles per compute warpgroup, the two warpgroups
// side by side), the (width tap, channel) rows on N, every row used (70: n72 against
// 72 of 128 M rows), A (the window) split in registers. Same stages, weights, partial
// sums and epilogue. Its window may come as one TMA box per stage straight from the
// source (window_boxes.cuh, plan.box_width > 0) instead of the staged planes' bulk copies.
#pragma once

#include <cuda.h>

#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_stage.cuh"
#include "ops/cuda/engine/window/tap_columns_register_a.cuh"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/tap_rows_tile_taps.h"

namespace ct3d::cuda {

template <int kColumns, int kHalves, class Operands>
struct TapRowsConfig : WindowBlockShape<kColumns, Operands> {
  static constexpr bool kPositionsOnM = false;
  static constexpr bool kRegisterA = false;
  static constexpr int kMTiles = 1;
  static constexpr int kMHalves = kHalves;
  static constexpr int kStageSteps = tap_rows_stage_steps(kHalves, Operands::kHalf);
  // A k-step's weights: 64 rows per half x 32 bytes of K, for float32 hi then lo.
  static constexpr int kWeightPartBytes = 64 * kHalves * 32;
  static constexpr int kWeightBytes = Operands::kWeightParts * kWeightPartBytes;
  // The producer warpgroup's warps 1-3 run the epilogue's sums and stores.
  static constexpr int kEpilogueThreads = 96;
};

// kRows (width tap, channel) rows on N, kMTilesPerWarpgroup x 64 positions on M per
// compute warpgroup; a stage holds six wgmmas per warpgroup, as the tap-rows form's.
// A (the window) from registers (RawTf32Operands, tap_columns_register_a.cuh).
template <int kRows, int kMTilesPerWarpgroup, class Operands>
struct TapColumnsConfig : WindowBlockShape<kRows, Operands> {
  static_assert(Operands::kRawQuads, "the tap-columns form reads the window into registers");
  static constexpr bool kPositionsOnM = true;
  static constexpr bool kRegisterA = true;
  static constexpr int kMTiles = kMTilesPerWarpgroup;
  static constexpr int kMHalves = 1;
  static constexpr int kStageSteps = 2 / kMTiles;
  static constexpr int kWeightPartBytes = kRows * 32;
  static constexpr int kWeightBytes = Operands::kWeightParts * kWeightPartBytes;
  static constexpr int kEpilogueThreads = 96;
};

// The epilogue, in two halves so that the tensor pipe need not wait for it (KERNEL_LOG,
// "spare warps"): the compute warpgroups write their partial sums (rows 64 * half + 16 w + g (+ 8)
// at columns column_offset + 8 j + 2 t (+ 1) for lane (g, t) of warp w) into shared
// memory and go on to the next tile; the producer warpgroup's spare warps add each
// output's width taps from there and store it.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void write_tap_rows_partials(const TapRowsPlan& plan,
                                                        const float (&total)[kAccumulators],
                                                        float* partials, int half,
                                                        int column_offset) {
  const int ctid = threadIdx.x - 128;
  const int lane = ctid & 31, warp = (ctid >> 5) & 3;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = 64 * half + 16 * warp + g + 8 * r;
    if (row >= plan.rows_used) continue;
    float* partial_row = partials + row * plan.epilogue_pitch + column_offset + 2 * t;
#pragma unroll
    for (int j = 0; j < Cfg::kN / 8; ++j) {
      *reinterpret_cast<float2*>(partial_row + 8 * j) =
          make_float2(total[4 * j + 2 * r], total[4 * j + 2 * r + 1]);
    }
  }
}

// The tap-columns form's: lane (g, t) of warp w holds rows (positions) 16 w + g (+ 8)
// of its m-tile at columns ((tw, channel) rows of the partial sums) 8 j + 2 t (+ 1).
// The pitch is 4 mod 32 floats: a store's 8 positions x 4 row pairs hit 32 banks.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void write_tap_column_partials(const TapRowsPlan& plan,
                                                          const float (&total)[kAccumulators],
                                                          float* partials, int column_offset) {
  const int ctid = threadIdx.x - 128;
  const int lane = ctid & 31, warp = (ctid >> 5) & 3;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float* partial_column = partials + column_offset + 16 * warp + g + 8 * r;
#pragma unroll
    for (int j = 0; j < Cfg::kN / 8; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        partial_column[(8 * j + 2 * t + c) * plan.epilogue_pitch] = total[4 * j + 2 * r + c];
      }
    }
  }
}

// One output position's channels: each the sum of width taps [first, last) of its
// partials (tap tw at partial + tw * tap_step, channel c pitch floats on) and the bias.
// Four channels at a time, so that their loads overlap. The channel pitch is a multiple
// of 8: the rows past the last channel exist (zero weights).
template <class Ops>
__device__ __forceinline__ void store_width_tap_sums(const PhaseProblem& p, const float* partial,
                                                     int first, int last, int pitch,
                                                     int tap_step, const float* group_bias,
                                                     typename Ops::Output* out) {
  for (int channel = 0; channel < p.cout_per_group; channel += 4) {
    float sum[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) sum[c] = 0.f;
    for (int tw = first; tw < last; ++tw) {
#pragma unroll
      for (int c = 0; c < 4; ++c) sum[c] += partial[c * pitch + tw * tap_step];
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (channel + c < p.cout_per_group) {
        const float bias_value = group_bias != nullptr ? group_bias[channel + c] : 0.f;
        out[(channel + c) * p.output_channel_stride] = Ops::to_output(bias_value + sum[c]);
      }
    }
    partial += 4 * pitch;
  }
}

// Epilogue thread `thread` of `threads`: each of the tile's outputs the sum of its
// width taps' partials (and the bias), one output column per thread at a time, looping
// over the channels: consecutive threads store consecutive columns of a channel.
template <class Ops>
__device__ __forceinline__ void store_tap_rows_outputs(
    const PhaseProblem& p, const TapRowsPlan& plan, const WindowTile& tile,
    const float* partials, int thread, int threads, const float* __restrict__ bias,
    typename Ops::Output* __restrict__ output) {
  static_assert(kTapRowsChannelStep % 4 == 0, "the channels are summed four at a time");
  const ResidueParams& rw = p.dim[2].residue[0];
  const ShiftedWindowPlan& window = plan.window;
  const int pitch = plan.epilogue_pitch;
  // Width tap tw of output column j is partial row tw * channel_pitch + channel at
  // column j + shift(tw) - min shift: one constant step per tap.
  const int tap_step = plan.channel_pitch * pitch + rw.shift_step;
  const int first_tap = rw.first_shift - window.min_width_shift;
  const int height = p.dim[1].max_positions, width = p.dim[2].max_positions;
  const float* group_bias = bias != nullptr ? bias + tile.group * p.cout_per_group : nullptr;
  typename Ops::Output* tile_output = output + tile.n * p.output_batch_stride +
                                      tile.qd * p.output_stride[0] +
                                      tile.group * p.cout_per_group * p.output_channel_stride;
  for (int j = thread; j < window.column_step; j += threads) {
    const int column = tile.column0 + j;
    const int h = column / window.line_pitch, w = column - h * window.line_pitch;
    if (h >= height || w >= width) continue;
    typename Ops::Output* out = tile_output + h * p.output_stride[1] + w * p.output_stride[2];
    const float* partial = partials + j + first_tap;
    store_width_tap_sums<Ops>(p, partial, 0, rw.taps, pitch, tap_step, group_bias, out);
  }
}

// Line and flat tiles' (flat_rows; window_boxes.cuh, window_box_geometry.h): partial
// row r is flat plane position (line x source width + column) tile row0 + r, so an
// output's width taps are the partials of the source columns it reads, those inside
// the source. A line tile stores all its lines' outputs; a flat tile (kFlatTile) those
// whose owner row lies in its owned range. One template, so each instance is the code
// it replaced (its sm_90a SASS unchanged).
template <class Ops, bool kFlatTile>
__device__ __forceinline__ void store_flat_row_outputs(
    const PhaseProblem& p, const TapRowsPlan& plan, const WindowTile& tile,
    const float* partials, int thread, int threads, const float* __restrict__ bias,
    typename Ops::Output* __restrict__ output) {
  const ResidueParams& rw = p.dim[2].residue[0];
  const int pitch = plan.epilogue_pitch;
  const int source_width = p.source_extent[2];
  const int width = p.dim[2].max_positions;
  FlatRange owned{};
  int first_line, lines;
  if constexpr (kFlatTile) {
    owned = flat_tile_owned(p, plan, tile.column0);
    first_line = owned.begin / source_width;
    lines = (owned.end - 1) / source_width - first_line + 1;
  } else {
    first_line = tile.column0;
    lines = min(plan.tile_lines, p.dim[1].max_positions - tile.column0);
  }
  // Width tap tw of an output is partial row tw * channel_pitch + channel, shift(tw)
  // columns on.
  const int tap_step = plan.channel_pitch * pitch + rw.shift_step;
  const float* group_bias = bias != nullptr ? bias + tile.group * p.cout_per_group : nullptr;
  typename Ops::Output* tile_output =
      output + tile.n * p.output_batch_stride + tile.qd * p.output_stride[0] +
      int64_t{first_line} * p.output_stride[1] +
      tile.group * p.cout_per_group * p.output_channel_stride;
  for (int j = thread; j < lines * width; j += threads) {
    const int line = j / width, w = j - line * width;
    if constexpr (kFlatTile) {
      const int owner = flat_owner(p, first_line + line, w);
      if (owner < owned.begin || owner >= owned.end) continue;
    }
    typename Ops::Output* out = tile_output + line * p.output_stride[1] + w * p.output_stride[2];
    // The taps whose source column lies inside the source: [first, last).
    const int x0 = w + rw.first_shift;
    int first = 0, last = rw.taps;
    while (first < last && (x0 + first * rw.shift_step < 0 ||
                            x0 + first * rw.shift_step >= source_width)) {
      ++first;
    }
    while (last > first && (x0 + (last - 1) * rw.shift_step < 0 ||
                            x0 + (last - 1) * rw.shift_step >= source_width)) {
      --last;
    }
    // The tile's partial rows start at its first flat row (a line tile's: line 0).
    const float* partial =
        partials +
        (kFlatTile ? (first_line + line) * source_width - tile.column0 : line * source_width) + x0;
    store_width_tap_sums<Ops>(p, partial, first, last, pitch, tap_step, group_bias, out);
  }
}

// The stages of tile `index` (the producer's walk over its taps, tile_taps.h): decoded
// only where tiles leave taps out; all_stages elsewhere.
template <class Ops, int kStageSteps>
__device__ __forceinline__ int tap_rows_tile_stages(const PhaseProblem& p, const TapRowsPlan& plan,
                                                    int64_t index, int all_stages) {
  if (!plan.window.skip_halo_taps) return all_stages;
  const WindowTile tile = window_tile(plan.window, index);
  return window_tile_stages<Ops, kStageSteps>(p,
                                              tap_rows_tile_taps(p, plan, tile.qd, tile.column0));
}

// The epilogue warps (warps 1-3 of the producer warpgroup): per tile, once the compute
// warpgroups have written its partial sums, the width-tap sums stored to the output.
template <class Cfg, bool kBoxes>
__device__ __forceinline__ void store_tap_rows_tiles(
    const PhaseProblem& p, const TapRowsPlan& plan, float* partials, uint32_t partials_written,
    uint32_t partials_read, int tid, const float* __restrict__ bias,
    typename Cfg::Ops::Output* __restrict__ output) {
  using Ops = typename Cfg::Ops;
  const ShiftedWindowPlan& window = plan.window;
  int parity = 0;
  for (int64_t index = blockIdx.x; index < window.tiles; index += gridDim.x, parity ^= 1) {
    const WindowTile tile = window_tile(window, index);
    mbarrier_wait(partials_written, parity);
    if (kBoxes && plan.tile_lines > 0) {
      store_flat_row_outputs<Ops, false>(p, plan, tile, partials, tid - 32, Cfg::kEpilogueThreads,
                                         bias, output);
    } else if (kBoxes && plan.flat_step > 0) {
      store_flat_row_outputs<Ops, true>(p, plan, tile, partials, tid - 32, Cfg::kEpilogueThreads,
                                        bias, output);
    } else {
      store_tap_rows_outputs<Ops>(p, plan, tile, partials, tid - 32, Cfg::kEpilogueThreads, bias,
                                  output);
    }
    mbarrier_arrive(partials_read);
  }
}

// Warpgroup 0's first thread, the producer: per tile of the block, every stage's window
// (bulk copies of the staged planes, or with kBoxes TMA boxes of the source) and the
// stage's weights, one run: tap_rows_launch.cu packs them in the tile's k-step order,
// padded to group_stages whole stages.
template <class Cfg, bool kBoxes>
__device__ __forceinline__ void produce_tap_rows_tiles(
    const PhaseProblem& p, const TapRowsPlan& plan, const void* __restrict__ planes,
    const CUtensorMap* window_map, const void* __restrict__ tap_weights, int group_stages,
    uint32_t shared_base, uint32_t full0, uint32_t empty0) {
  using Ops = typename Cfg::Ops;
  const ShiftedWindowPlan& window = plan.window;
  constexpr int kStageWeightBytes = Cfg::kStageSteps * Cfg::kWeightBytes;
  RingPosition ring;  // over all the block's tiles
  for (int64_t index = blockIdx.x; index < window.tiles; index += gridDim.x) {
    const WindowTile tile = window_tile(window, index);
    const char* weights = static_cast<const char*>(tap_weights) +
                          tile.group * int64_t{group_stages} * kStageWeightBytes;
    const auto copy_weights = [&](uint32_t destination, int stage_index, int, int, int,
                                  uint32_t full) {
      bulk_copy(destination, weights + stage_index * kStageWeightBytes, kStageWeightBytes, full);
    };
    const TileTaps taps = tap_rows_tile_taps(p, plan, tile.qd, tile.column0);
    if constexpr (kBoxes) {
      produce_window_boxes<Cfg::kStageSteps>(p, plan, tile, taps, window_map, shared_base, full0,
                                             empty0, Cfg::kWeightBytes, ring, copy_weights);
    } else {
      produce_window_stages<Ops, Cfg::kStageSteps>(p, window, tile, taps, planes, shared_base,
                                                   full0, empty0, Cfg::kWeightBytes, ring,
                                                   copy_weights);
    }
  }
}

// Where a compute warpgroup reads and writes: the ring's slots (shared_base, their full
// and empty barriers), the partial sums' buffer and its two barriers.
struct TapRowsShared {
  const float* pool;
  uint32_t base, full0, empty0;
  float* partials;
  uint32_t partials_written, partials_read;
};

// The tap-columns form's compute warpgroups (A, the window, from registers: each stage's
// fragments loaded while the stage before multiplies), per tile: the chain of stages,
// flushed into the total every flush_stages, then the total into the partial sums.
template <class Cfg, bool kBoxes>
__device__ __forceinline__ void compute_tap_columns_tiles(const PhaseProblem& p,
                                                          const TapRowsPlan& plan,
                                                          const TapRowsShared& shared,
                                                          int all_stages, uint32_t window_bytes,
                                                          int column_offset) {
  using Ops = typename Cfg::Ops;
  constexpr int kN = Cfg::kN;
  constexpr int kMTiles = Cfg::kMTiles;
  using Mma = typename Cfg::Mma;
  using Fragments = WindowFragments<Cfg::kStageSteps, kMTiles>;
  const ShiftedWindowPlan& window = plan.window;
  const int slots = window.slots;
  const int tid = threadIdx.x;
  const int lane = (tid - 128) & 31;
  const int row0 = column_offset + 16 * (((tid - 128) >> 5) & 3) + (lane >> 2);
  const int t = lane & 3;
  // The chain restarts with the accumulate flag off (as the shifted-window GEMM's).
  float acc[kMTiles][Mma::kAccumulators], total[kMTiles][Mma::kAccumulators];
  Fragments sets[2];
  const bool flat = flat_rows(plan);
  int partials_parity = 0;
  RingPosition ring;  // over all the block's tiles
  for (int64_t index = blockIdx.x; index < window.tiles; index += gridDim.x) {
    zero_total(total);
    const int stages = tap_rows_tile_stages<Ops, Cfg::kStageSteps>(p, plan, index, all_stages);
    // (The staged form's loads need none.)
    const FragmentOffsets<kMTiles> offsets =
        kBoxes && !flat
            ? box_fragment_offsets<kMTiles>(
                  plan, window_line_offset(window, window_tile(window, index).column0), row0, t)
            : FragmentOffsets<kMTiles>{};
    // The slot of the stage still in flight (released once its wgmmas are done).
    int chain_stages = 0, pending_slot = -1;
    const auto stage = [&](int stage_index, Fragments& mine, Fragments& other) {
      mbarrier_wait(shared.full0 + 8 * ring.slot, ring.phase);
      const int slot = ring.slot;
      const float* stage_window = shared.pool + slot * (window.stage_bytes / 4);
      if constexpr (kBoxes) {
        if (flat) {
          load_flat_fragments<Cfg::kStageSteps, kMTiles>(
              flat_fragment_lane<Cfg::kStageSteps, kMTiles>(stage_window, row0, t), mine);
        } else {
          load_box_fragments<Cfg::kStageSteps, kMTiles>(stage_window, offsets, mine);
        }
      } else {
        load_staged_fragments<Cfg::kStageSteps, kMTiles>(stage_window, window.window_pitch, row0,
                                                         t, mine);
      }
      fence_accumulators(acc);
      wgmma_fence();
      register_a_products<kN, Cfg::kStageSteps, kMTiles>(
          acc, mine, shared.base + slot * window.stage_bytes + window_bytes,
          Cfg::kWeightPartBytes, Cfg::kWeightBytes, chain_stages == 0 ? 0 : 1);
      wgmma_commit();
      ring.advance(slots);
      if (++chain_stages == window.flush_stages || stage_index + 1 == stages) {
        wgmma_wait<0>();
        fence_accumulators(acc);
        mine.hold();
        other.hold();
        if (pending_slot >= 0) mbarrier_arrive(shared.empty0 + 8 * pending_slot);
        mbarrier_arrive(shared.empty0 + 8 * slot);
        pending_slot = -1;
        chain_stages = 0;
        add_chain_to_total(total, acc);
      } else {
        // The stage before is done: its fragments and its slot are free.
        wgmma_wait<1>();
        other.hold();
        if (pending_slot >= 0) mbarrier_arrive(shared.empty0 + 8 * pending_slot);
        pending_slot = slot;
      }
    };
    int stage_index = 0;
    for (; stage_index + 1 < stages; stage_index += 2) {
      stage(stage_index, sets[0], sets[1]);
      stage(stage_index + 1, sets[1], sets[0]);
    }
    if (stage_index < stages) stage(stage_index, sets[0], sets[1]);
    mbarrier_wait(shared.partials_read, partials_parity ^ 1);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      write_tap_column_partials<Cfg>(plan, total[mt], shared.partials, column_offset + 64 * mt);
    }
    mbarrier_arrive(shared.partials_written);
    partials_parity ^= 1;
  }
}

// The tap-rows form's compute warpgroups (both operands from shared memory), per tile:
// the stages' products with two stages in flight, flushed into the total every
// flush_stages, then the total into the partial sums. The tiles' order is the
// producer's; a consumer needs only their stage counts.
template <class Cfg>
__device__ __forceinline__ void compute_tap_rows_tiles(const PhaseProblem& p,
                                                       const TapRowsPlan& plan,
                                                       const TapRowsShared& shared,
                                                       int all_stages, uint32_t window_bytes,
                                                       uint32_t plane_window_bytes, int half,
                                                       int column_offset) {
  using Ops = typename Cfg::Ops;
  using Mma = typename Cfg::Mma;
  const ShiftedWindowPlan& window = plan.window;
  const int slots = window.slots;
  float acc[1][Mma::kAccumulators], total[1][Mma::kAccumulators];
  int partials_parity = 0;
  RingPosition ring;  // over all the block's tiles
  for (int64_t index = blockIdx.x; index < window.tiles; index += gridDim.x) {
    const int stages = tap_rows_tile_stages<Ops, Cfg::kStageSteps>(p, plan, index, all_stages);
    zero_total(total);
    // A stage is short (three wgmmas per k-step): two stages stay in flight, their slots held
    // (older, newer) until the wgmmas that read them are done.
    int older_slot = -1, newer_slot = -1, chain_stages = 0;
    for (int stage_index = 0; stage_index < stages; ++stage_index, ring.advance(slots)) {
      mbarrier_wait(shared.full0 + 8 * ring.slot, ring.phase);
      const uint32_t stage = shared.base + ring.slot * window.stage_bytes;
      wgmma_fence();
      int accumulate = chain_stages == 0 ? 0 : 1;
#pragma unroll
      for (int step = 0; step < Cfg::kStageSteps; ++step) {
        const uint32_t weights = stage + window_bytes + step * Cfg::kWeightBytes + half * 64 * 32;
        const uint32_t columns =
            stage + step * Ops::kPlanesPerStep * plane_window_bytes + 16 * column_offset;
        Ops::template products<Mma>(acc[0], weights, Cfg::kWeightPartBytes, columns,
                                    plane_window_bytes, accumulate);
        accumulate = 1;
      }
      wgmma_commit();
      if (++chain_stages == window.flush_stages || stage_index + 1 == stages) {
        wgmma_wait<0>();
        fence_accumulators(acc);
        if (older_slot >= 0) mbarrier_arrive(shared.empty0 + 8 * older_slot);
        if (newer_slot >= 0) mbarrier_arrive(shared.empty0 + 8 * newer_slot);
        mbarrier_arrive(shared.empty0 + 8 * ring.slot);
        older_slot = newer_slot = -1;
        chain_stages = 0;
        add_chain_to_total(total, acc);
      } else {
        // The stage two back is done: its slot can be refilled.
        wgmma_wait<2>();
        if (older_slot >= 0) mbarrier_arrive(shared.empty0 + 8 * older_slot);
        older_slot = newer_slot;
        newer_slot = ring.slot;
      }
    }
    wgmma_wait<0>();
    // The epilogue threads are done with the last tile's partials.
    mbarrier_wait(shared.partials_read, partials_parity ^ 1);
    write_tap_rows_partials<Cfg>(plan, total[0], shared.partials, half, column_offset);
    mbarrier_arrive(shared.partials_written);
    partials_parity ^= 1;
  }
}

// kBoxes (the register-A form, plan.box_width > 0): the window by TMA boxes of the
// source. A template argument, so that the staged form keeps its fixed pool address and
// its fragment offsets as constants (L1-70 5 % faster, KERNEL_LOG
// "why the box kernel is slow").
template <class Cfg, bool kBoxes = false>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tap_rows_kernel(const __grid_constant__ PhaseProblem p, const TapRowsPlan plan,
                          const void* __restrict__ planes,
                          const __grid_constant__ CUtensorMap window_map,
                          const void* __restrict__ tap_weights,
                          const float* __restrict__ bias,
                          typename Cfg::Ops::Output* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ops = typename Cfg::Ops;
  static_assert(!kBoxes || Cfg::kRegisterA, "only the register-A form reads boxes");
  extern __shared__ __align__(1024) float shared_pool[];
  // TMA lands a box at a 128-byte boundary, which the boxes' plans leave room to reach
  // whatever the pool's own alignment.
  float* const pool = kBoxes ? align_shared_128(shared_pool) : shared_pool;
  __shared__ __align__(8) uint64_t barriers[2 * Cfg::kMaxSlots];
  // The partial sums' buffer: written (all compute threads arrive), read (the
  // epilogue threads arrive).
  __shared__ __align__(8) uint64_t partial_barriers[2];
  const ShiftedWindowPlan& window = plan.window;
  const int tid = threadIdx.x;
  const TapRowsShared shared{pool,
                             shared_address(pool),
                             shared_address(&barriers[0]),
                             shared_address(&barriers[Cfg::kMaxSlots]),
                             pool + plan.epilogue_offset / 4,
                             shared_address(&partial_barriers[0]),
                             shared_address(&partial_barriers[1])};
  if (tid == 0) {
    mbarrier_init(shared.partials_written, Cfg::kComputeThreads);
    mbarrier_init(shared.partials_read, Cfg::kEpilogueThreads);
  }
  // One producer thread: its arrival and the bulk copies' bytes fill a slot.
  init_slot_barriers(shared.full0, shared.empty0, window.slots, Cfg::kComputeThreads, 1);

  const WindowSteps<Ops, Cfg::kStageSteps> steps(p);
  const uint32_t plane_window_bytes = 16 * window.window_pitch;
  const uint32_t window_bytes =
      kBoxes ? plan.window_bytes : Cfg::kStageSteps * Ops::kPlanesPerStep * plane_window_bytes;

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    if (tid >= 32) {
      store_tap_rows_tiles<Cfg, kBoxes>(p, plan, shared.partials, shared.partials_written,
                                        shared.partials_read, tid, bias, output);
    } else if (tid == 0) {
      produce_tap_rows_tiles<Cfg, kBoxes>(p, plan, planes, &window_map, tap_weights, steps.stages,
                                          shared.base, shared.full0, shared.empty0);
    }
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  const int warpgroup = (tid - 128) >> 7;
  if constexpr (Cfg::kRegisterA) {
    compute_tap_columns_tiles<Cfg, kBoxes>(p, plan, shared, steps.stages, window_bytes,
                                           warpgroup * 64 * Cfg::kMTiles);
  } else {
    // Each warpgroup the block's columns with one 64-row half, or its half of the
    // columns with all the rows.
    const int half = Cfg::kMHalves == 2 ? warpgroup : 0;
    compute_tap_rows_tiles<Cfg>(p, plan, shared, steps.stages, window_bytes, plane_window_bytes,
                                half, Cfg::kMHalves == 2 ? 0 : warpgroup * Cfg::kN);
  }
#endif
}

}  // namespace ct3d::cuda
