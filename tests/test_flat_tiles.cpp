// The tap-columns form's flat tiles (ops/cuda/engine/window/window_box_geometry.h, KERNEL_LOG
// "flat tiles"): every stored output is owned by exactly one tile, and each of its width taps
// inside the source reads, at the row of that tile's flat box the kernel computes, the
// source value the convolution names.
#include <ATen/ATen.h>

#include "catch.h"
#include "forward_window_problem.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/window_box_geometry.h"

using ct3d::test::forward_problem;
using ct3d::test::flat_index;
using ct3d::test::kOutside;
using ct3d::test::Shape;
using ct3d::test::source_index;

namespace {

ct3d::cuda::TapRowsPlan flat_plan(const ct3d::cuda::PhaseProblem& p) {
  ct3d::cuda::TapRowsPlan plan = ct3d::cuda::plan_tap_rows(p, false, true);
  REQUIRE(plan.window.columns > 0);
  REQUIRE(ct3d::cuda::plan_flat_boxes(p, plan));
  return plan;
}

}  // namespace

TEST_CASE("flat tiles: steps of a multiple of 4 within the block less the span") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  // L1-70's width (96, 72 rows: 256 a block, two boxes a stage).
  const ct3d::cuda::TapRowsPlan p70 = flat_plan(forward_problem({24, {3, 4, 96}, {3, 3, 3}, one, zero, zero, one}));
  CHECK(p70.flat_step == 252);
  CHECK(p70.stage_boxes == 2);
  CHECK(p70.box_width == 132);
  CHECK(p70.window.column_step == 252);
  // L1-68's input gradient's width (68, 160 rows: 128 a block).
  const ct3d::cuda::TapRowsPlan p68 = flat_plan(forward_problem({32, {3, 4, 68}, {3, 5, 5}, one, zero, zero, one}));
  CHECK(p68.flat_step == 124);
  CHECK(p68.stage_boxes == 1);
  ct3d::cuda::TapRowsPlan odd = ct3d::cuda::plan_tap_rows(
      forward_problem({24, {3, 4, 37}, {3, 3, 3}, one, zero, zero, one}), false, true);
  CHECK_FALSE(ct3d::cuda::plan_flat_boxes(forward_problem({24, {3, 4, 37}, {3, 3, 3}, one, zero, zero, one}), odd));
}

TEST_CASE("flat tiles store every output once, its reads in the owning tile's box") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const Shape shapes[] = {
      {24, {3, 4, 96}, {3, 3, 3}, one, zero, zero, one},             // as L1-70
      {32, {3, 5, 68}, {3, 5, 5}, one, zero, zero, one},             // as L1-68's input gradient
      {48, {3, 4, 64}, {3, 3, 3}, one, zero, zero, one},             // as L1-61
      {16, {3, 3, 200}, {3, 3, 4}, one, zero, zero, one},            // lines longer than a block
      {48, {3, 5, 12}, {3, 3, 3}, one, {0, 1, 2}, zero, {2, 1, 2}},  // dilation, padding
      {24, {3, 5, 20}, {3, 3, 3}, one, {1, 1, 1}, zero, one},        // padding, 72 rows
      {48, {2, 3, 4}, {3, 3, 3}, one, zero, zero, one},              // tiny lines
      {16, {2, 4, 36}, {2, 3, 7}, one, {0, 0, 3}, zero, one},        // 7 taps, padding
  };
  for (const Shape& s : shapes) {
    INFO("spatial " << s.spatial[0] << "x" << s.spatial[1] << "x" << s.spatial[2] << " kernel "
                    << s.kernel[0] << "x" << s.kernel[1] << "x" << s.kernel[2]);
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    const ct3d::cuda::TapRowsPlan plan = flat_plan(p);
    const ct3d::cuda::ShiftedWindowPlan& w = plan.window;
    const ct3d::cuda::ResidueParams& rd = p.dim[0].residue[0];
    const ct3d::cuda::ResidueParams& rh = p.dim[1].residue[0];
    const ct3d::cuda::ResidueParams& rw = p.dim[2].residue[0];
    const int width = p.source_extent[2];
    const int height = p.dim[1].max_positions, out_width = p.dim[2].max_positions;
    int64_t reads = 0, mismatches = 0, outside_block = 0, wrong_owners = 0, bad_ranges = 0;
    for (int block = 0; block < w.column_blocks; ++block) {
      const ct3d::cuda::FlatRange r = ct3d::cuda::flat_tile_owned(p, plan, block * w.column_step);
      bad_ranges += r.begin >= r.end || r.begin < block * w.column_step;
    }
    for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
      for (int qh = 0; qh < height; ++qh) {
        for (int qw = 0; qw < out_width; ++qw) {
          const int owner = ct3d::cuda::flat_owner(p, qh, qw);
          int owners = 0, row0 = 0;
          for (int block = 0; block < w.column_blocks; ++block) {
            const ct3d::cuda::FlatRange r = ct3d::cuda::flat_tile_owned(p, plan, block * w.column_step);
            if (owner >= r.begin && owner < r.end) {
              ++owners;
              row0 = block * w.column_step;
            }
          }
          wrong_owners += owners != 1;
          for (int td = 0; td < rd.taps; ++td) {
            for (int th = 0; th < rh.taps; ++th) {
              const ct3d::cuda::BoxStart box = ct3d::cuda::line_box_start(p, qd, row0, td, th);
              const int sd = rd.first_shift + td * rd.shift_step;
              const int sh = rh.first_shift + th * rh.shift_step;
              for (int tw = 0; tw < rw.taps; ++tw) {
                const int x = qw + rw.first_shift + tw * rw.shift_step;
                if (x < 0 || x >= width) continue;  // the epilogue leaves it out
                ++reads;
                const int row = qh * width + x - row0;
                outside_block += row < 0 || row >= w.block_columns;
                mismatches += source_index(p, qd + sd, qh + sh, x) !=
                              flat_index(p, box.depth, int64_t{box.line} + row);
              }
            }
          }
        }
      }
    }
    CHECK(reads > 0);
    CHECK(bad_ranges == 0);
    CHECK(wrong_owners == 0);
    CHECK(outside_block == 0);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("flat tiles by default: input gradients, and forwards whose tiles fill the plane") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  // (The switches unset.) L1-70's forward (96 wide: two lines fill 3/4 of 256 positions;
  // 37 tiles of 252 rows for a plane of 96 x 96) takes flat tiles; N-48-24's (48 wide, 10
  // tiles for 48 x 48: 1.11x) the window boxes; the same geometry as an input gradient
  // flat tiles.
  const auto p70 = forward_problem({24, {3, 96, 96}, {3, 3, 3}, one, one, zero, one});
  CHECK(ct3d::cuda::plan_tap_columns_if_taken(p70, false, true).flat_step == 252);
  const auto p48 = forward_problem({24, {4, 48, 48}, {3, 3, 3}, one, one, zero, one});
  const ct3d::cuda::TapRowsPlan f48 = ct3d::cuda::plan_tap_columns_if_taken(p48, false, true);
  CHECK(f48.flat_step == 0);
  CHECK(f48.tile_lines == 0);
  CHECK(f48.box_width > 0);
  const ct3d::cuda::TapRowsPlan flat48 = flat_plan(p48);
  CHECK_FALSE(ct3d::cuda::flat_tiles_pay(p48, flat48, false));
  CHECK(ct3d::cuda::flat_tiles_pay(p48, flat48, true));
  CHECK(ct3d::cuda::plan_tap_columns_if_taken(p48, true, true).flat_step > 0);
}

TEST_CASE("input gradients of 48 rows keep the staged planes") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  // N-16-8's geometry (16 target channels: 48 rows, 64 wide): as an input gradient no
  // TMA-read form (KERNEL_LOG "input gradients of 48 rows"); as a forward the window
  // boxes, as before.
  const auto p16 = forward_problem({16, {4, 64, 64}, {3, 3, 3}, one, one, zero, one});
  const ct3d::cuda::TapRowsPlan gradient = ct3d::cuda::plan_tap_columns_if_taken(p16, true, true);
  CHECK(gradient.rows_used == 48);
  CHECK(gradient.window.columns > 0);
  CHECK(gradient.flat_step == 0);
  CHECK(gradient.tile_lines == 0);
  CHECK(gradient.box_width == 0);
  CHECK_FALSE(ct3d::cuda::source_tiles_may_pay(gradient, true));
  CHECK(ct3d::cuda::source_tiles_may_pay(gradient, false));
  const ct3d::cuda::TapRowsPlan forward = ct3d::cuda::plan_tap_columns_if_taken(p16, false, true);
  CHECK(forward.flat_step + forward.tile_lines + forward.box_width > 0);
}
