#include "ops/cpu/shifted_gemm.h"

#include "ops/cpu/gemm_avx512.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>

#include <ATen/ops/from_blob.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <ATen/ops/zeros.h>

namespace ct3d::cpu {

PaddedVolume make_padded_volume(int64_t batch, int64_t parts, int64_t channels,
                                std::array<int64_t, 3> extent, std::array<int64_t, 3> low,
                                const at::TensorOptions& options) {
  PaddedVolume volume;
  volume.extent = extent;
  volume.low = low;
  volume.data =
      at::zeros({batch, parts, channels, extent[0] + 2, extent[1], extent[2]}, options);
  return volume;
}

at::Tensor box(const PaddedVolume& volume, int64_t part, std::array<int64_t, 3> size) {
  at::Tensor view = volume.data.select(1, part);
  for (int i = 0; i < 3; ++i) view = view.narrow(2 + i, volume.low[i], size[i]);
  return view;
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
    if constexpr (std::is_same_v<scalar_t, float>) {
      if (has_avx512()) {
        gemm_avx512(tile.size(0), columns, count * k, a.const_data_ptr<float>(), a.stride(0),
                    column_buffer.data(), columns, tile.mutable_data_ptr<float>(), columns,
                    t0 > 0);
        continue;
      }
    }
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
