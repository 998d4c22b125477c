// Winograd's F(m, r) matrices must compute the correlation exactly (to rounding), and
// the plan must hand the engine the right reduced problem.
#include <cmath>
#include <random>

#include "catch.h"
#include "ops/cuda/winograd/winograd_plan.h"
#include "ops/cuda/winograd/winograd_tile_math.h"

using ct3d::ConvGeometry;
using ct3d::DimGeometry;
using ct3d::cuda::plan_winograd;
using ct3d::cuda::winograd_dim;
using ct3d::cuda::WinogradDim;

TEST_CASE("F(m, r) gives the correlation of a tile with the kernel") {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (int kernel = 2; kernel <= 7; ++kernel) {
    for (int tile = 2; tile + kernel - 1 <= ct3d::cuda::kMaxWinogradPoints; ++tile) {
      const WinogradDim f = winograd_dim(tile, kernel);
      REQUIRE(f.points == tile + kernel - 1);
      for (int trial = 0; trial < 20; ++trial) {
        double d[8], g[8], transformed[8];
        for (int s = 0; s < f.points; ++s) d[s] = normal(rng);
        for (int j = 0; j < kernel; ++j) g[j] = normal(rng);
        for (int xi = 0; xi < f.points; ++xi) {
          double gt = 0.0, dt = 0.0;
          for (int j = 0; j < kernel; ++j) gt += f.filter_transform[xi][j] * g[j];
          for (int s = 0; s < f.points; ++s) dt += f.input_transform[xi][s] * d[s];
          transformed[xi] = gt * dt;
        }
        for (int i = 0; i < tile; ++i) {
          double y = 0.0, expected = 0.0;
          for (int xi = 0; xi < f.points; ++xi) y += f.output_transform[i][xi] * transformed[xi];
          for (int j = 0; j < kernel; ++j) expected += g[j] * d[i + j];
          CHECK(std::abs(y - expected) <= 1e-11 * (1.0 + std::abs(expected)));
        }
      }
    }
  }
}

TEST_CASE("the input and output transforms of the points used are exact in float32") {
  for (int kernel = 2; kernel <= 7; ++kernel) {
    for (int tile = 2; tile + kernel - 1 <= ct3d::cuda::kMaxWinogradPoints; ++tile) {
      const WinogradDim f = winograd_dim(tile, kernel);
      for (int a = 0; a < f.points; ++a) {
        for (int b = 0; b < f.points; ++b) {
          CHECK(static_cast<double>(static_cast<float>(f.input_transform[a][b])) ==
                f.input_transform[a][b]);
          CHECK(static_cast<double>(static_cast<float>(f.output_transform[a][b])) ==
                f.output_transform[a][b]);
        }
      }
    }
  }
}

namespace {

ConvGeometry layer(int64_t kernel_h, int64_t kernel_w, int64_t padding) {
  ConvGeometry g;
  g.batch = 2;
  g.in_channels = 64;
  g.out_channels = 96;
  g.groups = 2;
  g.dim[0] = DimGeometry{5, 7, 3, 1, 0, 1};
  const int64_t input = 13;
  g.dim[1] = DimGeometry{input, input + kernel_h - 1 - 2 * padding, kernel_h, 1, padding, 1};
  g.dim[2] = DimGeometry{input, input + kernel_w - 1 - 2 * padding, kernel_w, 1, padding, 1};
  return g;
}

}  // namespace

TEST_CASE("the plan's reduced problem: one group per (group, xi), tiles as extents") {
  const ConvGeometry g = layer(3, 3, 1);
  const auto plan = plan_winograd(g, 4, 4);
  REQUIRE(plan.has_value());
  CHECK(plan->points() == 36);
  CHECK(plan->reduced.groups == 2 * 36);
  CHECK(plan->reduced.in_channels == 64 * 36);
  CHECK(plan->reduced.out_channels == 96 * 36);
  CHECK(plan->reduced.dim[0].kernel == 3);
  for (int i = 1; i < 3; ++i) {
    CHECK(plan->dim[i - 1].tiles == 4);  // 13 outputs in tiles of 4
    CHECK(plan->dim[i - 1].input_offset == 1);
    CHECK(plan->reduced.dim[i].input == 4);
    CHECK(plan->reduced.dim[i].output == 4);
    CHECK(plan->reduced.dim[i].kernel == 1);
    CHECK(plan->reduced.dim[i].padding == 0);
  }
}

TEST_CASE("one dimension transformed: the other keeps its taps in the engine") {
  const ConvGeometry g = layer(5, 3, 2);
  const auto plan = plan_winograd(g, 1, 6);
  REQUIRE(plan.has_value());
  CHECK(plan->points() == 8);
  CHECK(!plan->dim[0].transformed());
  CHECK(plan->reduced.dim[1].kernel == 5);
  CHECK(plan->reduced.dim[1].padding == 2);
  CHECK(plan->reduced.dim[2].kernel == 1);
  CHECK(plan->dim[1].input_offset == 0);
}

TEST_CASE("the plan refuses what Winograd's F(m, r) does not cover") {
  ConvGeometry strided = layer(3, 3, 1);
  strided.dim[2].stride = 2;
  CHECK(!plan_winograd(strided, 4, 4).has_value());
  ConvGeometry dilated = layer(3, 3, 1);
  dilated.dim[1].dilation = 2;
  CHECK(!plan_winograd(dilated, 4, 4).has_value());
  CHECK(!plan_winograd(layer(3, 3, 1), 1, 1).has_value());
  CHECK(!plan_winograd(layer(3, 3, 1), 3, 3).has_value());  // 5 points: not built
  CHECK(!plan_winograd(layer(3, 3, 1), 7, 7).has_value());  // 9 points
  CHECK(!plan_winograd(layer(1, 3, 0), 4, 4).has_value());  // a 1-tap height
}

namespace {

// One output tile of a 2-D correlation through the kernels' tile transforms
// (winograd_tile_math.h): weights G g G^T, input BT d B, their product, AT (.) A.
template <int kPointsH, int kPointsW>
void check_tile(int tile_h, int kernel_h, int tile_w, int kernel_w, std::mt19937& rng) {
  using ct3d::cuda::transform_columns;
  using ct3d::cuda::transform_rows;
  const WinogradDim fh = kPointsH == 1 ? WinogradDim{} : winograd_dim(tile_h, kernel_h);
  const WinogradDim fw = kPointsW == 1 ? WinogradDim{} : winograd_dim(tile_w, kernel_w);
  REQUIRE(fh.points == kPointsH);
  REQUIRE(fw.points == kPointsW);
  std::normal_distribution<double> normal;
  constexpr int kTapsH = kPointsH == 1 ? 1 : kPointsH - 1;
  constexpr int kTapsW = kPointsW == 1 ? 1 : kPointsW - 1;
  constexpr int kTileH = kTapsH, kTileW = kTapsW;  // at most points - 1 outputs
  double g[kTapsH][kTapsW] = {}, d[kPointsH][kPointsW];
  for (int j = 0; j < kernel_h; ++j) {
    for (int i = 0; i < kernel_w; ++i) g[j][i] = normal(rng);
  }
  for (auto& row : d) {
    for (double& value : row) value = normal(rng);
  }
  double u_rows[kTapsH][kPointsW], u[kPointsH][kPointsW];
  transform_rows(fw.filter_transform, g, u_rows);
  transform_columns(fh.filter_transform, u_rows, u);
  double v_rows[kPointsH][kPointsW], v[kPointsH][kPointsW];
  transform_rows(fw.input_transform, d, v_rows);
  transform_columns(fh.input_transform, v_rows, v);
  double product[kPointsH][kPointsW];
  for (int a = 0; a < kPointsH; ++a) {
    for (int b = 0; b < kPointsW; ++b) product[a][b] = u[a][b] * v[a][b];
  }
  double y_rows[kPointsH][kTileW], y[kTileH][kTileW];
  transform_rows(fw.output_transform, product, y_rows);
  transform_columns(fh.output_transform, y_rows, y);
  for (int oh = 0; oh < fh.tile; ++oh) {
    for (int ow = 0; ow < fw.tile; ++ow) {
      double expected = 0.0;
      for (int j = 0; j < kernel_h; ++j) {
        for (int i = 0; i < kernel_w; ++i) expected += g[j][i] * d[oh + j][ow + i];
      }
      CHECK(std::abs(y[oh][ow] - expected) <= 1e-10 * (1.0 + std::abs(expected)));
    }
  }
}

}  // namespace

TEST_CASE("a tile through the kernels' transforms gives the 2-D correlation") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    check_tile<6, 6>(4, 3, 4, 3, rng);
    check_tile<8, 8>(4, 5, 4, 5, rng);
    check_tile<8, 6>(2, 7, 3, 4, rng);
    check_tile<4, 8>(3, 2, 6, 3, rng);
    check_tile<8, 1>(4, 5, 1, 1, rng);  // height alone: the width copied
    check_tile<1, 6>(1, 1, 4, 3, rng);
  }
}
