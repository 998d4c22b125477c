// The shifted-window GEMM (wgmma_shifted_window_kernel.cuh) for stride-1 problems:
// output channels on wgmma's M (64 per block), output positions on N. A stride-1
// convolution over the staged grid is a sum of shifted GEMMs,
//   out[c][column] = sum over taps t of W_t[c][:] * staged[:][column + shift(t)],
// where a column is a position of one (sample, depth) plane in the staged grid's
// pitch (column = qh * line pitch + qw) and shift(t) is one constant offset per tap.
// So a block's columns read one contiguous window of staged rows per (depth tap,
// height tap), and each width tap is the same window one row further: its operand is
// the same shared memory at a descriptor 16 bytes on. Columns past the output's width
// are computed and not stored.
//
// The staged grid is compact (quad_staging.h): consecutive lines share one zero gap
// (line pitch = width + the larger of the two width halos) and so do consecutive
// lines of a plane (lines per plane = height + the larger height halo). A tap that
// reads past a line's end lands in the gap before the next line's data; so without
// padding every column is an output.
#pragma once

#include <cstdint>

#include "ops/cuda/engine/problem/fast_divider.h"

namespace ct3d::cuda {

// Whether stages of stage_steps k-steps cross (depth tap, height tap) pairs of k_steps
// each: then the walk is produce_window_steps' (half forms only), over every tap.
constexpr bool window_steps_cross_pairs(int k_steps, int stage_steps) {
  return k_steps % stage_steps != 0;
}

struct PhaseProblem;

constexpr int kWindowBlockChannels = 64;  // wgmma M: output channels of an m-tile
// The half form's blocks of two m-tiles (128 target channels): each compute warpgroup
// runs both over its columns, so a stage's window serves twice the products.
constexpr int kWindowMaxMTiles = 2;
// wgmma N of one compute warpgroup, the shapes the kernel is built for.
constexpr int kWindowColumnChoices[] = {96, 128, 144, 160};
// The half forms' chain runs the whole tile: products of float16 or bfloat16 values
// are exact in float32, and what the tensor core's truncating float32 sums lose over a
// long chain (about 1e-6 relative; float32's 1e-5 bar is why it flushes) cannot show
// in an output rounded to 11 or 8 bits. No flush: no drain of the pipe every few stages.
constexpr int kHalfChainStages = 1 << 30;
// The half form parks a tile's outputs in shared memory before storing them as
// 16-byte pieces of output lines; a channel's row is its columns + this many values,
// which puts the 8 channels one store of the accumulators reaches in 8 bank groups.
constexpr int kWindowParkPad = 8;

struct ShiftedWindowPlan {
  int columns = 0;        // wgmma N of a compute warpgroup; 0: the plan does not apply
  int block_columns = 0;  // 2 * columns: both compute warpgroups
  int column_step = 0;    // columns from one block's first output to the next's
  int plane_columns = 0;  // target height x staged width: the columns of one plane
  int column_blocks = 0;  // blocks per (sample, depth) plane
  int window_rows = 0;    // rows one stage copies per quad plane: block columns + width span
  int window_pitch = 0;   // window_rows rounded up to 8: the planes' spacing in a stage
  int min_width_shift = 0;
  int line_pitch = 0;       // staged rows per line: width + the larger width halo
  int plane_lines = 0;      // lines per depth plane: height + the larger height halo
  int64_t plane_pitch = 0;  // line_pitch * plane_lines
  int64_t origin = 0;       // staged row of input position (0, 0, 0)
  int64_t plane_rows = 0;   // rows of one staged quad plane: every window stays inside
  int depth_planes = 0;     // staged depth: depth plus both halos
  int slots = 0;
  int stage_bytes = 0;   // a k-step's planes x window_pitch x 16 bytes + the taps' weights
  int flush_stages = 0;  // stages per accumulator chain (float32: at most 128 k)
  // Tiles leave out the (depth tap, height tap) pairs that read only the zero halo for
  // all their stored outputs (tile_taps.h): where some do (border_taps_read_halo) and
  // the tap-rows forms only (the shifted-window GEMM measured no gain: plan_shifted_window).
  bool skip_halo_taps = true;
  // The launch's tiles (set per chunk of samples by set_window_tiles).
  int channel_blocks = 0;  // target channel blocks of 64 * m_tiles per group
  int64_t groups = 0, samples = 0;
  int64_t tiles = 0;  // groups x samples x depth x channel blocks x column blocks
  // A tile's index decoded by multiplies (window_tile): by column blocks, channel
  // blocks, planes (samples x depth) and depth.
  FastDivider column_block_divider, channel_block_divider, plane_divider, depth_divider;
  int m_tiles = 1;    // m-tiles of 64 target channels per block (2: half form only)
  // The half form's epilogue tile in shared memory past the slots (0: none): the
  // block's channels x (its columns + kWindowParkPad) half values.
  int park_bytes = 0;
};

// A launch's tiles: `groups` x `samples` x the target's depth x channel_blocks x the
// plan's column blocks, and the dividers that decode them; false where there are 2^31
// or more (the decode is 32-bit).
bool set_window_tiles(ShiftedWindowPlan& plan, int64_t groups, int64_t samples, int depth,
                      int channel_blocks);

// Whether the shifted-window GEMM applies to this launch (one phase, stride-1 rows,
// blocks of 64 target channels of which at least 48 are used (32 for the half
// form), at most 16 width taps,
// at least 3 stages in shared memory, 32-bit plane sizes, at most 262140 padded
// channels), and its plan; half_operands: float16 or bfloat16 operands
// (window_operands.cuh); m_tiles 2 (half form only): blocks of 128 target channels,
// which apply only where the padded channels are a multiple of 128; parked (half form
// only): room for the parked epilogue (park_bytes). Returns a plan with columns 0 where
// it does not apply.
ShiftedWindowPlan plan_shifted_window(const PhaseProblem& p, bool half_operands = false,
                                      int m_tiles = 1, bool parked = true);

// The parts both shifted-window forms (this one and tap_rows_plan.h) share.
// plan_compact_grid: the checks (one stride-1 phase, 32-bit plane sizes, the quad
// staging grid's 65535 quads, at most 16 width taps), the compact grid's pitches and
// origin, and skip_halo_taps; false where a check fails. plan_plane_rows: the quad
// planes' length, from the blocks' columns (column_blocks, column_step,
// min_width_shift, window_rows), so that every window stays inside them; false where it
// passes 32 bits.
bool plan_compact_grid(const PhaseProblem& p, ShiftedWindowPlan& plan);
bool plan_plane_rows(const PhaseProblem& p, ShiftedWindowPlan& plan);

}  // namespace ct3d::cuda
