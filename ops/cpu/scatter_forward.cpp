#include "ops/cpu/scatter_forward.h"

#include <ATen/Parallel.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstring>

#include "ops/common/phase_plan.h"
#include "ops/cpu/gemm_avx512.h"
#include "ops/cpu/residue_layout.h"
#include "ops/cpu/shifted_gemm.h"

namespace ct3d::cpu {
namespace {}  // namespace

int64_t scatter_forward_products(const ConvGeometry& g) {
  const ResidueLayout r = residue_layout(g);
  return g.dim[0].input * r.extent[1] * r.extent[2] * g.taps();
}

int64_t gather_forward_products(const ConvGeometry& g) {
  // Per phase: its positions on the padded input's pitch times its taps; the padded
  // input's height and width are at least input + kernel reach.
  int64_t products = 0;
  std::array<std::vector<PhaseDimPlan>, 3> plans;
  for (int i = 0; i < 3; ++i) plans[i] = plan_phases(g.dim[i]);
  const int64_t pitch_h = g.dim[1].input + (g.dim[1].kernel - 1) * g.dim[1].dilation;
  const int64_t pitch_w = g.dim[2].input + (g.dim[2].kernel - 1) * g.dim[2].dilation;
  for (const auto& pd : plans[0])
    for (const auto& ph : plans[1])
      for (const auto& pw : plans[2]) {
        products += pd.positions * pitch_h * pitch_w *
                    int64_t(pd.taps.size() * ph.taps.size() * pw.taps.size());
      }
  return products;
}

template <typename scalar_t>
void scatter_forward(const ConvGeometry& g, const at::Tensor& input, const at::Tensor& weight,
                     const scalar_t* bias, at::Tensor& output) {
  const ResidueLayout r = residue_layout(g);
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const int64_t taps = g.taps();
  // The input on the layout's pitch (zero past each row's and plane's end: those
  // positions scatter zeros), and the output accumulated in residue volumes.
  const PaddedVolume x = padded_copy(input, {1, 1, 1}, r.extent, {0, 0, 0});
  at::Tensor y =
      at::zeros({g.batch, r.parts(), g.out_channels, r.extent[0] + 2, r.extent[1], r.extent[2]},
                input.options());
  const int64_t plane = r.extent[1] * r.extent[2];
  const int64_t y_channel = (r.extent[0] + 2) * plane;
  const at::Tensor packed = tap_major_weights(weight, g.groups);
  // Tasks own (sample, group, block of output channels): enough of them for every
  // thread, blocks a multiple of 8 rows (the micro-kernel's).
  const int64_t owners = g.batch * g.groups;
  int64_t blocks = std::max<int64_t>(1, (2 * at::get_num_threads() + owners - 1) / owners);
  blocks = std::min<int64_t>(blocks, std::max<int64_t>(1, cout_g / 8));
  const int64_t block_channels = (cout_g + blocks - 1) / blocks;
  const int64_t planes_per_tile = std::max<int64_t>(
      1,
      kTileBytes / (int64_t(sizeof(scalar_t)) * std::max<int64_t>(block_channels, cin_g) * plane));
  const scalar_t* weights = packed.const_data_ptr<scalar_t>();
  scalar_t* y_data = y.mutable_data_ptr<scalar_t>();
  at::parallel_for(0, owners * blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t task = first; task < last; ++task) {
      const int64_t block = task % blocks, group = (task / blocks) % g.groups;
      const int64_t n = task / (blocks * g.groups);
      const int64_t co0 = block * block_channels;
      const int64_t channels = std::min(block_channels, cout_g - co0);
      if (channels <= 0) continue;
      const scalar_t* x_sample = volume_data<scalar_t>(x, n, 0, group * cin_g);
      for (int64_t p0 = 0; p0 < g.dim[0].input; p0 += planes_per_tile) {
        const int64_t columns = std::min(planes_per_tile, g.dim[0].input - p0) * plane;
        for (int64_t k = 0; k < taps; ++k) {
          scalar_t* y_window =
              y_data +
              ((n * r.parts() + r.tap_part[k]) * g.out_channels + group * cout_g + co0) *
                  y_channel +
              r.tap_offset[k] + p0 * plane;
          gemm_avx512<scalar_t>(
              channels, columns, cin_g, weights + ((group * taps + k) * cout_g + co0) * cin_g,
              cin_g, x_sample + p0 * plane, x.channel_stride(), y_window, y_channel, true);
        }
      }
    }
  });
  // The residue volumes into the output, plus the bias.
  const std::array<int64_t, 3> out = {g.dim[0].output, g.dim[1].output, g.dim[2].output};
  scalar_t* out_data = output.mutable_data_ptr<scalar_t>();
  at::parallel_for(0, g.batch * g.out_channels, 1, [&](int64_t first, int64_t last) {
    for (int64_t index = first; index < last; ++index) {
      const int64_t n = index / g.out_channels, co = index % g.out_channels;
      const scalar_t shift = bias != nullptr ? bias[co] : scalar_t(0);
      scalar_t* dst = out_data + index * out[0] * out[1] * out[2];
      for (int64_t part = 0; part < r.parts(); ++part) {
        const int64_t rd = part / (r.strides[1] * r.strides[2]);
        const int64_t rh = (part / r.strides[2]) % r.strides[1], rw = part % r.strides[2];
        const scalar_t* src = y_data + ((n * r.parts() + part) * g.out_channels + co) * y_channel;
        for (int64_t od = rd, md = 0; od < out[0]; od += r.strides[0], ++md)
          for (int64_t oh = rh, mh = 0; oh < out[1]; oh += r.strides[1], ++mh) {
            const scalar_t* src_row =
                src + (md + r.low[0]) * plane + (mh + r.low[1]) * r.extent[2] + r.low[2];
            scalar_t* dst_row = dst + (od * out[1] + oh) * out[2];
            for (int64_t ow = rw, mw = 0; ow < out[2]; ow += r.strides[2], ++mw) {
              dst_row[ow] = src_row[mw] + shift;
            }
          }
      }
    }
  });
}

template void scatter_forward<float>(const ConvGeometry&, const at::Tensor&, const at::Tensor&,
                                     const float*, at::Tensor&);
template void scatter_forward<double>(const ConvGeometry&, const at::Tensor&, const at::Tensor&,
                                      const double*, at::Tensor&);

}  // namespace ct3d::cpu
