// The tap-columns form's line tiles (ops/cuda/engine/window/window_boxes.cuh, KERNEL_LOG
// "the window as whole source lines"):
// where they apply, their boxes, and that every stored output's width taps, as the
// epilogue adds them (the taps whose source column is inside the source), read at the
// flat box position the kernel computes the source value the convolution names, and
// that the taps it leaves out read nothing but the halo.
#include <ATen/ATen.h>

#include "catch.h"
#include "forward_window_problem.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/window_box_geometry.h"

using ct3d::test::forward_problem;
using ct3d::test::flat_index;
using ct3d::test::kOutside;
using ct3d::test::source_index;
using ct3d::test::Shape;

namespace {

// The plan with line tiles at any width they fit (or, with `where_pays`, where
// line_tiles_pay), or columns 0 where they do not.
ct3d::cuda::TapRowsPlan line_plan(const ct3d::cuda::PhaseProblem& p, bool where_pays = false) {
  ct3d::cuda::TapRowsPlan plan = ct3d::cuda::plan_tap_rows(p, false, true);
  REQUIRE(plan.window.columns > 0);
  if (!ct3d::cuda::plan_line_boxes(p, plan) ||
      (where_pays && !ct3d::cuda::line_tiles_pay(p, plan))) {
    plan.window.columns = 0;
  }
  return plan;
}

}  // namespace

TEST_CASE("line tiles: whole lines of a block, boxes of 132 floats a channel, one per 128 rows") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  // L1-61's geometry (64 wide, 144 rows): 2 lines a tile, 33 tiles a plane of 66 lines.
  const ct3d::cuda::TapRowsPlan p61 = line_plan(forward_problem({48, {4, 6, 64}, {3, 3, 3}, one, zero, zero, one}));
  CHECK(p61.tile_lines == 2);
  CHECK(p61.box_width == 132);
  CHECK(p61.box_lines == 1);
  CHECK(p61.window.column_step == 2);
  CHECK(p61.window.column_blocks == 4);  // 8 target lines
  CHECK(p61.window_bytes == 2 * 8 * 132 * 4);
  CHECK(p61.window.slots >= 5);
  CHECK(p61.shared_bytes <= 224 * 1024);
  // L1-58's (7 taps, 112 rows, 64 wide).
  CHECK(line_plan(forward_problem({16, {4, 6, 64}, {3, 5, 7}, one, zero, zero, one})).tile_lines == 2);
  // 96 wide (L1-70's width) fills 3/4 of the block: only at any width.
  const ct3d::cuda::PhaseProblem p96 = forward_problem({48, {3, 4, 96}, {3, 3, 3}, one, zero, zero, one});
  CHECK(line_plan(p96).tile_lines == 1);
  CHECK(line_plan(p96, true).window.columns == 0);
  // Two m-tiles (72 rows): 256 positions a block, two boxes a stage of one k-step.
  const ct3d::cuda::TapRowsPlan p72 = line_plan(forward_problem({24, {3, 4, 48}, {3, 3, 3}, one, zero, zero, one}));
  CHECK(p72.tile_lines == 5);
  CHECK(p72.stage_boxes == 2);
  CHECK(p72.window_bytes == 2 * 8 * 132 * 4);
  CHECK(line_plan(forward_problem({24, {3, 4, 96}, {3, 3, 3}, one, zero, zero, one}), true).window.columns == 0);
  CHECK(line_plan(forward_problem({24, {3, 4, 200}, {3, 3, 3}, one, zero, zero, one})).tile_lines == 1);
  // Wider than a block, widths not a multiple of 4 floats (a box would start off a
  // 16-byte boundary).
  CHECK(line_plan(forward_problem({48, {3, 4, 132}, {3, 3, 3}, one, zero, zero, one})).window.columns == 0);
  CHECK(line_plan(forward_problem({48, {3, 5, 13}, {3, 3, 3}, one, zero, zero, one})).window.columns == 0);
  CHECK(line_plan(forward_problem({48, {3, 4, 37}, {3, 3, 3}, one, zero, zero, one})).window.columns == 0);
}

TEST_CASE("line tiles read every stored output's width taps at the flat offsets the kernel computes") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const Shape shapes[] = {
      {48, {3, 5, 64}, {3, 3, 3}, one, zero, zero, one},             // as L1-61
      {16, {3, 6, 64}, {3, 5, 7}, one, zero, zero, one},             // as L1-58
      {32, {3, 6, 16}, {3, 5, 5}, one, zero, zero, one},             // 5 taps, 8 lines a tile
      {48, {3, 4, 40}, {3, 3, 3}, one, {1, 1, 1}, zero, one},        // padding, 3 lines of 40
      {48, {3, 5, 12}, {3, 3, 3}, one, {0, 1, 2}, zero, {2, 1, 2}},  // dilation, mixed halos
      {32, {2, 4, 36}, {2, 3, 5}, one, zero, zero, {1, 1, 2}},       // 160 rows, 3 lines of 36
      {24, {3, 5, 48}, {3, 3, 3}, one, {1, 1, 1}, zero, one},        // 72 rows: two boxes, 5 lines
      {16, {3, 4, 200}, {3, 3, 4}, one, zero, zero, one},            // 64 rows: one line, two boxes
      {48, {2, 3, 4}, {3, 3, 3}, one, zero, zero, one},              // tiny lines
      {48, {3, 4, 96}, {3, 3, 3}, one, zero, {0, 1, 0}, {1, 2, 1}},  // one line, output padding
  };
  for (const Shape& s : shapes) {
    INFO("spatial " << s.spatial[0] << "x" << s.spatial[1] << "x" << s.spatial[2] << " kernel "
                    << s.kernel[0] << "x" << s.kernel[1] << "x" << s.kernel[2]);
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    const ct3d::cuda::TapRowsPlan plan = line_plan(p);
    REQUIRE(plan.tile_lines > 0);
    const ct3d::cuda::ShiftedWindowPlan& w = plan.window;
    const ct3d::cuda::ResidueParams& rd = p.dim[0].residue[0];
    const ct3d::cuda::ResidueParams& rh = p.dim[1].residue[0];
    const ct3d::cuda::ResidueParams& rw = p.dim[2].residue[0];
    const int width = p.source_extent[2];
    int64_t reads = 0, mismatches = 0, outside_block = 0, dropped_inside = 0, stored = 0;
    for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
      for (int block = 0; block < w.column_blocks; ++block) {
        const int line0 = block * w.column_step;
        for (int line = 0; line < plan.tile_lines && line0 + line < p.dim[1].max_positions; ++line) {
          for (int qw = 0; qw < p.dim[2].max_positions; ++qw) {
            ++stored;
            for (int td = 0; td < rd.taps; ++td) {
              for (int th = 0; th < rh.taps; ++th) {
                const ct3d::cuda::BoxStart box = ct3d::cuda::line_box_start(p, qd, line0 * width, td, th);
                const int sd = rd.first_shift + td * rd.shift_step;
                const int sh = rh.first_shift + th * rh.shift_step;
                for (int tw = 0; tw < rw.taps; ++tw) {
                  const int x = qw + rw.first_shift + tw * rw.shift_step;
                  const int64_t expected = source_index(p, qd + sd, line0 + line + sh, x);
                  if (x < 0 || x >= width) {  // the epilogue leaves this tap out
                    dropped_inside += expected != kOutside;
                    continue;
                  }
                  ++reads;
                  const int row = line * width + x;
                  outside_block += row >= w.block_columns || row >= plan.tile_lines * width;
                  mismatches += expected != flat_index(p, box.depth, int64_t{box.line} + row);
                }
              }
            }
          }
        }
      }
    }
    CHECK(stored == int64_t{p.dim[0].max_positions} * p.dim[1].max_positions * p.dim[2].max_positions);
    CHECK(reads > 0);
    CHECK(outside_block == 0);
    CHECK(mismatches == 0);
    CHECK(dropped_inside == 0);
  }
}

TEST_CASE("line tiles are chosen by default where they measured faster") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const auto lined = [](const Shape& shape, bool source_boxes = true) {
    const ct3d::cuda::PhaseProblem p = forward_problem(shape);
    return ct3d::cuda::plan_tap_columns_if_taken(p, false, source_boxes).tile_lines > 0;
  };
  // L1-61's lines (144 rows), L1-58's (112), N-64-32-k3's (96), N-32-16-k5's (80).
  CHECK(lined({48, {4, 6, 64}, {3, 3, 3}, one, zero, zero, one}));
  CHECK(lined({16, {4, 6, 64}, {3, 5, 7}, one, zero, zero, one}));
  CHECK(lined({32, {4, 6, 32}, {3, 3, 3}, one, one, zero, one}));
  CHECK(lined({16, {4, 6, 32}, {5, 5, 5}, one, {2, 2, 2}, zero, one}));
  // A source TMA may not read; N-48-24's (72 rows), N-32-16-k3's (48); L1-70's width
  // (96: 3/4 of a block) and a 68-wide line alone in a block.
  CHECK_FALSE(lined({48, {4, 6, 64}, {3, 3, 3}, one, zero, zero, one}, false));
  CHECK_FALSE(lined({24, {4, 6, 48}, {3, 3, 3}, one, one, zero, one}));
  CHECK_FALSE(lined({16, {4, 6, 48}, {3, 3, 3}, one, one, zero, one}));
  CHECK_FALSE(lined({24, {4, 6, 96}, {3, 3, 3}, one, zero, zero, one}));
  CHECK_FALSE(lined({32, {4, 6, 68}, {3, 5, 5}, one, zero, zero, one}));
}
