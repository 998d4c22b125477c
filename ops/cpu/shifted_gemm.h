// The CPU kernels' building block: a convolution as a sum of dense GEMMs over
// shifted windows of a zero-padded volume (ct3d's AVX-512 kernel or BLAS underneath).
//
// A padded volume holds each (sample, channel) as a D' x H' x W' box with the
// source inside it and zeros around, plus two spare zero planes. Flatten the box
// and a shift by (a, b, c) is an offset of a·H'W' + b·W' + c: the window a tap
// reads for a whole block of positions is one strided matrix (channels x
// positions, the channel stride as leading dimension), so each tap is one GEMM
// with no gather. Positions are numbered with the box's pitches; those past a
// row's or plane's real end are computed from the zeros (or the next row) and
// dropped, the spare planes keep the last windows inside the buffer.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace ct3d::cpu {

struct PaddedVolume {
  at::Tensor data;                  // (N, parts, C, D' + 2, H', W'), contiguous
  std::array<int64_t, 3> extent{};  // D', H', W'
  std::array<int64_t, 3> low{};     // source index 0 sits at low (per dimension)
  int64_t plane() const { return extent[1] * extent[2]; }
  int64_t channel_stride() const { return (extent[0] + 2) * plane(); }
  // Flat offset of box position (d, h, w) (already including `low`).
  int64_t offset(int64_t d, int64_t h, int64_t w) const { return d * plane() + h * extent[2] + w; }
};

// A padded volume of prod(stride) parts made from a contiguous (N, C, D, H, W)
// source: part (rd, rh, rw) holds, at box index low + m per dimension, source index
// r + stride * m wherever that is inside the source, and zeros everywhere else (with
// stride 1: one part, a plain zero-padded copy). One parallel pass writes every
// element: no separate zero fill (that, and a strided ATen copy, took half of a
// stride-2 input gradient's time).
PaddedVolume padded_copy(const at::Tensor& source, std::array<int64_t, 3> stride,
                         std::array<int64_t, 3> extent, std::array<int64_t, 3> low);

// tile (M x columns) = sum over taps t of weights[:, t K : (t + 1) K] @ W_t, where
// W_t is the K x columns window whose row r starts at window(t) + r * row_stride.
// With AVX-512, ct3d's kernel (gemm_avx512.h) reads every window where it lies, one
// run of its reduction a tap. Otherwise BLAS, the taps a few at a time: their windows
// copied (memcpy per row) into `column_buffer`, at most kTapChunkRows x columns, so
// that the reduction is long enough (one BLAS GEMM per tap, with K = 16 channels, ran
// 10x slower). Single-threaded inside the callers' parallel_for, in a fixed order, so
// the result does not depend on threads.
constexpr int64_t kTapChunkRows = 256;
// A task's accumulator tile: about this many bytes (it stays in L2 while every tap's
// GEMM adds into it).
constexpr int64_t kTileBytes = 256 * 1024;
template <typename scalar_t>
void multiply_taps(at::Tensor& tile, const at::Tensor& weights, int64_t taps, int64_t k,
                   const std::function<const scalar_t*(int64_t)>& window, int64_t row_stride,
                   std::vector<scalar_t>& column_buffer);

// The weight (C_in, C_out / groups, taps) as one row-major C_out/groups x
// C_in/groups matrix per (group, tap): (groups, taps, cout_g, cin_g), contiguous.
at::Tensor tap_major_weights(const at::Tensor& weight, int64_t groups);

// A sample's channels [channel0, ...) of part `part`, at flat box offset 0.
template <typename scalar_t>
const scalar_t* volume_data(const PaddedVolume& volume, int64_t n, int64_t part, int64_t channel0) {
  const int64_t parts = volume.data.size(1), channels = volume.data.size(2);
  return volume.data.const_data_ptr<scalar_t>() +
         ((n * parts + part) * channels + channel0) * volume.channel_stride();
}

}  // namespace ct3d::cpu
