// The three transforms of the Winograd forward (winograd_plan.h): the weights (G, in
// double), the input (BT) and the output (AT, plus the bias). Each input and output
// tile is one thread's n_h x n_w values in registers; the point counts are template
// parameters so that those arrays are indexed by constants only. Any non-finite
// transformed value sets *nonfinite: the transforms mix values that the convolution
// keeps apart (an Inf times a zero coefficient, or Inf - Inf, would reach outputs the
// exact result keeps finite), so such calls are recomputed by the direct kernel.
#pragma once

#include <cstdint>

#include "ops/cuda/winograd/winograd_plan.h"
#include "ops/cuda/winograd/winograd_tile_math.h"

namespace ct3d::cuda {

struct WinogradWeightArgs {
  double filter[2][kMaxWinogradPoints][kMaxWinogradPoints];  // G of height, width
  int kernel[3];          // the layer's kernel (depth, height, width)
  int reduced_kernel[3];  // the engine's: 1 in a transformed dimension
  int in_channels_per_group, out_channels_per_group;
  int windows;  // in_channels x cout_g x reduced taps: one thread each
};

struct WinogradInputArgs {
  float transform[2][kMaxWinogradPoints][kMaxWinogradPoints];  // BT of height, width
  int tile[2];                                                 // m_h, m_w
  int input_offset[2];                                         // q_h, q_w
  int tiles[2];              // the transformed extents (height, width)
  int depth, height, width;  // the input's
  int plane_positions;       // depth x tiles x tiles: one (sample, channel) plane of the output
  int64_t in_channels_per_group, channels;  // per group, in all groups
};

struct WinogradOutputArgs {
  float transform[2][kMaxWinogradPoints][kMaxWinogradPoints];  // AT of height, width
  int tile[2];
  int tiles[2];
  int depth, height, width;  // the output's
  int plane_positions;       // depth x tiles x tiles of the engine's output
  int64_t out_channels_per_group, channels;
  int64_t stride[5];  // the output's, in elements (sample, channel, depth, height, width)
  int vector_width;   // 4 or 2: a tile's rows are 16- or 8-byte aligned and dense; else 1
};

__device__ __forceinline__ void flag_nonfinite(float value, int* nonfinite) {
  if (!isfinite(value)) *nonfinite = 1;
}

// A tile's place in its (sample, channel) plane: depth, then tiles along height and width.
struct TilePosition {
  int d, th, tw;
};

__device__ __forceinline__ TilePosition tile_position(int position, const int (&tiles)[2]) {
  return {position / tiles[1] / tiles[0], position / tiles[1] % tiles[0], position % tiles[1]};
}

// One thread per kernel window (input channel, output channel, the engine's tap): the
// window flipped along each transformed dimension (the correlation's g[j] = w[r - 1 -
// j]), G along width then height, in double, each of its n_h n_w values to its (group,
// xi) block of the engine's weights, laid out [groups * points][cout_g][cin_g][reduced
// taps] (winograd_weight_layout): the engine's packing pass reads them along input
// channels, which this layout keeps close together.
template <int kPointsH, int kPointsW>
__global__ void winograd_weight_kernel(WinogradWeightArgs a, const float* __restrict__ weight,
                                       float* __restrict__ transformed, int* nonfinite) {
  const int window = blockIdx.x * blockDim.x + threadIdx.x;
  if (window >= a.windows) return;
  const int reduced_taps = a.reduced_kernel[0] * a.reduced_kernel[1] * a.reduced_kernel[2];
  const int tap = window % reduced_taps;
  const int c = window / reduced_taps % a.in_channels_per_group;
  const int o = window / reduced_taps / a.in_channels_per_group % a.out_channels_per_group;
  const int group = window / reduced_taps / a.in_channels_per_group / a.out_channels_per_group;
  const int channel = group * a.in_channels_per_group + c;
  const int kw = tap % a.reduced_kernel[2];
  const int kh = tap / a.reduced_kernel[2] % a.reduced_kernel[1];
  const int kd = tap / a.reduced_kernel[2] / a.reduced_kernel[1];
  const float* w = weight +
                   (int64_t{channel} * a.out_channels_per_group + o) *
                       (a.kernel[0] * a.kernel[1] * a.kernel[2]) +
                   kd * a.kernel[1] * a.kernel[2];
  // A transformed dimension's kernel has at most points - 1 taps (tiles of 2 or more).
  constexpr int kTapsH = kPointsH == 1 ? 1 : kPointsH - 1;
  constexpr int kTapsW = kPointsW == 1 ? 1 : kPointsW - 1;
  const int taps_h = kPointsH == 1 ? 1 : a.kernel[1];
  const int taps_w = kPointsW == 1 ? 1 : a.kernel[2];
  bool finite = true;
  double g[kTapsH][kTapsW];
#pragma unroll
  for (int jh = 0; jh < kTapsH; ++jh) {
    const int h = kPointsH == 1 ? kh : a.kernel[1] - 1 - jh;
#pragma unroll
    for (int jw = 0; jw < kTapsW; ++jw) {
      const int wi = kPointsW == 1 ? kw : a.kernel[2] - 1 - jw;
      float value = 0.f;
      if (jh < taps_h && jw < taps_w) value = __ldg(w + h * a.kernel[2] + wi);
      finite = finite && isfinite(value);
      g[jh][jw] = value;
    }
  }
  double rows[kTapsH][kPointsW];
  transform_rows(a.filter[1], g, rows);
  double values[kPointsH][kPointsW];
  transform_columns(a.filter[0], rows, values);
  constexpr int kPoints = kPointsH * kPointsW;
  const int64_t xi_stride =
      int64_t{a.in_channels_per_group} * a.out_channels_per_group * reduced_taps;
  float* out = transformed + group * kPoints * xi_stride +
               (int64_t{o} * a.in_channels_per_group + c) * reduced_taps + tap;
#pragma unroll
  for (int xh = 0; xh < kPointsH; ++xh) {
#pragma unroll
    for (int xw = 0; xw < kPointsW; ++xw) {
      const float value = static_cast<float>(values[xh][xw]);
      out[(xh * kPointsW + xw) * xi_stride] = value;
      finite = finite && isfinite(value);
    }
  }
  if (!finite) *nonfinite = 1;
}

// One input tile's n_h x n_w transformed values: its inputs (zero outside the input)
// times BT along width, then along height. `plane`: the tile's (sample, channel,
// depth) plane of the input.
template <int kPointsH, int kPointsW>
__device__ __forceinline__ void transform_input_tile(const WinogradInputArgs& a,
                                                     const float* __restrict__ plane, int th,
                                                     int tw, float (&values)[kPointsH][kPointsW]) {
  const int h0 = a.tile[0] * th - a.input_offset[0];
  const int w0 = a.tile[1] * tw - a.input_offset[1];
  float patch[kPointsH][kPointsW];
#pragma unroll
  for (int sh = 0; sh < kPointsH; ++sh) {
    const int h = h0 + sh;
    const bool inside_h = h >= 0 && h < a.height;
#pragma unroll
    for (int sw = 0; sw < kPointsW; ++sw) {
      const int w = w0 + sw;
      patch[sh][sw] =
          inside_h && w >= 0 && w < a.width ? __ldg(plane + int64_t{h} * a.width + w) : 0.f;
    }
  }
  float rows[kPointsH][kPointsW];
  transform_rows(a.transform[1], patch, rows);
  transform_columns(a.transform[0], rows, values);
}

// grid: (plane positions / block, channels, samples). One thread per input tile, each
// of its n_h n_w values to its (group, xi) channel plane of the engine's source
// (N, groups * points * cin_g, depth, tiles_h, tiles_w).
template <int kPointsH, int kPointsW>
__global__ void winograd_input_kernel(WinogradInputArgs a, const float* __restrict__ input,
                                      float* __restrict__ transformed, int* nonfinite) {
  const int position = blockIdx.x * blockDim.x + threadIdx.x;
  if (position >= a.plane_positions) return;
  const TilePosition at = tile_position(position, a.tiles);
  const int64_t channel = blockIdx.y, sample = blockIdx.z;
  float values[kPointsH][kPointsW];
  transform_input_tile<kPointsH, kPointsW>(
      a, input + ((sample * a.channels + channel) * a.depth + at.d) * int64_t{a.height} * a.width,
      at.th, at.tw, values);
  const int64_t group = channel / a.in_channels_per_group;
  const int64_t c = channel % a.in_channels_per_group;
  constexpr int kPoints = kPointsH * kPointsW;
  const int64_t xi_stride = a.in_channels_per_group * int64_t{a.plane_positions};
  float* out = transformed +
               ((sample * a.channels * kPoints + group * kPoints * a.in_channels_per_group + c) *
                int64_t{a.plane_positions}) +
               position;
#pragma unroll
  for (int xh = 0; xh < kPointsH; ++xh) {
#pragma unroll
    for (int xw = 0; xw < kPointsW; ++xw) {
      out[(xh * kPointsW + xw) * xi_stride] = values[xh][xw];
      flag_nonfinite(values[xh][xw], nonfinite);
    }
  }
}

// The input transform written straight into the engine's staged source
// (gather_staged_layout: [N][depth + halos][tiles_h][tiles_w][group, xi][cin padded]),
// so that the engine does not stage it again. The tiles read coalesced along
// positions, the staged rows are written along channels: a block transforms
// kStagedPositions positions x kStagedChannels channels of one group, parks the values
// in shared memory, then writes each (position, xi) as one 32-byte piece of a row.
// Padded channels are written as zeros; the depth halo planes are cleared by the host.
constexpr int kStagedPositions = 32;
constexpr int kStagedChannels = 8;
constexpr int kStagedPitch = kStagedChannels + 1;  // odd: the parking stores meet no conflict

struct WinogradStagedArgs {
  int64_t padded_channels_per_group;  // the engine's channel chunks, a multiple of 8
  int64_t row_floats;                 // a staged position: groups * points * padded channels
  int64_t sample_floats;              // a staged sample
  int64_t halo_rows;                  // staged rows before input depth 0: the low depth halo
  int channel_chunks;                 // padded channels per group / kStagedChannels
};

template <int kPointsH, int kPointsW>
size_t winograd_staged_shared_bytes() {
  return sizeof(float) * kPointsH * kPointsW * kStagedPositions * kStagedPitch;
}

// grid: (plane positions / kStagedPositions, groups x channel chunks, samples); block
// (kStagedPositions, kStagedChannels).
template <int kPointsH, int kPointsW>
__global__ void winograd_staged_input_kernel(WinogradInputArgs a, WinogradStagedArgs s,
                                             const float* __restrict__ input,
                                             float* __restrict__ staged, int* nonfinite) {
  constexpr int kPoints = kPointsH * kPointsW;
  extern __shared__ float parked[];  // [xi][position][channel], channel pitch kStagedPitch
  const int first = blockIdx.x * kStagedPositions;
  const int group = blockIdx.y / s.channel_chunks;
  const int c = blockIdx.y % s.channel_chunks * kStagedChannels + threadIdx.y;
  const int position = first + threadIdx.x;
  const int64_t sample = blockIdx.z;
  float values[kPointsH][kPointsW] = {};
  if (position < a.plane_positions && c < a.in_channels_per_group) {
    const TilePosition at = tile_position(position, a.tiles);
    const int64_t channel = int64_t{group} * a.in_channels_per_group + c;
    transform_input_tile<kPointsH, kPointsW>(
        a, input + ((sample * a.channels + channel) * a.depth + at.d) * int64_t{a.height} * a.width,
        at.th, at.tw, values);
  }
#pragma unroll
  for (int xh = 0; xh < kPointsH; ++xh) {
#pragma unroll
    for (int xw = 0; xw < kPointsW; ++xw) {
      parked[((xh * kPointsW + xw) * kStagedPositions + threadIdx.x) * kStagedPitch + threadIdx.y] =
          values[xh][xw];
      flag_nonfinite(values[xh][xw], nonfinite);
    }
  }
  __syncthreads();
  // Each pass writes kStagedPositions pieces of kStagedChannels floats: 8 lanes a piece.
  const int thread = threadIdx.y * kStagedPositions + threadIdx.x;
  const int lane_channel = thread % kStagedChannels;
  const int piece = thread / kStagedChannels;
  float* sample_rows = staged + sample * s.sample_floats;
  const int64_t channel_offset = int64_t{group} * kPoints * s.padded_channels_per_group +
                                 blockIdx.y % s.channel_chunks * kStagedChannels + lane_channel;
#pragma unroll 4
  for (int xi = 0; xi < kPoints; ++xi) {
    const int p = first + piece;
    if (p < a.plane_positions) {
      sample_rows[(s.halo_rows + p) * s.row_floats + channel_offset +
                  xi * s.padded_channels_per_group] =
          parked[(xi * kStagedPositions + piece) * kStagedPitch + lane_channel];
    }
  }
}

// grid: (plane positions / block, channels, samples). One thread per output tile: the
// n_h x n_w products of its (group, xi) planes, AT along width then height, plus the
// bias, stored where inside the output (through its strides).
template <int kPointsH, int kPointsW>
__global__ void winograd_output_kernel(WinogradOutputArgs a, const float* __restrict__ products,
                                       const float* __restrict__ bias, float* __restrict__ output,
                                       int* nonfinite) {
  const int position = blockIdx.x * blockDim.x + threadIdx.x;
  if (position >= a.plane_positions) return;
  const TilePosition at = tile_position(position, a.tiles);
  const int64_t channel = blockIdx.y, sample = blockIdx.z;
  const int64_t group = channel / a.out_channels_per_group;
  const int64_t o = channel % a.out_channels_per_group;
  constexpr int kPoints = kPointsH * kPointsW;
  const int64_t xi_stride = a.out_channels_per_group * int64_t{a.plane_positions};
  const float* in =
      products +
      ((sample * a.channels * kPoints + group * kPoints * a.out_channels_per_group + o) *
       int64_t{a.plane_positions}) +
      position;
  constexpr int kMaxTileW = kPointsW == 1 ? 1 : kPointsW - 1;
  float values[kPointsH][kPointsW];
#pragma unroll
  for (int xh = 0; xh < kPointsH; ++xh) {
#pragma unroll
    for (int xw = 0; xw < kPointsW; ++xw)
      values[xh][xw] = __ldg(in + (xh * kPointsW + xw) * xi_stride);
  }
  float columns[kPointsH][kMaxTileW];
  transform_rows(a.transform[1], values, columns);
  const float b = bias != nullptr ? bias[channel] : 0.f;
  const int w0 = a.tile[1] * at.tw;
  const bool whole_row = w0 + a.tile[1] <= a.width;
  constexpr int kMaxTileH = kPointsH == 1 ? 1 : kPointsH - 1;
#pragma unroll
  for (int ih = 0; ih < kMaxTileH; ++ih) {
    const int h = a.tile[0] * at.th + ih;
    if (ih >= a.tile[0] || h >= a.height) break;
    float row[kMaxTileW];
#pragma unroll
    for (int iw = 0; iw < kMaxTileW; ++iw) {
      float sum = 0.f;
#pragma unroll
      for (int xh = 0; xh < kPointsH; ++xh)
        sum = fmaf(a.transform[0][ih][xh], columns[xh][iw], sum);
      row[iw] = (kPointsH == 1 ? columns[0][iw] : sum) + b;
      if (iw < a.tile[1] && w0 + iw < a.width) flag_nonfinite(row[iw], nonfinite);
    }
    float* line = output + sample * a.stride[0] + channel * a.stride[1] + at.d * a.stride[2] +
                  h * a.stride[3] + w0 * a.stride[4];
    // 16- or 8-byte stores where the host found the rows aligned (vector_width).
    if (whole_row && a.vector_width == 4) {
#pragma unroll
      for (int iw = 0; iw + 3 < kMaxTileW; iw += 4) {
        if (iw < a.tile[1]) {
          *reinterpret_cast<float4*>(line + iw) =
              make_float4(row[iw], row[iw + 1], row[iw + 2], row[iw + 3]);
        }
      }
    } else if (whole_row && a.vector_width == 2) {
#pragma unroll
      for (int iw = 0; iw + 1 < kMaxTileW; iw += 2) {
        if (iw < a.tile[1])
          *reinterpret_cast<float2*>(line + iw) = make_float2(row[iw], row[iw + 1]);
      }
    } else {
#pragma unroll
      for (int iw = 0; iw < kMaxTileW; ++iw) {
        if (iw < a.tile[1] && w0 + iw < a.width) line[iw * a.stride[4]] = row[iw];
      }
    }
  }
}

}  // namespace ct3d::cuda
