// Winograd's minimal filtering (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016) along height and width, around the implicit-GEMM engine.
//
// Along a dimension with stride 1 and dilation 1, a transposed convolution with kernel
// r and padding p is a correlation of the input, read from q = r - 1 - p places
// earlier, with the flipped kernel g[j] = w[r - 1 - j]. F(m, r) computes m consecutive
// outputs of it from n = m + r - 1 inputs with n products instead of m r:
//   y[m t + i] = sum over xi of AT[i][xi] (G g)[xi] (BT d_t)[xi],
//   d_t[s] = x[m t - q + s], s < n.
// Over height and width together a tile of m_h x m_w outputs takes n_h n_w products per
// input channel and depth tap instead of m_h r_h m_w r_w (4x fewer for F(4,3) in both),
// and each pair (xi_h, xi_w) is an independent GEMM over (input channel, depth tap):
// one group of a transposed convolution with kernel (k_d, 1, 1) over the tiles, which
// the engine runs as it is, on the transformed input as its source and the transformed
// weights as its weights (`reduced`). The transforms of the input and the output are
// memory-bound passes (winograd_forward.h).
#pragma once

#include <cstdint>
#include <optional>

#include "ops/common/conv_geometry.h"

namespace ct3d::cuda {

// Points of one transformed dimension at most (n = m + r - 1): the kernels hold a
// tile's n_h x n_w values in registers.
constexpr int kMaxWinogradPoints = 8;

// One dimension of the plan: F(tile, kernel) with `points` points, or (all three 1)
// not transformed, the engine then running that dimension's taps itself.
struct WinogradDim {
  int tile = 1;              // m: outputs per tile
  int kernel = 1;            // r
  int points = 1;            // n = m + r - 1
  int64_t tiles = 1;         // tiles along the dimension (the reduced problem's extent)
  int64_t input_offset = 0;  // q = r - 1 - padding: tile t reads input m t - q + s
  // Toom-Cook matrices for the points 0, 1, -1, 2, -2, 1/2, -1/2 (the first n - 1)
  // and infinity. Every entry of BT and AT is a dyadic rational, exact in float32;
  // G's are not (1/6, 1/12, ...), so the weights are transformed in double.
  double input_transform[kMaxWinogradPoints][kMaxWinogradPoints] = {};   // BT: n x n
  double filter_transform[kMaxWinogradPoints][kMaxWinogradPoints] = {};  // G: n x r
  double output_transform[kMaxWinogradPoints][kMaxWinogradPoints] = {};  // AT: m x n

  bool transformed() const { return points > 1; }
};

struct WinogradPlan {
  WinogradDim dim[2];  // height, width
  // The engine's problem: groups x points() groups, each (xi_h, xi_w) pair of every
  // group one group (channel blocks ordered group-major: group g's pair xi is group
  // g * points() + xi_h * width points + xi_w); the transformed dimensions' extents are
  // their tiles, with kernel 1 and no padding.
  ConvGeometry reduced;

  int points() const { return dim[0].points * dim[1].points; }
};

// The point counts the transform kernels are built for (besides 1: not transformed).
inline bool winograd_points_supported(int64_t points) {
  return points == 4 || points == 6 || points == 8;
}

// F(tile, kernel)'s matrices for one dimension (tile >= 1, kernel >= 2, tile + kernel - 1
// <= kMaxWinogradPoints), with tiles and input_offset left at their defaults.
WinogradDim winograd_dim(int tile, int kernel);

// The outputs per tile a kernel of r taps gets unless asked otherwise: F(3, 2), F(4, 3),
// F(3, 4), F(4, 5), F(3, 6), F(2, 7); 1 (not transformed) for r = 1 or r > 7.
int default_winograd_tile(int64_t kernel);

// The plan for a forward with tile_h x tile_w outputs per tile (1: that dimension not
// transformed), or nullopt where it does not apply: a transformed dimension needs
// stride 1, dilation 1 and a supported point count (tile + kernel - 1), and at least one
// dimension must be transformed.
std::optional<WinogradPlan> plan_winograd(const ConvGeometry& geometry, int tile_h, int tile_w);

}  // namespace ct3d::cuda
