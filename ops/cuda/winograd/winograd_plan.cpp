#include "ops/cuda/winograd/winograd_plan.h"

#include <vector>

namespace ct3d::cuda {
namespace {

// The finite points, in the order they are taken: small magnitudes first, so that the
// transforms' entries (powers of the points) stay small.
constexpr double kPoints[kMaxWinogradPoints - 1] = {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5};

// Coefficients (lowest power first) of the product of (x - a) over the first `count`
// points but `skip` (skip = count: none skipped).
std::vector<double> root_polynomial(int count, int skip) {
  std::vector<double> coefficients{1.0};
  for (int l = 0; l < count; ++l) {
    if (l == skip) continue;
    std::vector<double> next(coefficients.size() + 1, 0.0);
    for (size_t i = 0; i < coefficients.size(); ++i) {
      next[i + 1] += coefficients[i];
      next[i] -= kPoints[l] * coefficients[i];
    }
    coefficients = next;
  }
  return coefficients;
}

double power(double base, int exponent) {
  double result = 1.0;
  for (int i = 0; i < exponent; ++i) result *= base;
  return result;
}

}  // namespace

WinogradDim winograd_dim(int tile, int kernel) {
  WinogradDim d;
  d.tile = tile;
  d.kernel = kernel;
  d.points = tile + kernel - 1;
  const int n = d.points;
  const int finite = n - 1;
  // Toom-Cook for the linear convolution of the kernel (r coefficients) with a tile (m):
  // evaluate both at the points (and their leading coefficients at infinity), multiply,
  // interpolate. The correlation is its transpose: BT is the interpolation's transpose
  // and AT the tile's evaluation's. Lagrange's 1 / prod(a_k - a_l) goes into G.
  for (int k = 0; k < finite; ++k) {
    double scale = 1.0;
    for (int l = 0; l < finite; ++l) {
      if (l != k) scale *= kPoints[k] - kPoints[l];
    }
    for (int j = 0; j < kernel; ++j) d.filter_transform[k][j] = power(kPoints[k], j) / scale;
    for (int i = 0; i < tile; ++i) d.output_transform[i][k] = power(kPoints[k], i);
    const std::vector<double> basis = root_polynomial(finite, k);
    for (size_t i = 0; i < basis.size(); ++i) d.input_transform[k][i] = basis[i];
  }
  d.filter_transform[finite][kernel - 1] = 1.0;
  d.output_transform[tile - 1][finite] = 1.0;
  const std::vector<double> all = root_polynomial(finite, finite);
  for (size_t i = 0; i < all.size(); ++i) d.input_transform[finite][i] = all[i];
  return d;
}

int default_winograd_tile(int64_t kernel) {
  switch (kernel) {
    case 2:
    case 4:
      return 3;
    case 3:
    case 5:
      return 4;
    case 6:
      return 3;
    case 7:
      return 2;
    default:
      return 1;
  }
}

std::optional<WinogradPlan> plan_winograd(const ConvGeometry& geometry, int tile_h, int tile_w) {
  WinogradPlan plan;
  plan.reduced = geometry;
  const int tiles[2] = {tile_h, tile_w};
  for (int i = 0; i < 2; ++i) {
    if (tiles[i] <= 1) continue;
    const DimGeometry& g = geometry.dim[1 + i];
    if (g.stride != 1 || g.dilation != 1 || g.kernel < 2 ||
        !winograd_points_supported(tiles[i] + g.kernel - 1)) {
      return std::nullopt;
    }
    WinogradDim& d = plan.dim[i];
    d = winograd_dim(tiles[i], static_cast<int>(g.kernel));
    d.tiles = (g.output + tiles[i] - 1) / tiles[i];
    d.input_offset = g.kernel - 1 - g.padding;
    plan.reduced.dim[1 + i] = DimGeometry{d.tiles, d.tiles, 1, 1, 0, 1};
  }
  if (plan.points() == 1) return std::nullopt;
  plan.reduced.groups = geometry.groups * plan.points();
  plan.reduced.in_channels = geometry.in_channels * plan.points();
  plan.reduced.out_channels = geometry.out_channels * plan.points();
  return plan;
}

}  // namespace ct3d::cuda
