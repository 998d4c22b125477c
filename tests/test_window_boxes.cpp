// The tap-columns form's window boxes (ops/cuda/engine/window/window_boxes.cuh, KERNEL_LOG
// "window read by TMA"): their sizes, and that every stored output's read of every tap
// finds, at the box position the kernel computes, the source value the convolution names
// (or zero where that is outside the source), as TMA's tiled mode fills a box.
#include <ATen/ATen.h>

#include "catch.h"
#include "forward_window_problem.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/window_box_geometry.h"

using ct3d::test::forward_problem;
using ct3d::test::kOutside;
using ct3d::test::source_index;
using ct3d::test::Shape;

namespace {

ct3d::cuda::TapRowsPlan box_plan(const ct3d::cuda::PhaseProblem& p) {
  ct3d::cuda::TapRowsPlan plan = ct3d::cuda::plan_tap_rows(p, false, true);
  REQUIRE(plan.window.columns > 0);
  REQUIRE(ct3d::cuda::plan_window_boxes(p, plan));
  return plan;
}

// Whether the tap-columns plan of `p` takes boxes; where it does not, the plan is left
// staged.
bool boxes_apply(const ct3d::cuda::PhaseProblem& p) {
  ct3d::cuda::TapRowsPlan plan = ct3d::cuda::plan_tap_rows(p, false, true);
  REQUIRE(plan.window.columns > 0);
  const bool applies = ct3d::cuda::plan_window_boxes(p, plan);
  CHECK((plan.box_width > 0) == applies);
  return applies;
}

}  // namespace

TEST_CASE("window boxes: odd 4-float groups a line, odd lines, within TMA's sides and the slots") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  // L1-61's geometry (64 wide, 3 taps): compact lines of 66, boxes of 68 (17 groups) x 3.
  const ct3d::cuda::PhaseProblem p61 =
      forward_problem({48, {4, 6, 64}, {3, 3, 3}, one, zero, zero, one});
  const ct3d::cuda::TapRowsPlan plan = box_plan(p61);
  CHECK(plan.window.line_pitch == 66);
  CHECK(plan.box_width == 68);
  CHECK(plan.box_lines == 3);
  CHECK(plan.window_bytes == 2 * 8 * 68 * 3 * 4);
  CHECK(plan.window.stage_bytes == plan.window_bytes + 2 * 144 * 64);
  CHECK(plan.window.slots >= 3);
  CHECK(plan.shared_bytes <= 224 * 1024);
  // L1-70's (96 wide, 72 rows: two m-tiles, windows of 256 rows): 100 x 5.
  const ct3d::cuda::TapRowsPlan plan70 =
      box_plan(forward_problem({24, {4, 6, 96}, {3, 3, 3}, one, zero, zero, one}));
  CHECK(plan70.box_width == 100);
  CHECK(plan70.box_lines == 5);
  CHECK(plan70.window_bytes == 8 * 100 * 5 * 4);
  // A width that is not a multiple of 4 floats has no tensor map: the staged planes.
  CHECK_FALSE(boxes_apply(forward_problem({48, {4, 6, 62}, {3, 3, 3}, one, zero, zero, one})));
  // Wide lines: a box of 3 lines x 260 floats would pass TMA's 256.
  CHECK_FALSE(boxes_apply(forward_problem({48, {2, 3, 256}, {3, 3, 3}, one, zero, zero, one})));
  // Every box: odd groups of 4 and odd lines, so a channel's box is 4 mod 8 floats
  // (window_boxes.cuh: the fragment loads' channels 2t lie 8 banks apart).
  // Halo 2 (3 taps, no padding): compact position 0 is width -2, the box starts at -4.
  CHECK(plan.box_lead == 2);
  CHECK(plan70.box_lead == 2);
  for (const auto& pl : {plan, plan70}) {
    CHECK(ct3d::cuda::window_box_first_width(p61, pl) % 4 == 0);
    CHECK(pl.box_width % 8 == 4);
    CHECK(pl.box_lines % 2 == 1);
    CHECK(pl.box_width * pl.box_lines % 8 == 4);
  }
}

TEST_CASE("window boxes hold every stored output's reads at the offsets the kernel computes") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const Shape shapes[] = {
      {48, {3, 5, 64}, {3, 3, 3}, one, zero, zero, one},             // as L1-61
      {24, {3, 4, 96}, {3, 3, 3}, one, zero, zero, one},             // as L1-70
      {32, {3, 6, 16}, {3, 5, 5}, one, zero, zero, one},             // as L1-68's input gradient
      {16, {3, 7, 12}, {3, 5, 7}, one, zero, zero, one},             // as L1-58, narrow lines
      {16, {3, 6, 8}, {3, 3, 4}, one, zero, zero, one},              // 4 taps, 64 rows
      {24, {4, 5, 20}, {3, 3, 3}, one, {1, 1, 1}, zero, one},        // padding: smaller halos
      {16, {3, 5, 12}, {3, 3, 3}, one, {0, 1, 2}, zero, {2, 1, 2}},  // dilation, mixed halos
      {48, {2, 3, 4}, {3, 3, 3}, one, zero, zero, one},              // tiny lines: many per window
  };
  for (const Shape& s : shapes) {
    INFO("spatial " << s.spatial[0] << "x" << s.spatial[1] << "x" << s.spatial[2] << " kernel "
                    << s.kernel[0] << "x" << s.kernel[1] << "x" << s.kernel[2] << " cout "
                    << s.cout);
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    const ct3d::cuda::TapRowsPlan plan = box_plan(p);
    const ct3d::cuda::ShiftedWindowPlan& w = plan.window;
    const ct3d::cuda::ResidueParams& rd = p.dim[0].residue[0];
    const ct3d::cuda::ResidueParams& rh = p.dim[1].residue[0];
    const ct3d::cuda::ResidueParams& rw = p.dim[2].residue[0];
    int64_t reads = 0, mismatches = 0, outside_box = 0, compact_mismatches = 0;
    for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
      for (int block = 0; block < w.column_blocks; ++block) {
        const int column0 = block * w.column_step;
        const int line_offset = ct3d::cuda::window_line_offset(w, column0);
        for (int td = 0; td < rd.taps; ++td) {
          for (int th = 0; th < rh.taps; ++th) {
            const int sd = rd.first_shift + td * rd.shift_step;
            const int sh = rh.first_shift + th * rh.shift_step;
            const int64_t first_row = w.origin + qd * w.plane_pitch + column0 + w.min_width_shift +
                                      sd * w.plane_pitch + int64_t{sh} * w.line_pitch;
            const ct3d::cuda::BoxStart box =
                ct3d::cuda::window_box_start(p, w, static_cast<int>(first_row));
            for (int j = 0; j < w.column_step; ++j) {
              const int column = column0 + j;
              const int qh = column / w.line_pitch, qw = column % w.line_pitch;
              if (qh >= p.dim[1].max_positions || qw >= p.dim[2].max_positions) continue;
              for (int tw = 0; tw < rw.taps; ++tw) {
                const int sw = rw.first_shift + tw * rw.shift_step;
                const int row = j + sw - w.min_width_shift;
                const int offset = ct3d::cuda::box_row_offset(plan, line_offset, row);
                const int line = offset / plan.box_width, at = offset % plan.box_width;
                ++reads;
                if (row >= w.window_rows || line >= plan.box_lines) {
                  ++outside_box;
                  continue;
                }
                const int64_t expected = source_index(p, qd + sd, qh + sh, qw + sw);
                const int64_t in_box =
                    source_index(p, box.depth, box.line + line,
                                 at + ct3d::cuda::window_box_first_width(p, plan));
                mismatches += expected != in_box;
                // The compact grid's value there (what the staged planes hold): checks
                // this test's reading of the shifts.
                const int64_t compact = first_row + row;
                const int64_t plane = compact / w.plane_pitch;
                const int64_t in_plane = compact - plane * w.plane_pitch;
                compact_mismatches +=
                    expected != source_index(p, plane - p.halo_low[0],
                                             in_plane / w.line_pitch - p.halo_low[1],
                                             in_plane % w.line_pitch - p.halo_low[2]);
              }
            }
          }
        }
      }
    }
    CHECK(reads > 0);
    CHECK(outside_box == 0);
    CHECK(mismatches == 0);
    CHECK(compact_mismatches == 0);
  }
}

TEST_CASE("window boxes are chosen by default for 3 width taps and little overfetch") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const auto pays = [](const ct3d::test::Shape& shape) {
    const ct3d::cuda::PhaseProblem p = forward_problem(shape);
    return ct3d::cuda::window_boxes_pay(p, box_plan(p));
  };
  // L1-61's lines (144 rows, boxes 1.57x the window), N-48-24's (72 rows, 1.41x).
  CHECK(pays({48, {4, 6, 64}, {3, 3, 3}, one, zero, zero, one}));
  CHECK(pays({24, {4, 6, 48}, {3, 3, 3}, one, one, zero, one}));
  // L1-70's (72 rows, 1.94x); 5 and 7 width taps.
  CHECK_FALSE(pays({24, {4, 6, 96}, {3, 3, 3}, one, zero, zero, one}));
  CHECK_FALSE(pays({32, {4, 6, 64}, {3, 5, 5}, one, zero, zero, one}));
  CHECK_FALSE(pays({16, {4, 6, 64}, {3, 5, 7}, one, zero, zero, one}));
  const ct3d::cuda::PhaseProblem p =
      forward_problem({48, {4, 6, 64}, {3, 3, 3}, one, zero, zero, one});
  CHECK(ct3d::cuda::plan_tap_columns_if_taken(p, false, true).box_width > 0);
  CHECK(ct3d::cuda::plan_tap_columns_if_taken(p, false, false).box_width == 0);
  const ct3d::cuda::PhaseProblem seven =
      forward_problem({16, {4, 6, 64}, {3, 5, 7}, one, zero, zero, one});
  // 7 taps: no window boxes; at 64 wide line tiles, at 52 (104 of 128 rows) none.
  const ct3d::cuda::TapRowsPlan seven_plan = ct3d::cuda::plan_tap_columns_if_taken(seven, false, true);
  CHECK((seven_plan.box_width == 0 || seven_plan.tile_lines > 0));
  CHECK(ct3d::cuda::plan_tap_columns_if_taken(
            forward_problem({16, {4, 6, 52}, {3, 5, 7}, one, zero, zero, one}), false, true)
            .box_width == 0);
}
