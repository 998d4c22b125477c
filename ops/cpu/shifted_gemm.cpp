#include "ops/cpu/shifted_gemm.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ops/cpu/gemm_avx512.h"

namespace ct3d::cpu {

namespace {

template <typename scalar_t>
void fill_parts(PaddedVolume& v, const at::Tensor& source, std::array<int64_t, 3> stride) {
  const int64_t batch = source.size(0), channels = source.size(1);
  const std::array<int64_t, 3> size = {source.size(2), source.size(3), source.size(4)};
  const int64_t parts = stride[0] * stride[1] * stride[2];
  const int64_t depth = v.extent[0] + 2, height = v.extent[1], width = v.extent[2];
  const scalar_t* in_data = source.const_data_ptr<scalar_t>();
  scalar_t* out_data = v.data.mutable_data_ptr<scalar_t>();
  // One task per source channel, writing all of its parts: the channel is read from
  // cache by every part after the first.
  at::parallel_for(0, batch * channels, 1, [&](int64_t first, int64_t last) {
    for (int64_t task = first; task < last; ++task) {
      for (int64_t part = 0; part < parts; ++part) {
        const int64_t c = task % channels, n = task / channels;
        const int64_t index = (n * parts + part) * channels + c;
        const std::array<int64_t, 3> residue = {part / (stride[1] * stride[2]),
                                                (part / stride[2]) % stride[1], part % stride[2]};
        const scalar_t* in = in_data + (n * channels + c) * size[0] * size[1] * size[2];
        scalar_t* out = out_data + index * depth * height * width;
        // Box columns [w_begin, w_end) hold source columns residue + stride * m.
        const int64_t w_count =
            std::max<int64_t>(0, (size[2] - residue[2] + stride[2] - 1) / stride[2]);
        const int64_t w_begin = std::min(v.low[2], width);
        const int64_t w_end = std::min(width, v.low[2] + w_count);
        for (int64_t d = 0; d < depth; ++d) {
          const int64_t sd = residue[0] + stride[0] * (d - v.low[0]);
          for (int64_t h = 0; h < height; ++h) {
            scalar_t* row = out + (d * height + h) * width;
            const int64_t sh = residue[1] + stride[1] * (h - v.low[1]);
            if (d < v.low[0] || sd >= size[0] || h < v.low[1] || sh >= size[1] ||
                w_end <= w_begin) {
              std::fill_n(row, width, scalar_t(0));
              continue;
            }
            const scalar_t* source_row = in + (sd * size[1] + sh) * size[2] + residue[2];
            std::fill_n(row, w_begin, scalar_t(0));
            if (stride[2] == 1) {
              std::memcpy(row + w_begin, source_row, sizeof(scalar_t) * (w_end - w_begin));
            } else {
              for (int64_t w = w_begin; w < w_end; ++w)
                row[w] = source_row[stride[2] * (w - w_begin)];
            }
            std::fill_n(row + w_end, width - w_end, scalar_t(0));
          }
        }
      }
    }
  });
}

}  // namespace

PaddedVolume padded_copy(const at::Tensor& source, std::array<int64_t, 3> stride,
                         std::array<int64_t, 3> extent, std::array<int64_t, 3> low) {
  PaddedVolume volume;
  volume.extent = extent;
  volume.low = low;
  const int64_t parts = stride[0] * stride[1] * stride[2];
  volume.data =
      at::empty({source.size(0), parts, source.size(1), extent[0] + 2, extent[1], extent[2]},
                source.options());
  const at::Tensor contiguous = source.contiguous();
  AT_DISPATCH_FLOATING_TYPES(source.scalar_type(), "ct3d_padded_copy",
                             [&] { fill_parts<scalar_t>(volume, contiguous, stride); });
  return volume;
}

at::Tensor tap_major_weights(const at::Tensor& weight, int64_t groups) {
  const int64_t cin_g = weight.size(0) / groups, cout_g = weight.size(1);
  return weight.reshape({groups, cin_g, cout_g, -1}).permute({0, 3, 2, 1}).contiguous();
}

template <typename scalar_t>
void multiply_taps(at::Tensor& tile, const at::Tensor& weights, int64_t taps, int64_t k,
                   const std::function<const scalar_t*(int64_t)>& window, int64_t row_stride,
                   std::vector<scalar_t>& column_buffer) {
  if (taps == 0) {
    tile.zero_();
    return;
  }
  const int64_t columns = tile.size(1);
  if (has_avx512()) {
    // ct3d's own kernel reads each tap's window where it lies (rows a channel stride
    // apart), one run of the reduction a tap: no copies, and the tile loaded and stored
    // once per kDepth of the reduction (KERNEL_LOG, "the CPU's taps as runs").
    std::vector<int64_t> offsets(taps);
    const scalar_t* first = window(0);
    for (int64_t t = 0; t < taps; ++t) offsets[t] = window(t) - first;
    const GemmRuns runs{taps, k, k, 0, offsets.data()};
    gemm_avx512_runs<scalar_t>(tile.size(0), columns, runs, weights.const_data_ptr<scalar_t>(),
                               weights.stride(0), first, row_stride,
                               tile.mutable_data_ptr<scalar_t>(), columns, false);
    return;
  }
  const int64_t chunk = std::max<int64_t>(1, kTapChunkRows / k);
  column_buffer.resize(std::min(chunk, taps) * k * columns);
  for (int64_t t0 = 0; t0 < taps; t0 += chunk) {
    const int64_t count = std::min(chunk, taps - t0);
    scalar_t* rows = column_buffer.data();
    for (int64_t t = 0; t < count; ++t) {
      const scalar_t* source = window(t0 + t);
      for (int64_t r = 0; r < k; ++r, rows += columns) {
        std::memcpy(rows, source + r * row_stride, sizeof(scalar_t) * columns);
      }
    }
    const at::Tensor a = weights.narrow(1, t0 * k, count * k);
    const at::Tensor windows =
        at::from_blob(column_buffer.data(), {count * k, columns}, tile.options());
    if (t0 == 0) {
      at::mm_out(tile, a, windows);
    } else {
      tile.addmm_(a, windows);
    }
  }
}

template void multiply_taps<float>(at::Tensor&, const at::Tensor&, int64_t, int64_t,
                                   const std::function<const float*(int64_t)>&, int64_t,
                                   std::vector<float>&);
template void multiply_taps<double>(at::Tensor&, const at::Tensor&, int64_t, int64_t,
                                    const std::function<const double*(int64_t)>&, int64_t,
                                    std::vector<double>&);

}  // namespace ct3d::cpu
