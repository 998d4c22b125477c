// The shifted-window GEMM's epilogues (wgmma_shifted_window_kernel.cuh), run by the
// compute warpgroups at the end of a tile: lane (g, t) of warp w of warpgroup wg holds
// channels 64 mt + 16 w + g (+ 8) at columns wg kN + 8 j + 2 t (+ 1) of the tile.
// - store_window_tile: straight from the accumulators (any output strides; float32).
// - store_parked_window_tile: the half form's, through shared memory, so that the
//   stores are whole 16-byte pieces of output lines (ncu after h5e: the direct stores
//   were a fifth of the compute warps' time, each waiting for the store before it to
//   release its registers).
#pragma once

#include <cstdint>

#include "ops/cuda/engine/instructions/element_conversion.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"
#include "ops/cuda/engine/window/shifted_window_stage.cuh"

namespace ct3d::cuda {

// A tile's epilogue, straight from the accumulators (sums: the chain's total): lane
// (g, t) of warp w holds channels 64 mt + 16 w + g (+ 8) at columns 8 j + 2 t (+ 1) of
// its warpgroup's kN. A column's output offset is worked out once for all its
// channels, and a lane's two columns, where they are neighbours of one line at an
// even offset of a unit-stride row, are stored as one pair.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void store_window_tile(const PhaseProblem& p,
                                                  const ShiftedWindowPlan& plan,
                                                  const WindowTile& tile,
                                                  const float (&sums)[Cfg::kMTiles][kAccumulators],
                                                  int ctid, const float* __restrict__ bias,
                                                  typename Cfg::Ops::Output* __restrict__ output) {
  using Output = typename Cfg::Ops::Output;
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles;
  const int warpgroup = ctid >> 7, warp = (ctid >> 5) & 3;
  const int g = (ctid & 31) >> 2, t = ctid & 3;
  Output* sample = output + tile.n * p.output_batch_stride + tile.qd * p.output_stride[0];
  Output* rows[kMTiles][2];  // this lane's channel rows in the plane (null: padding)
  float row_bias[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int channel = tile.channel0 + kWindowBlockChannels * mt + 16 * warp + g + 8 * r;
      const int64_t global_channel = tile.group * p.cout_per_group + channel;
      const bool stored = channel < p.cout_per_group;
      rows[mt][r] = stored ? sample + global_channel * p.output_channel_stride : nullptr;
      row_bias[mt][r] = stored && bias != nullptr ? bias[global_channel] : 0.f;
    }
  // With unit width stride and every other stride even (and an aligned output), an
  // output's alignment to a pair is its offset's parity.
  const bool pairs_aligned =
      p.output_stride[2] == 1 &&
      ((p.output_stride[1] | p.output_stride[0] | p.output_channel_stride | p.output_batch_stride) &
       1) == 0 &&
      reinterpret_cast<uintptr_t>(output) % (2 * sizeof(Output)) == 0;
  const int line_pitch = plan.line_pitch;
  const int height = p.dim[1].max_positions, width = p.dim[2].max_positions;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    const int column = tile.column0 + warpgroup * kN + 8 * j + 2 * t;
    const int qh = column / line_pitch;
    const int qw = column - qh * line_pitch;
    int64_t offset[2];  // of column + e in the plane; -1: not an output
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      // Column + e: the next position of the same line, or the start of the next.
      const int h = qw + e < line_pitch ? qh : qh + 1;
      const int w = qw + e < line_pitch ? qw + e : 0;
      offset[e] = h < height && w < width ? h * p.output_stride[1] + w * p.output_stride[2] : -1;
    }
    const bool pair =
        pairs_aligned && offset[0] >= 0 && offset[1] == offset[0] + 1 && (offset[0] & 1) == 0;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        if (rows[mt][r] == nullptr) continue;
        const float first = sums[mt][4 * j + 2 * r] + row_bias[mt][r];
        const float second = sums[mt][4 * j + 2 * r + 1] + row_bias[mt][r];
        if (pair) {
          store_element_pair(rows[mt][r] + offset[0], first, second);
        } else {
          if (offset[0] >= 0) rows[mt][r][offset[0]] = element_from_float<Output>(first);
          if (offset[1] >= 0) rows[mt][r][offset[1]] = element_from_float<Output>(second);
        }
      }
  }
}

// The half form's epilogue through the park (plan.park_bytes of shared memory past the
// slots: the tile's channels x (its columns + kWindowParkPad) half values). The compute
// warpgroups write their outputs, rounded, bias added, as [channel][column]; then each
// thread stores pieces of 8 outputs of one channel's line: 16 bytes where the piece is
// whole, inside the tile and aligned, else value by value. Planned only where every
// output line starts at a 16-byte boundary (shifted_window_launch.cu), so that the
// value-by-value stores are the tile's edges.
template <class Cfg, int kAccumulators>
__device__ __forceinline__ void store_parked_window_tile(
    const PhaseProblem& p, const ShiftedWindowPlan& plan, const WindowTile& tile,
    const float (&sums)[Cfg::kMTiles][kAccumulators], int ctid, const float* __restrict__ bias,
    typename Cfg::Ops::Output* __restrict__ output, uint16_t* park) {
  using Output = typename Cfg::Ops::Output;
  constexpr int kN = Cfg::kN, kMTiles = Cfg::kMTiles, kThreads = Cfg::kComputeThreads;
  constexpr int kColumns = 2 * kN, kPitch = kColumns + kWindowParkPad;
  const int warpgroup = ctid >> 7, warp = (ctid >> 5) & 3;
  const int g = (ctid & 31) >> 2, t = ctid & 3;
  named_barrier_sync(kThreads);  // every thread is done reading the last tile's park
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = kWindowBlockChannels * mt + 16 * warp + g + 8 * r;
      const int channel = tile.channel0 + row;
      const float channel_bias = bias != nullptr && channel < p.cout_per_group
                                     ? bias[tile.group * p.cout_per_group + channel]
                                     : 0.f;
      // Columns 8 j + 2 t and + 1 of the warpgroup's: one 4-byte pair (pitch and
      // columns even).
      uint32_t* pairs = reinterpret_cast<uint32_t*>(park + row * kPitch + warpgroup * kN + 2 * t);
#pragma unroll
      for (int j = 0; j < kN / 8; ++j) {
        pairs[4 * j] =
            element_bits(element_from_float<Output>(sums[mt][4 * j + 2 * r] + channel_bias)) |
            (element_bits(element_from_float<Output>(sums[mt][4 * j + 2 * r + 1] + channel_bias))
             << 16);
      }
    }
  named_barrier_sync(kThreads);

  // The tile's columns [column0, column0 + kColumns) cross lines first_line ...; a line
  // is `pieces` pieces of 8 outputs. Thread ctid takes items ctid, + kThreads, ... of
  // (channel row, line, piece), piece fastest, stepped by carries (no division a piece).
  const int line_pitch = plan.line_pitch;
  const int width = p.dim[2].max_positions, height = p.dim[1].max_positions;
  const int first_line = tile.column0 / line_pitch;
  const int lines = (tile.column0 + kColumns - 1) / line_pitch - first_line + 1;
  const int pieces = (width + 7) / 8;
  const int rows = min(kMTiles * kWindowBlockChannels, p.cout_per_group - tile.channel0);
  Output* block_output = output + tile.n * p.output_batch_stride + tile.qd * p.output_stride[0] +
                         (tile.group * p.cout_per_group + tile.channel0) * p.output_channel_stride;
  const int step_piece = kThreads % pieces;
  const int step_line = (kThreads / pieces) % lines;
  const int step_row = kThreads / (pieces * lines);
  int piece = ctid % pieces;
  int line = (ctid / pieces) % lines;
  int row = ctid / (pieces * lines);
  for (; row < rows; row += step_row) {
    const int qh = first_line + line;
    const int w0 = 8 * piece;
    const int column = qh * line_pitch + w0 - tile.column0;  // the piece's first, in the park
    if (qh < height) {
      Output* destination =
          block_output + row * p.output_channel_stride + qh * p.output_stride[1] + w0;
      const uint16_t* source = park + row * kPitch + column;
      if (column >= 0 && column + 8 <= kColumns && w0 + 8 <= width &&
          reinterpret_cast<uintptr_t>(destination) % 16 == 0) {
        uint32_t bits[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          bits[e] = uint32_t{source[2 * e]} | (uint32_t{source[2 * e + 1]} << 16);
        }
        *reinterpret_cast<uint4*>(destination) = make_uint4(bits[0], bits[1], bits[2], bits[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (w0 + e < width && column + e >= 0 && column + e < kColumns) {
            destination[e] = element_from_bits<Output>(source[e]);
          }
        }
      }
    }
    // The next item, kThreads on.
    piece += step_piece;
    if (piece >= pieces) {
      piece -= pieces;
      ++line;
    }
    line += step_line;
    if (line >= lines) {
      line -= lines;
      ++row;
    }
  }
}

}  // namespace ct3d::cuda
