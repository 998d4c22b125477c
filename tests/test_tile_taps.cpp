// The taps a shifted-window tile leaves out (ops/cuda/engine/window/tile_taps.h, KERNEL_LOG
// "leave out the halo's taps"): at every (depth tap, height tap) outside a tile's ranges, each of
// the tile's stored outputs reads only the halo at every width tap, so leaving it out changes no
// stored output; and the ranges are not all taps where the target's border planes and
// lines read the halo.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "catch.h"
#include "forward_window_problem.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/tap_rows_tile_taps.h"
#include "ops/cuda/engine/window/tile_taps.h"
#include "ops/cuda/engine/window/window_box_geometry.h"

using ct3d::test::forward_problem;
using ct3d::test::kOutside;
using ct3d::test::Shape;
using ct3d::test::source_index;

namespace {

struct Output {
  int line, column;
};

// Counts the reads inside the source that the tile's taps leave out (must be none) and
// the (depth tap, height tap) pairs left out, for a tile on plane qd storing `outputs`.
struct Tally {
  int64_t lost_reads = 0, skipped_pairs = 0, tiles = 0;
};

void tally_tile(const ct3d::cuda::PhaseProblem& p, int qd, const std::vector<Output>& outputs,
                const ct3d::cuda::TileTaps& taps, Tally& tally) {
  const ct3d::cuda::ResidueParams& rd = p.dim[0].residue[0];
  const ct3d::cuda::ResidueParams& rh = p.dim[1].residue[0];
  const ct3d::cuda::ResidueParams& rw = p.dim[2].residue[0];
  ++tally.tiles;
  for (int td = 0; td < rd.taps; ++td) {
    for (int th = 0; th < rh.taps; ++th) {
      const bool kept = td >= taps.depth.first && td < taps.depth.first + taps.depth.count &&
                        th >= taps.height.first && th < taps.height.first + taps.height.count;
      if (kept) continue;
      ++tally.skipped_pairs;
      for (const Output& o : outputs) {
        for (int tw = 0; tw < rw.taps; ++tw) {
          tally.lost_reads +=
              source_index(p, qd + rd.first_shift + td * rd.shift_step,
                           o.line + rh.first_shift + th * rh.shift_step,
                           o.column + rw.first_shift + tw * rw.shift_step) != kOutside;
        }
      }
    }
  }
}

const std::vector<int64_t> kOne{1, 1, 1}, kZero{0, 0, 0};

// Shapes with halo planes and lines: no padding (58, 61, 68-like), "same" padding, dilation
// and output padding past the source.
const Shape kShapes[] = {
    {16, {4, 6, 64}, {3, 5, 7}, kOne, kZero, kZero, kOne},               // as L1-58
    {48, {3, 5, 64}, {3, 3, 3}, kOne, kZero, kZero, kOne},               // as L1-61
    {64, {4, 7, 12}, {3, 5, 5}, kOne, kZero, kZero, kOne},               // as L1-68
    {64, {5, 6, 20}, {5, 5, 5}, kOne, {2, 2, 2}, kZero, kOne},           // "same", k5
    {24, {3, 5, 48}, {3, 3, 3}, kOne, {1, 1, 1}, kZero, kOne},           // "same", k3
    {48, {4, 5, 12}, {3, 3, 3}, kOne, {0, 1, 2}, {1, 0, 1}, {2, 1, 2}},  // dilation, output padding
    {16, {3, 4, 96}, {3, 3, 4}, kOne, kZero, kZero, kOne},
};

}  // namespace

TEST_CASE("taps_inside_source: the taps at which some target index reads inside the source") {
  int64_t checked = 0;
  for (int taps = 1; taps <= 7; ++taps) {
    for (int step = -3; step <= 3; ++step) {
      for (int first = -8; first <= 8; ++first) {
        const ct3d::cuda::ResidueParams r{taps, 0, 0, 1, first, step};
        for (int extent = 1; extent <= 5; ++extent) {
          for (int q0 = 0; q0 < 10; ++q0) {
            for (int q1 = q0; q1 < q0 + 4; ++q1) {
              const ct3d::cuda::TapRange range = ct3d::cuda::taps_inside_source(r, q0, q1, extent);
              for (int t = 0; t < taps; ++t) {
                bool reads_inside = false;
                for (int q = q0; q <= q1; ++q) {
                  const int at = q + first + t * step;
                  reads_inside = reads_inside || (at >= 0 && at < extent);
                }
                const bool in_range = t >= range.first && t < range.first + range.count;
                REQUIRE(in_range == reads_inside);
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  CHECK(checked > 100000);
}

TEST_CASE("shifted-window tiles leave out only taps whose reads are all halo") {
  for (const Shape& s : kShapes) {
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    ct3d::cuda::ShiftedWindowPlan plan = ct3d::cuda::plan_shifted_window(p);
    if (plan.columns == 0) continue;
    // Off in this GEMM (measured no gain); its tiles as they would be with it on.
    CHECK_FALSE(plan.skip_halo_taps);
    plan.skip_halo_taps = true;
    INFO("spatial " << s.spatial[0] << "x" << s.spatial[1] << "x" << s.spatial[2] << " kernel "
                    << s.kernel[0] << "x" << s.kernel[1] << "x" << s.kernel[2]);
    Tally tally;
    for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
      for (int block = 0; block < plan.column_blocks; ++block) {
        const int column0 = block * plan.column_step;
        std::vector<Output> outputs;
        for (int c = column0; c < std::min(column0 + plan.block_columns, plan.plane_columns); ++c) {
          const Output o{c / plan.line_pitch, c % plan.line_pitch};
          if (o.line < p.dim[1].max_positions && o.column < p.dim[2].max_positions) {
            outputs.push_back(o);
          }
        }
        tally_tile(p, qd, outputs, ct3d::cuda::window_columns_tile_taps(p, plan, qd, column0),
                   tally);
      }
    }
    CHECK(tally.tiles > 0);
    CHECK(tally.lost_reads == 0);
    CHECK(tally.skipped_pairs > 0);
  }
}

TEST_CASE("line and flat tiles leave out only taps whose reads are all halo") {
  for (const Shape& s : kShapes) {
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    INFO("spatial " << s.spatial[0] << "x" << s.spatial[1] << "x" << s.spatial[2] << " kernel "
                    << s.kernel[0] << "x" << s.kernel[1] << "x" << s.kernel[2]);
    const ct3d::cuda::TapRowsPlan base = ct3d::cuda::plan_tap_rows(p, false, true);
    if (base.window.columns == 0) continue;
    const int lines = p.dim[1].max_positions, width = p.dim[2].max_positions;
    ct3d::cuda::TapRowsPlan lined = base;
    if (ct3d::cuda::plan_line_boxes(p, lined)) {
      Tally tally;
      for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
        for (int line0 = 0; line0 < lines; line0 += lined.tile_lines) {
          std::vector<Output> outputs;
          for (int line = line0; line < std::min(line0 + lined.tile_lines, lines); ++line) {
            for (int column = 0; column < width; ++column) outputs.push_back({line, column});
          }
          tally_tile(p, qd, outputs, ct3d::cuda::tap_rows_tile_taps(p, lined, qd, line0), tally);
        }
      }
      CHECK(tally.lost_reads == 0);
      CHECK(tally.skipped_pairs > 0);
    }
    ct3d::cuda::TapRowsPlan flat = base;
    if (ct3d::cuda::plan_flat_boxes(p, flat)) {
      Tally tally;
      const int rows = lines * p.source_extent[2];
      for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
        for (int row0 = 0; row0 < rows; row0 += flat.flat_step) {
          const ct3d::cuda::FlatRange owned = ct3d::cuda::flat_tile_owned(p, flat, row0);
          std::vector<Output> outputs;
          for (int line = 0; line < lines; ++line) {
            for (int column = 0; column < width; ++column) {
              const int owner = ct3d::cuda::flat_owner(p, line, column);
              if (owner >= owned.begin && owner < owned.end) outputs.push_back({line, column});
            }
          }
          tally_tile(p, qd, outputs, ct3d::cuda::tap_rows_tile_taps(p, flat, qd, row0), tally);
        }
      }
      CHECK(tally.lost_reads == 0);
      CHECK(tally.skipped_pairs > 0);
    }
  }
}

TEST_CASE("no tile skips where no border plane or line reads the halo") {
  // Padding kernel - 1: every target position reads inside the source at every tap.
  const ct3d::cuda::PhaseProblem inside =
      forward_problem({64, {5, 6, 20}, {3, 3, 3}, kOne, {2, 2, 2}, kZero, kOne});
  CHECK_FALSE(ct3d::cuda::border_taps_read_halo(inside));
  CHECK_FALSE(ct3d::cuda::plan_shifted_window(inside).skip_halo_taps);
  // A halo only in depth, or only in height.
  CHECK(ct3d::cuda::border_taps_read_halo(
      forward_problem({64, {5, 6, 20}, {3, 3, 3}, kOne, {1, 2, 2}, kZero, kOne})));
  CHECK(ct3d::cuda::border_taps_read_halo(
      forward_problem({64, {5, 6, 20}, {3, 3, 3}, kOne, {2, 1, 2}, kZero, kOne})));
  // Only in width: no tile skips a (depth tap, height tap).
  CHECK_FALSE(ct3d::cuda::border_taps_read_halo(
      forward_problem({64, {5, 6, 20}, {3, 3, 3}, kOne, {2, 2, 0}, kZero, kOne})));
}

TEST_CASE("halo taps: left out by the tap-rows forms, kept by the shifted-window GEMM") {
  const ct3d::cuda::PhaseProblem p68 = forward_problem(kShapes[2]);  // as L1-68
  const ct3d::cuda::PhaseProblem p58 = forward_problem(kShapes[0]);  // as L1-58
  CHECK(ct3d::cuda::plan_tap_rows(p58, false, true).window.skip_halo_taps);
  ct3d::cuda::ShiftedWindowPlan skipping = ct3d::cuda::plan_shifted_window(p68);
  REQUIRE(skipping.columns > 0);
  CHECK_FALSE(skipping.skip_halo_taps);
  // Its tiles where they would leave them out: target plane 0 of a k3 kernel without
  // padding reads one source plane.
  skipping.skip_halo_taps = true;
  CHECK(ct3d::cuda::window_columns_tile_taps(p68, skipping, 0, 0).depth.count == 1);
  // A tap-rows plan that keeps them: every tap.
  ct3d::cuda::TapRowsPlan keeping = ct3d::cuda::plan_tap_rows(p58, false, true);
  REQUIRE(keeping.window.columns > 0);
  keeping.window.skip_halo_taps = false;
  const ct3d::cuda::TileTaps all = ct3d::cuda::tap_rows_tile_taps(p58, keeping, 0, 0);
  CHECK(all.depth.first == 0);
  CHECK(all.depth.count == 3);
  CHECK(all.height.count == 5);
}
