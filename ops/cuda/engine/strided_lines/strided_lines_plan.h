// The strided-lines form of the forward (wgmma_strided_lines_kernel.cuh): width stride
// 2 (dilation 1, 3 or 4 width taps) and few target channels, the tap-columns form's
// operands over the stride phases. A tile is one (depth, height) phase's target lines;
// its M rows are the source positions of whole source lines (flat: line x width +
// column), its N rows (width tap, target channel), its reduction the phase's (depth
// tap, height tap, source channel):
//   partial[w][tw][c] = sum over (td, th, ci) of source[ci][line(td, th)][w] * W[ci][c][td, th, tw]
// Every product is useful: target column 2 w - padding + tw takes tap tw of source
// column w, so a target column's width taps lie in source columns w and w - 1 (taps
// tw < 2 and tw >= 2 of the column that owns it), and the epilogue adds them in
// registers. Host and device code: the producer, the consumers and the unit tests walk
// the same tiles and taps.
#pragma once

#include <cstdint>

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// The longest reduction (a tile's depth and height taps x source channels) whose chain
// is not flushed: wgmma's float32 accumulation truncates (error 3.6e-6 at 512). Longer
// ones add their chain into a float32 total every kStridedLinesFlushReductions
// (KERNEL_LOG "chains over 512 reductions"), with one m-tile per warpgroup: the total's registers.
constexpr int kStridedLinesMaxChain = 512;
constexpr int kStridedLinesFlushReductions = 256;
// k-steps (8 source channels each) per pipeline stage.
constexpr int kStridedLinesStageSteps = 2;
// A compute warp's staged epilogue rows: per channel 32 target columns, 4 mod 8 floats
// apart (a lane's writes of one k lie 8 banks from the next t's: 2-way at most).
constexpr int kStridedLinesStagedPitch = 36;
// 64-row m-tiles per compute warpgroup for wgmma N: two up to 96 (accumulators and two
// sets of split fragments in the compute warpgroups' registers; n128 with two made
// ptxas serialize the wgmmas, C7512); one where the chain flushes.
constexpr int strided_lines_m_tiles(int n, bool flush = false) { return n <= 96 && !flush ? 2 : 1; }
// A compute warpgroup's box: per channel its 64 x m_tiles flat rows and 4 floats, an odd
// number of 4-float groups (the lanes' four k lie 8 banks apart).
constexpr int strided_lines_box_width(int m_tiles) { return 64 * m_tiles + 4; }
constexpr int strided_lines_box_bytes(int m_tiles) {
  return 4 * kStridedLinesStageSteps * 8 * strided_lines_box_width(m_tiles);
}
// A stage: both compute warpgroups' boxes, then the k-steps' weights (hi and lo, n rows
// x 8 values each).
constexpr int strided_lines_stage_weight_bytes(int n) {
  return kStridedLinesStageSteps * 2 * n * 32;
}
constexpr int strided_lines_stage_bytes(int n, int m_tiles) {
  return 2 * strided_lines_box_bytes(m_tiles) + strided_lines_stage_weight_bytes(n);
}

struct StridedLinesPlan {
  int width_taps = 0;     // 0: the plan does not apply
  int channel_block = 0;  // target channels per tile (wgmma N = width_taps x channel_block)
  int m_tiles = 0;        // 64-row m-tiles per compute warpgroup
  int source_width = 0, target_width = 0, width_padding = 0;
  // Whole source lines per compute warpgroup (a tile: two warpgroups' lines).
  int lines_per_warpgroup = 0;
  int line_blocks = 0;     // tiles per (plane, height residue): the largest residue's lines
  int channel_blocks = 0;  // tiles per group along the target channels
  int groups = 1;
  int k_steps = 0;  // source channels / 8, a whole number of stages
  // The packed weights' pitch: the most taps any depth or height residue has.
  int depth_taps = 0, height_taps = 0;
  int tiles = 0;
  int slots = 0, stage_bytes = 0, shared_bytes = 0;
  // Stages per accumulator chain, or 0: the whole reduction is one chain (at most
  // kStridedLinesMaxChain, or exact operands, whose output is rounded to 11 or 8 bits).
  int flush_stages = 0;
  // The epilogue's warp-staged stores (KERNEL_LOG "warp-staged stores for the strided-lines
  // epilogue", "warp-staged stores for every width": every width the form takes): each compute
  // warp's rows (kChannels x kStridedLinesStagedPitch floats) at staged_offset past the slots.
  int staged_offset = 0;
};

// Whether the problem is a forward with width stride 2 and 3 or 4 width taps: the checks
// that need no PhaseProblem, so that other calls skip building one.
bool strided_lines_may_apply(const GatherProblem& problem);

// The plan of a forward problem (host code), or one whose width_taps is 0 where the form
// does not apply: width stride 2 with dilation 1 and 3 or 4 taps, whole source lines of
// at most 128 columns (a multiple of 4; 64 where the chain flushes) per compute
// warpgroup, one TMA box per stage inside a group (source_boxes: the source
// fits window_tensor_map.h's boxes).
StridedLinesPlan plan_strided_lines(const GatherProblem& problem, const PhaseProblem& p,
                                    bool source_boxes);

// Where the form measured faster than the other mainloops. Flushed chains (KERNEL_LOG
// "chains over 512 reductions"): at most 2 channel blocks per group (1.4-2.3x with 8 to 64 target
// channels; with 4, W-256-128-k3-s2, 0.98x: each block reads the source again, one m-tile a weight
// stage). Unflushed ones, with the warp-staged stores (KERNEL_LOG "warp-staged stores for the
// strided-lines epilogue", "warp-staged stores for every width"): every layer measured (L1-73 0.90
// against 1.53 ms; the lanes' own stores, "width stride 2 on wgmma", lost there, 0.84x, and are
// gone).
bool strided_lines_pays(const StridedLinesPlan& plan);

// Tile index: line block fastest, then height residue, target plane (depth residue,
// phase position), channel block, group, sample; tiles that read the same source
// planes run together.
struct StridedLinesTile {
  int n, group, channel_block;
  int depth_residue, qd;   // target depth qd * stride + depth_residue
  int height_residue, q0;  // the tile's first target line q0 * stride + height_residue
};

CT3D_HOST_DEVICE StridedLinesTile strided_lines_tile(const PhaseProblem& p,
                                                     const StridedLinesPlan& plan, int index) {
  StridedLinesTile tile{};
  const DimParams& depth = p.dim[0];
  const DimParams& height = p.dim[1];
  tile.q0 = index % plan.line_blocks * 2 * plan.lines_per_warpgroup;
  index /= plan.line_blocks;
  tile.height_residue = height.active_residue[index % height.active_residues];
  index /= height.active_residues;
  tile.qd = index % depth.max_positions;
  index /= depth.max_positions;
  tile.depth_residue = depth.active_residue[index % depth.active_residues];
  index /= depth.active_residues;
  tile.channel_block = index % plan.channel_blocks;
  index /= plan.channel_blocks;
  tile.group = index % plan.groups;
  tile.n = index / plan.groups;
  return tile;
}

// Whether the tile has target positions (its residues have fewer than the largest).
CT3D_HOST_DEVICE bool strided_lines_tile_stores(const PhaseProblem& p,
                                                const StridedLinesTile& tile) {
  return tile.qd < p.dim[0].residue[tile.depth_residue].positions &&
         tile.q0 < p.dim[1].residue[tile.height_residue].positions;
}

// The source plane of depth tap td, or -1 where it lies outside the source (the tap is
// left out: it would read only zeros).
CT3D_HOST_DEVICE int strided_lines_source_depth(const PhaseProblem& p, const StridedLinesTile& tile,
                                                int td) {
  const ResidueParams& rd = p.dim[0].residue[tile.depth_residue];
  const int depth = tile.qd + rd.first_shift + td * rd.shift_step;
  return depth >= 0 && depth < p.source_extent[0] ? depth : -1;
}

// The source line height tap th reads for the tile's first target line. The tile's
// lines read the lines from there on; the tap is left out where none is inside.
CT3D_HOST_DEVICE int strided_lines_first_line(const PhaseProblem& p, const StridedLinesTile& tile,
                                              int th) {
  const ResidueParams& rh = p.dim[1].residue[tile.height_residue];
  return tile.q0 + rh.first_shift + th * rh.shift_step;
}
CT3D_HOST_DEVICE bool strided_lines_line_tap_reads(const PhaseProblem& p,
                                                   const StridedLinesPlan& plan, int first_line) {
  return first_line + 2 * plan.lines_per_warpgroup > 0 && first_line < p.source_extent[1];
}

// The tile's stages: its (depth tap, height tap) pairs that read inside the source,
// times the stages of source channels. Zero: its outputs are the bias alone.
CT3D_HOST_DEVICE int strided_lines_stages(const PhaseProblem& p, const StridedLinesPlan& plan,
                                          const StridedLinesTile& tile) {
  int depth_taps = 0, height_taps = 0;
  for (int td = 0; td < p.dim[0].residue[tile.depth_residue].taps; ++td) {
    depth_taps += strided_lines_source_depth(p, tile, td) >= 0;
  }
  for (int th = 0; th < p.dim[1].residue[tile.height_residue].taps; ++th) {
    height_taps += strided_lines_line_tap_reads(p, plan, strided_lines_first_line(p, tile, th));
  }
  return depth_taps * height_taps * (plan.k_steps / kStridedLinesStageSteps);
}

// The packed weights' stage of (tile, td, th, stage of source channels): the stages of
// one tile's taps are consecutive runs of one (group, channel block, residues) block.
CT3D_HOST_DEVICE int64_t strided_lines_weight_stage(const PhaseProblem& p,
                                                    const StridedLinesPlan& plan,
                                                    const StridedLinesTile& tile, int td, int th,
                                                    int channel_stage) {
  const int64_t block =
      ((int64_t{tile.group} * plan.channel_blocks + tile.channel_block) * p.dim[0].stride +
       tile.depth_residue) *
          p.dim[1].stride +
      tile.height_residue;
  return ((block * plan.depth_taps + td) * plan.height_taps + th) *
             (plan.k_steps / kStridedLinesStageSteps) +
         channel_stage;
}

}  // namespace ct3d::cuda
