#include "ops/cpu/direct_correlation.h"

#include <ATen/Parallel.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>


#if defined(__x86_64__)
#include "ops/cpu/avx512_vector.h"
#else
#include <c10/util/Exception.h>
#endif

namespace ct3d::cpu {

#if defined(__x86_64__)
namespace {

// Consecutive positions of a target plane (rows of its width, one after the other) that
// lie in one row: vector lanes [lane, lane + count) from the source row `row` (counted
// from the vector's first row) at `column`.
struct PlaneSegment {
  int lane, count;
  int64_t row, column;
};

// One vector of up to kLanes consecutive plane positions (its segments), kDirectChannels
// target channels (weights padded to a multiple of them), every tap and source channel.
// The positions run on across rows, so that a narrow row does not leave lanes idle
// (KERNEL_LOG "the direct correlation against the scatter forward": a vector a row ran
// 1.06-1.42x the scatter forward's time where rows filled half or 56-63 % of the lanes).
// Each segment is one masked load whose lane i reads the row at i - lane (its other
// lanes are not read); kOneSegment: the vector is one row's, from lane 0.
template <typename T, bool kOneSegment>
__attribute__((target("avx512f"))) void plane_vector(const PlaneSegment* segments, int nsegments,
                                                     int64_t row_stride, int64_t channel_stride,
                                                     int64_t source_channels,
                                                     const std::vector<const T*>& tap_rows,
                                                     const std::vector<const T*>& tap_weights,
                                                     int64_t padded_targets,
                                                     T (&out)[kDirectChannels][Vector<T>::kLanes]) {
  using V = Vector<T>;
  unsigned masks[V::kLanes];
  int64_t offsets[V::kLanes];  // of lane 0's element, in the segment's row
  for (int i = 0; i < nsegments; ++i) {
    masks[i] = ((1u << segments[i].count) - 1) << segments[i].lane;
    offsets[i] = segments[i].row * row_stride + segments[i].column - segments[i].lane;
  }
  typename V::type acc[kDirectChannels];
#pragma GCC unroll 16
  for (int j = 0; j < kDirectChannels; ++j) acc[j] = V::zero();
  for (size_t t = 0; t < tap_rows.size(); ++t) {
    // Integer addresses: a segment's lane 0 may lie before the row (never read).
    const uintptr_t row = reinterpret_cast<uintptr_t>(tap_rows[t]);
    const T* w = tap_weights[t];
    for (int64_t s = 0; s < source_channels; ++s, w += padded_targets) {
      const uintptr_t channel_row = row + uintptr_t(s * channel_stride * int64_t(sizeof(T)));
      typename V::type x;
      if constexpr (kOneSegment) {
        x = V::load(masks[0], reinterpret_cast<const T*>(channel_row +
                                                          uintptr_t(offsets[0] * int64_t(sizeof(T)))));
      } else {
        x = V::zero();
        for (int i = 0; i < nsegments; ++i) {
          x = V::load_into(x, masks[i],
                           reinterpret_cast<const T*>(channel_row +
                                                      uintptr_t(offsets[i] * int64_t(sizeof(T)))));
        }
      }
#pragma GCC unroll 16
      for (int j = 0; j < kDirectChannels; ++j) acc[j] = V::fma(V::broadcast(w[j]), x, acc[j]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < kDirectChannels; ++j) V::store(out[j], (1u << V::kLanes) - 1, acc[j]);
}

}  // namespace

template <typename T>
void direct_correlation(const PaddedVolume& source, int64_t source_channels_total, int64_t groups,
                        int64_t source_channels, int64_t target_channels,
                        const std::vector<CorrelationTap>& taps, const T* weights, const T* bias,
                        std::array<int64_t, 3> source_extent, T* target, int64_t batch,
                        std::array<int64_t, 3> target_extent) {
  constexpr int64_t kLanes = Vector<T>::kLanes;
  const int64_t blocks = (target_channels + kDirectChannels - 1) / kDirectChannels;
  const int64_t padded_targets = blocks * kDirectChannels;
  const int64_t ntaps = int64_t(taps.size());
  const int64_t channel_stride = source.channel_stride();
  const int64_t td = target_extent[0], th = target_extent[1], tw = target_extent[2];
  const T* source_data = source.data.const_data_ptr<T>();
  at::parallel_for(0, batch * groups * blocks * td, 1, [&](int64_t first, int64_t last) {
    std::vector<const T*> tap_rows, tap_weights;
    T out[kDirectChannels][kLanes];
    for (int64_t task = first; task < last; ++task) {
      const int64_t od = task % td, block = (task / td) % blocks;
      const int64_t group = (task / (td * blocks)) % groups, n = task / (td * blocks * groups);
      const int64_t c0 = block * kDirectChannels;
      const int64_t channels = std::min(kDirectChannels, target_channels - c0);
      const T* sample =
          source_data + (n * source_channels_total + group * source_channels) * channel_stride;
      const T* group_weights = weights + group * ntaps * source_channels * padded_targets + c0;
      PlaneSegment segments[kLanes];
      int64_t taps_first_row = -1, taps_last_row = -1;  // the rows tap_rows was made for
      for (int64_t p0 = 0; p0 < th * tw; p0 += kLanes) {
        // The vector's positions p0 .. p0 + count - 1, row by row.
        const int64_t count = std::min(kLanes, th * tw - p0);
        const int64_t first_row = p0 / tw, last_row = (p0 + count - 1) / tw;
        int nsegments = 0;
        for (int64_t p = p0; p < p0 + count; nsegments++) {
          const int64_t row = p / tw, column = p % tw;
          const int64_t length = std::min(tw - column, p0 + count - p);
          segments[nsegments] = {int(p - p0), int(length), row - first_row, column};
          p += length;
        }
        // The taps whose source rows hold data for these target rows (the others would
        // read only the box's zero halo); the same for the vectors of one wide row.
        const bool same_rows = first_row == taps_first_row && last_row == taps_last_row;
        if (!same_rows) {
          taps_first_row = first_row;
          taps_last_row = last_row;
          tap_rows.clear();
          tap_weights.clear();
        }
        for (int64_t t = 0; t < ntaps && !same_rows; ++t) {
          const int64_t sd = od + taps[t].shift[0], sh = first_row + taps[t].shift[1];
          if (sd < 0 || sd >= source_extent[0] || sh + (last_row - first_row) < 0 ||
              sh >= source_extent[1]) {
            continue;
          }
          tap_rows.push_back(sample + source.offset(sd + source.low[0], sh + source.low[1],
                                                    taps[t].shift[2] + source.low[2]));
          tap_weights.push_back(group_weights + t * source_channels * padded_targets);
        }
        if (nsegments == 1) {
          plane_vector<T, true>(segments, nsegments, source.extent[2], channel_stride,
                                source_channels, tap_rows, tap_weights, padded_targets, out);
        } else {
          plane_vector<T, false>(segments, nsegments, source.extent[2], channel_stride,
                                 source_channels, tap_rows, tap_weights, padded_targets, out);
        }
        for (int64_t j = 0; j < channels; ++j) {
          const int64_t c = group * target_channels + c0 + j;
          const T shift = bias != nullptr ? bias[c] : T(0);
          T* dst = target + ((n * groups * target_channels + c) * td + od) * th * tw + p0;
          for (int64_t l = 0; l < count; ++l) dst[l] = out[j][l] + shift;
        }
      }
    }
  });
}

#else

template <typename T>
void direct_correlation(const PaddedVolume&, int64_t, int64_t, int64_t, int64_t,
                        const std::vector<CorrelationTap>&, const T*, const T*,
                        std::array<int64_t, 3>, T*, int64_t, std::array<int64_t, 3>) {
  TORCH_INTERNAL_ASSERT(false, "direct_correlation needs AVX-512");
}

#endif

namespace {

// Box halos so that every tap's shifted row segment (source index = target index +
// shift) lies inside: low = -(lowest shift), high = highest last index - last source.
std::array<std::array<int64_t, 3>, 2> halos(const std::vector<CorrelationTap>& taps,
                                            std::array<int64_t, 3> source,
                                            std::array<int64_t, 3> target) {
  std::array<int64_t, 3> low{}, extent{};
  for (int i = 0; i < 3; ++i) {
    int64_t lowest = 0, highest = 0;
    for (const CorrelationTap& t : taps) {
      lowest = std::min(lowest, t.shift[i]);
      highest = std::max(highest, target[i] - 1 + t.shift[i] - (source[i] - 1));
    }
    low[i] = -lowest;
    extent[i] = source[i] + low[i] + highest;
  }
  return {low, extent};
}

// (groups, taps, source channels, targets padded to kDirectChannels) from the
// weight (C_in, C_out / groups, taps): the forward reads it as [ci][co], the input
// gradient as [co][ci].
at::Tensor pack_direct_weights(const ConvGeometry& g, const at::Tensor& weight, bool forward) {
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  at::Tensor w = weight.reshape({g.groups, cin_g, cout_g, g.taps()});
  w = forward ? w.permute({0, 3, 1, 2}) : w.permute({0, 3, 2, 1});  // (g, t, source, target)
  const int64_t targets = forward ? cout_g : cin_g;
  const int64_t padded = (targets + kDirectChannels - 1) / kDirectChannels * kDirectChannels;
  at::Tensor packed = at::zeros({w.size(0), w.size(1), w.size(2), padded}, weight.options());
  packed.narrow(3, 0, targets).copy_(w);
  return packed;
}

template <typename T>
void run(const ConvGeometry& g, const at::Tensor& source, const at::Tensor& weight, const T* bias,
         at::Tensor& target, bool forward) {
  std::vector<CorrelationTap> taps;
  for (int64_t kd = 0; kd < g.dim[0].kernel; ++kd)
    for (int64_t kh = 0; kh < g.dim[1].kernel; ++kh)
      for (int64_t kw = 0; kw < g.dim[2].kernel; ++kw) {
        const std::array<int64_t, 3> k = {kd, kh, kw};
        CorrelationTap tap;
        for (int i = 0; i < 3; ++i) {
          const int64_t c = g.dim[i].output_index(0, k[i]);  // stride 1: o = i + c
          tap.shift[i] = forward ? -c : c;
        }
        taps.push_back(tap);
      }
  std::array<int64_t, 3> inputs{}, outputs{};
  for (int i = 0; i < 3; ++i) {
    inputs[i] = g.dim[i].input;
    outputs[i] = g.dim[i].output;
  }
  const std::array<int64_t, 3> source_extent = forward ? inputs : outputs;
  const std::array<int64_t, 3> target_extent = forward ? outputs : inputs;
  const auto [low, extent] = halos(taps, source_extent, target_extent);
  const PaddedVolume box = padded_copy(source, {1, 1, 1}, extent, low);
  const at::Tensor packed = pack_direct_weights(g, weight, forward);
  const int64_t source_channels = forward ? g.in_channels_per_group() : g.out_channels_per_group();
  const int64_t target_channels = forward ? g.out_channels_per_group() : g.in_channels_per_group();
  direct_correlation<T>(box, source.size(1), g.groups, source_channels, target_channels, taps,
                        packed.const_data_ptr<T>(), bias, source_extent,
                        target.mutable_data_ptr<T>(), g.batch, target_extent);
}

}  // namespace

template <typename T>
void direct_forward(const ConvGeometry& g, const at::Tensor& input, const at::Tensor& weight,
                    const T* bias, at::Tensor& output) {
  run<T>(g, input, weight, bias, output, true);
}

template <typename T>
void direct_input_gradient(const ConvGeometry& g, const at::Tensor& grad_output,
                           const at::Tensor& weight, at::Tensor& grad_input) {
  run<T>(g, grad_output, weight, nullptr, grad_input, false);
}

template void direct_forward<float>(const ConvGeometry&, const at::Tensor&, const at::Tensor&,
                                    const float*, at::Tensor&);
template void direct_forward<double>(const ConvGeometry&, const at::Tensor&, const at::Tensor&,
                                     const double*, at::Tensor&);
template void direct_input_gradient<float>(const ConvGeometry&, const at::Tensor&,
                                           const at::Tensor&, at::Tensor&);
template void direct_input_gradient<double>(const ConvGeometry&, const at::Tensor&,
                                            const at::Tensor&, at::Tensor&);

template void direct_correlation<float>(const PaddedVolume&, int64_t, int64_t, int64_t, int64_t,
                                        const std::vector<CorrelationTap>&, const float*,
                                        const float*, std::array<int64_t, 3>, float*, int64_t,
                                        std::array<int64_t, 3>);
template void direct_correlation<double>(const PaddedVolume&, int64_t, int64_t, int64_t, int64_t,
                                         const std::vector<CorrelationTap>&, const double*,
                                         const double*, std::array<int64_t, 3>, double*, int64_t,
                                         std::array<int64_t, 3>);

}  // namespace ct3d::cpu
