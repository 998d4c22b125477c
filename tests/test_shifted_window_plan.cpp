// The shifted-window GEMM's plans (ops/cuda/engine/window/shifted_window_plan.h and its
// tap-rows form, tap_rows_plan.h): where they apply, and that every stage's window of
// every block stays inside the staged quad planes it is copied from (the kernels' bulk
// copies have no bounds check).
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>

#include "catch.h"
#include "forward_window_problem.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"
#include "ops/cuda/engine/window/window_form_rule.h"

using ct3d::test::forward_problem;
using ct3d::test::Shape;

TEST_CASE("the shifted-window plan applies to stride 1 with blocks of 48 to 64 used channels") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0}, two{2, 2, 2};
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({64, {4, 6, 30}, {3, 5, 5}, one, zero, zero, one}))
            .columns > 0);
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({48, {4, 6, 30}, {3, 3, 3}, one, zero, zero, one}))
            .columns > 0);
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({112, {4, 6, 30}, {3, 3, 3}, one, zero, zero, one}))
            .columns > 0);
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({40, {4, 6, 30}, {3, 3, 3}, one, zero, zero, one}))
            .columns == 0);
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({64, {4, 6, 30}, {3, 3, 3}, two, one, zero, one}))
            .columns == 0);
  // 16 width taps leave 2 slots: too few.
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({64, {2, 3, 40}, {1, 1, 16}, one, zero, zero, one}))
            .columns == 0);
}

TEST_CASE("the half form's blocks of 128 channels: only half, only whole blocks, same windows") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const ct3d::cuda::PhaseProblem wide =
      forward_problem({256, {4, 6, 30}, {3, 3, 3}, one, zero, zero, one});
  const ct3d::cuda::ShiftedWindowPlan one_tile = ct3d::cuda::plan_shifted_window(wide, true);
  const ct3d::cuda::ShiftedWindowPlan two_tiles = ct3d::cuda::plan_shifted_window(wide, true, 2);
  REQUIRE(two_tiles.columns > 0);
  CHECK(two_tiles.m_tiles == 2);
  CHECK(one_tile.m_tiles == 1);
  // The same windows; the weights of a stage twice as many bytes.
  CHECK(two_tiles.window_rows == one_tile.window_rows);
  CHECK(two_tiles.plane_rows == one_tile.plane_rows);
  CHECK(two_tiles.stage_bytes - one_tile.stage_bytes == 3 * 64 * 32);
  CHECK(two_tiles.slots >= 3);
  // float32 keeps one m-tile; 192 channels (padded to 192) are not whole blocks of 128.
  CHECK(ct3d::cuda::plan_shifted_window(wide, false, 2).columns == 0);
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({192, {4, 6, 30}, {3, 3, 3}, one, zero, zero, one}), true, 2)
            .columns == 0);
  // The parked epilogue's tile past the slots, inside the block's shared memory.
  CHECK(two_tiles.park_bytes == 2 * 64 * (2 * two_tiles.columns + 8) * 2);
  CHECK(two_tiles.slots * two_tiles.stage_bytes + two_tiles.park_bytes <= 220 * 1024);
  CHECK(ct3d::cuda::plan_shifted_window(wide, true, 2, false).park_bytes == 0);
  CHECK(ct3d::cuda::plan_shifted_window(wide).park_bytes == 0);  // float32: none
  // 16 width taps of 4 KB weights leave 2 slots: too few.
  CHECK(ct3d::cuda::plan_shifted_window(
            forward_problem({128, {2, 3, 40}, {1, 1, 16}, one, zero, zero, one}), true, 2)
            .columns == 0);
}

TEST_CASE("every shifted-window read lands on its input position or on a zero") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const Shape shapes[] = {
      {64, {6, 7, 12}, {3, 5, 5}, one, zero, zero, one},
      {48, {4, 6, 30}, {3, 3, 3}, one, one, zero, one},
      {64, {3, 5, 20}, {3, 3, 3}, one, {2, 1, 3}, {1, 0, 1}, {2, 1, 2}},
      {64, {2, 3, 400}, {2, 2, 3}, one, zero, zero, one},
      {128, {5, 6, 21}, {3, 3, 5}, one, {1, 1, 2}, zero, one},
      {64, {1, 1, 1}, {2, 2, 2}, one, zero, zero, one},
      {64, {2, 3, 40}, {1, 1, 11}, one, zero, zero, one},
      {64, {3, 4, 9}, {2, 3, 4}, one, {0, 2, 3}, zero, {1, 2, 1}},
      // Dilated width taps over a one- or two-column source: the taps that never reach
      // it are dropped, and the halos are narrower than the target's overhang (the
      // differential harness found the target's last columns wrapped to the next line).
      {64, {9, 3, 1}, {5, 2, 5}, one, {5, 3, 2}, {2, 2, 0}, {3, 3, 3}},
      {57, {3, 3, 1}, {2, 1, 3}, one, {1, 0, 1}, zero, {3, 1, 3}},
      {58, {10, 2, 1}, {4, 5, 3}, one, {1, 2, 1}, zero, {3, 1, 2}},
      {61, {6, 11, 2}, {4, 3, 4}, one, {5, 1, 2}, {1, 1, 0}, {3, 3, 3}},
  };
  for (const Shape& s : shapes) {
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    const ct3d::cuda::ShiftedWindowPlan plan = ct3d::cuda::plan_shifted_window(p);
    INFO("width " << s.spatial[2] << " kernel " << s.kernel[2] << " cout " << s.cout);
    REQUIRE(plan.columns > 0);
    CHECK(plan.slots >= 3);
    CHECK(plan.column_blocks * plan.block_columns >= plan.plane_columns);
    CHECK(plan.window_pitch >= plan.window_rows);
    const ct3d::cuda::ResidueParams* r[3] = {&p.dim[0].residue[0], &p.dim[1].residue[0],
                                             &p.dim[2].residue[0]};
    // Where a staged row of the compact grid holds input data: its input position.
    const auto decode = [&](int64_t row, int (&at)[3]) {
      const int64_t plane = row / plan.plane_pitch, rest = row % plan.plane_pitch;
      at[0] = static_cast<int>(plane) - p.halo_low[0];
      at[1] = static_cast<int>(rest / plan.line_pitch) - p.halo_low[1];
      at[2] = static_cast<int>(rest % plan.line_pitch) - p.halo_low[2];
      bool inside = plane < plan.depth_planes;
      for (int i = 0; i < 3; ++i) inside = inside && at[i] >= 0 && at[i] < p.source_extent[i];
      return inside;
    };
    int64_t low = INT64_MAX, high = INT64_MIN, wrong = 0, reads = 0;
    for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
      for (int block = 0; block < plan.column_blocks; ++block) {
        const int64_t first = plan.origin + qd * plan.plane_pitch +
                              int64_t{block} * plan.block_columns + plan.min_width_shift;
        for (int td = 0; td < r[0]->taps; ++td) {
          for (int th = 0; th < r[1]->taps; ++th) {
            const int sd = r[0]->first_shift + td * r[0]->shift_step;
            const int sh = r[1]->first_shift + th * r[1]->shift_step;
            const int64_t window = first + sd * plan.plane_pitch + int64_t{sh} * plan.line_pitch;
            low = std::min(low, window);
            high = std::max(high, window + plan.window_rows);
            for (int c = 0; c < plan.block_columns; ++c) {
              const int column = block * plan.block_columns + c;
              const int qh = column / plan.line_pitch, qw = column % plan.line_pitch;
              if (qh >= p.dim[1].max_positions || qw >= p.dim[2].max_positions) continue;
              for (int tw = 0; tw < r[2]->taps; ++tw) {
                const int sw = r[2]->first_shift + tw * r[2]->shift_step;
                const int expected[3] = {qd + sd, qh + sh, qw + sw};
                bool inside = true;
                for (int i = 0; i < 3; ++i) {
                  inside = inside && expected[i] >= 0 && expected[i] < p.source_extent[i];
                }
                int at[3];
                const bool data = decode(window + c + sw - plan.min_width_shift, at);
                wrong += inside ? !(data && at[0] == expected[0] && at[1] == expected[1] &&
                                    at[2] == expected[2])
                                : data;
                ++reads;
              }
            }
          }
        }
      }
    }
    // Every target position is a column of the plane: a line holds the target's width.
    CHECK(plan.line_pitch >= p.dim[2].max_positions);
    CHECK(plan.column_blocks * plan.block_columns >=
          (p.dim[1].max_positions - 1) * plan.line_pitch + p.dim[2].max_positions);
    CHECK(reads > 0);
    CHECK(wrong == 0);
    CHECK(low >= 0);
    CHECK(high <= plan.plane_rows);
  }
}

TEST_CASE("the tap-rows plan applies to stride 1 with at most 128 (width tap, channel) rows") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0}, two{2, 2, 2};
  const auto plan = [](const Shape& s) { return ct3d::cuda::plan_tap_rows(forward_problem(s)); };
  const ct3d::cuda::TapRowsPlan l1_58 = plan({16, {4, 6, 64}, {3, 5, 7}, one, zero, zero, one});
  CHECK(l1_58.window.columns > 0);
  CHECK(l1_58.halves == 2);
  CHECK(l1_58.rows_used == 112);
  const ct3d::cuda::TapRowsPlan five = plan({5, {4, 6, 30}, {3, 3, 3}, one, one, zero, one});
  CHECK(five.window.columns > 0);
  CHECK(five.halves == 1);
  CHECK(five.channel_pitch == 8);
  CHECK(plan({48, {4, 6, 30}, {3, 3, 3}, one, zero, zero, one}).window.columns == 0);
  CHECK(plan({16, {4, 6, 30}, {3, 3, 1}, one, zero, zero, one}).window.columns == 0);
  CHECK(plan({16, {4, 6, 30}, {3, 3, 3}, two, one, zero, one}).window.columns == 0);
}

TEST_CASE("the tap-columns plan applies to 48 to 160 rows, with the tap-rows windows") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const auto plan = [](const Shape& s) {
    return ct3d::cuda::plan_tap_rows(forward_problem(s), false, true);
  };
  const ct3d::cuda::TapRowsPlan l1_70 = plan({24, {6, 7, 96}, {3, 3, 3}, one, zero, zero, one});
  REQUIRE(l1_70.window.columns > 0);
  CHECK(l1_70.positions_on_m);
  CHECK(l1_70.halves == 1);
  CHECK(l1_70.rows_used == 72);
  CHECK(l1_70.window.window_rows == 256);
  CHECK(l1_70.window.column_step == 254);
  CHECK(l1_70.epilogue_pitch % 32 == 4);
  CHECK(l1_70.window.slots >= 3);
  CHECK(l1_70.shared_bytes <= 224 * 1024);
  CHECK(int64_t{l1_70.window.column_blocks} * l1_70.window.column_step >=
        l1_70.window.plane_columns);
  // 21 channels pad to 24 rows per tap; 3 x 16, 5 x 16, 3 x 32 and 3 x 48 rows apply
  // too (144: one m-tile per warpgroup, a block of 128 positions); 3 x 8 and 5 x 24 do not.
  CHECK(plan({21, {6, 7, 40}, {3, 3, 3}, one, zero, zero, one}).window.columns > 0);
  CHECK(plan({16, {6, 7, 40}, {3, 3, 3}, one, zero, zero, one}).rows_used == 48);
  CHECK(plan({16, {6, 7, 40}, {3, 3, 5}, one, zero, zero, one}).rows_used == 80);
  CHECK(plan({32, {6, 7, 40}, {3, 3, 3}, one, zero, zero, one}).window.columns > 0);
  CHECK(plan({8, {6, 7, 40}, {3, 3, 3}, one, zero, zero, one}).window.columns == 0);
  const ct3d::cuda::TapRowsPlan l1_61 = plan({48, {6, 7, 64}, {3, 3, 3}, one, zero, zero, one});
  REQUIRE(l1_61.window.columns > 0);
  CHECK(l1_61.rows_used == 144);
  CHECK(l1_61.window.window_rows == 128);
  CHECK(l1_61.window.slots >= 3);
  CHECK(l1_61.shared_bytes <= 224 * 1024);
  CHECK(plan({24, {6, 7, 40}, {3, 3, 5}, one, zero, zero, one}).window.columns == 0);
  CHECK(ct3d::cuda::plan_tap_rows(
            forward_problem({24, {6, 7, 40}, {3, 3, 3}, one, zero, zero, one}), true, true)
            .window.columns == 0);
}

TEST_CASE("the tap-columns plan on unsplit quad planes lands half the window bytes") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const ct3d::cuda::PhaseProblem p =
      forward_problem({24, {6, 7, 96}, {3, 3, 3}, one, zero, zero, one});
  const ct3d::cuda::TapRowsPlan raw = ct3d::cuda::plan_tap_rows(p, false, true);
  REQUIRE(raw.window.columns > 0);
  // A k-step: 2 planes of 256 positions x 16 bytes (the tap-rows form's split planes take
  // 4) and 72 rows of weights, hi and lo.
  CHECK(raw.window.stage_bytes == 2 * 256 * 16 + 2 * 72 * 32);
  // It applies to 4 x 16 and 7 x 16 rows too (as L1-58), and from 96 rows on with one
  // m-tile per warpgroup: a block of 128 positions.
  const auto raw_plan = [](const Shape& s) {
    return ct3d::cuda::plan_tap_rows(forward_problem(s), false, true);
  };
  CHECK(raw_plan({16, {6, 7, 40}, {3, 3, 4}, one, zero, zero, one}).rows_used == 64);
  CHECK(raw_plan({16, {6, 7, 40}, {3, 3, 4}, one, zero, zero, one}).window.window_rows == 256);
  const ct3d::cuda::TapRowsPlan seven = raw_plan({16, {6, 7, 64}, {3, 5, 7}, one, zero, zero, one});
  REQUIRE(seven.window.columns > 0);
  CHECK(seven.rows_used == 112);
  CHECK(seven.window.window_rows == 128);
  CHECK(raw_plan({32, {6, 7, 40}, {3, 3, 3}, one, zero, zero, one}).window.window_rows == 128);
  const ct3d::cuda::TapRowsPlan five_by_32 =
      raw_plan({32, {6, 7, 64}, {3, 3, 5}, one, zero, zero, one});  // as L1-68's input gradient
  REQUIRE(five_by_32.window.columns > 0);
  CHECK(five_by_32.rows_used == 160);
  CHECK(five_by_32.window.slots >= 3);
  CHECK(five_by_32.shared_bytes <= 224 * 1024);
  CHECK(raw_plan({40, {6, 7, 64}, {3, 3, 5}, one, zero, zero, one}).window.columns == 0);
}

TEST_CASE("every tap-rows block's windows stay inside the planes and cover the plane") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const Shape shapes[] = {
      {16, {6, 7, 64}, {3, 5, 7}, one, zero, zero, one},
      {5, {3, 4, 50}, {2, 3, 7}, one, {0, 1, 2}, zero, one},
      {12, {3, 5, 20}, {3, 3, 3}, one, {2, 1, 3}, {1, 0, 1}, {2, 1, 2}},
      {8, {2, 3, 40}, {1, 1, 16}, one, zero, zero, one},
      {16, {1, 1, 1}, {2, 2, 2}, one, zero, zero, one},
  };
  for (const Shape& s : shapes) {
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    const ct3d::cuda::TapRowsPlan plan = ct3d::cuda::plan_tap_rows(p);
    const ct3d::cuda::ShiftedWindowPlan& w = plan.window;
    INFO("width " << s.spatial[2] << " kernel " << s.kernel[2] << " cout " << s.cout);
    REQUIRE(w.columns > 0);
    CHECK(w.slots >= 3);
    CHECK(plan.shared_bytes <= 224 * 1024);
    CHECK(plan.rows_used <= 64 * plan.halves);
    CHECK(int64_t{w.column_blocks} * w.column_step >= w.plane_columns);
    // An output column j of a block reads window rows j + shift(tw) - min shift.
    const ct3d::cuda::ResidueParams& rw = p.dim[2].residue[0];
    const int span = (rw.taps - 1) * std::abs(rw.shift_step);
    CHECK(w.column_step + span == w.window_rows);
    const ct3d::cuda::ResidueParams& rd = p.dim[0].residue[0];
    const ct3d::cuda::ResidueParams& rh = p.dim[1].residue[0];
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (int qd = 0; qd < p.dim[0].max_positions; ++qd) {
      for (int block = 0; block < w.column_blocks; ++block) {
        for (int td = 0; td < rd.taps; ++td) {
          for (int th = 0; th < rh.taps; ++th) {
            const int64_t window = w.origin + qd * w.plane_pitch + int64_t{block} * w.column_step +
                                   w.min_width_shift +
                                   (rd.first_shift + td * rd.shift_step) * w.plane_pitch +
                                   int64_t{rh.first_shift + th * rh.shift_step} * w.line_pitch;
            low = std::min(low, window);
            high = std::max(high, window + w.window_rows);
          }
        }
      }
    }
    CHECK(low >= 0);
    CHECK(high <= w.plane_rows);
  }
}

TEST_CASE("the float16 / bfloat16 plans read the float32 plans' windows, in stages no larger") {
  // Same windows: the checks above hold for them too. Their k-steps take 16 channels in
  // 2 planes (float32: 8 in 4), so a stage holds fewer or equal bytes.
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const Shape shapes[] = {
      {64, {6, 7, 12}, {3, 5, 5}, one, zero, zero, one},
      {48, {4, 6, 30}, {3, 3, 3}, one, one, zero, one},
      {16, {6, 7, 64}, {3, 5, 7}, one, zero, zero, one},
      {24, {4, 7, 33}, {3, 3, 3}, one, one, zero, one},
      {8, {2, 3, 40}, {1, 1, 16}, one, zero, zero, one},
  };
  const auto same_windows = [](const ct3d::cuda::ShiftedWindowPlan& a,
                               const ct3d::cuda::ShiftedWindowPlan& b) {
    CHECK(a.columns == b.columns);
    CHECK(a.column_step == b.column_step);
    CHECK(a.window_rows == b.window_rows);
    CHECK(a.plane_rows == b.plane_rows);
    CHECK(a.stage_bytes <= b.stage_bytes);
    CHECK(a.slots >= b.slots);
  };
  for (const Shape& s : shapes) {
    INFO("width " << s.spatial[2] << " kernel " << s.kernel[2] << " cout " << s.cout);
    const ct3d::cuda::PhaseProblem p = forward_problem(s);
    const ct3d::cuda::ShiftedWindowPlan window = ct3d::cuda::plan_shifted_window(p);
    if (window.columns > 0) same_windows(ct3d::cuda::plan_shifted_window(p, true), window);
    const ct3d::cuda::TapRowsPlan rows = ct3d::cuda::plan_tap_rows(p);
    if (rows.window.columns > 0) {
      const ct3d::cuda::TapRowsPlan half = ct3d::cuda::plan_tap_rows(p, true);
      same_windows(half.window, rows.window);
      CHECK(half.shared_bytes <= 224 * 1024);
    }
    CHECK((window.columns > 0 || rows.window.columns > 0));
  }
}

TEST_CASE("the shifted-window GEMM pays with 5 width taps, or 3 and 49 to 64 channels") {
  const std::vector<int64_t> one{1, 1, 1}, zero{0, 0, 0};
  const auto pays = [&](int64_t cout, int64_t kernel_w, bool input_gradient) {
    return ct3d::cuda::shifted_window_pays(
        forward_problem({cout, {4, 6, 30}, {3, kernel_w, kernel_w}, one, zero, zero, one}),
        input_gradient);
  };
  CHECK(pays(64, 5, false));
  CHECK(pays(49, 3, false));
  CHECK(pays(64, 3, false));
  // 3 taps: 40 or fewer channels go to the tap-rows form, 41-48 to its tap-columns form
  // (144 rows), 96 or more to the plain wgmma mainloop; no input gradient.
  CHECK_FALSE(pays(48, 3, false));
  CHECK_FALSE(pays(41, 3, false));
  CHECK_FALSE(pays(40, 3, false));
  CHECK_FALSE(pays(32, 3, false));
  CHECK_FALSE(pays(128, 3, false));
  CHECK_FALSE(pays(64, 5, true));
}
