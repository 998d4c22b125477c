// CPU kernel: each task owns whole output planes (n, oc), so no two threads ever
// write the same element. Within a plane, every input row scatters into one output
// row buffer, which keeps the inner loop contiguous in both tensors.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <vector>

#include "ops/conv_transpose3d.h"
#include "ops/conv_transpose3d_args.h"
#include "ops/conv_geometry.h"
#include "ops/error_message.h"

namespace ct3d {
namespace {

// For one spatial dimension: the (kernel tap, input index) pairs that land on each
// output index. Gathering them once per call keeps divisions out of the loops.
struct TapList {
  std::vector<int64_t> begin;  // begin[o] .. begin[o + 1] index into taps / inputs
  std::vector<int64_t> taps;
  std::vector<int64_t> inputs;
};

TapList taps_per_output(const DimGeometry& d) {
  TapList list;
  list.begin.reserve(d.output + 1);
  for (int64_t o = 0; o < d.output; ++o) {
    list.begin.push_back(static_cast<int64_t>(list.taps.size()));
    for (int64_t k = 0; k < d.kernel; ++k) {
      const int64_t i = d.source_index_inside(o, k);
      if (i < 0) continue;
      list.taps.push_back(k);
      list.inputs.push_back(i);
    }
  }
  list.begin.push_back(static_cast<int64_t>(list.taps.size()));
  return list;
}

template <typename scalar_t>
void conv_transpose3d_cpu_kernel(const ConvGeometry& geometry, const at::Tensor& input,
                                 const at::Tensor& weight, const scalar_t* bias,
                                 at::Tensor& output) {
  using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
  const DimGeometry &D = geometry.dim[0], &H = geometry.dim[1], &W = geometry.dim[2];
  const TapList taps_d = taps_per_output(D);
  const TapList taps_h = taps_per_output(H);

  const int64_t batch = geometry.batch;
  const int64_t in_channels = geometry.in_channels, out_channels = geometry.out_channels;
  const int64_t cin_g = geometry.in_channels_per_group();
  const int64_t cout_g = geometry.out_channels_per_group();
  const int64_t in_plane = geometry.input_positions();
  const int64_t out_plane = geometry.output_positions();
  const int64_t w_taps = geometry.taps();

  const scalar_t* x = input.const_data_ptr<scalar_t>();
  const scalar_t* w = weight.const_data_ptr<scalar_t>();
  scalar_t* y = output.mutable_data_ptr<scalar_t>();

  at::parallel_for(0, batch * out_channels, 1, [&](int64_t first, int64_t last) {
    std::vector<acc_t> row(W.output);
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t n = plane / out_channels;
      const int64_t oc = plane % out_channels;
      const int64_t g = oc / cout_g;
      const int64_t oc_in_group = oc % cout_g;
      const acc_t bias_value = bias ? static_cast<acc_t>(bias[oc]) : acc_t(0);
      scalar_t* y_plane = y + plane * out_plane;
      for (int64_t od = 0; od < D.output; ++od) {
        for (int64_t oh = 0; oh < H.output; ++oh) {
          std::fill(row.begin(), row.end(), bias_value);
          for (int64_t ic = g * cin_g; ic < (g + 1) * cin_g; ++ic) {
            const scalar_t* x_channel = x + (n * in_channels + ic) * in_plane;
            const scalar_t* w_channel = w + (ic * cout_g + oc_in_group) * w_taps;
            for (int64_t td = taps_d.begin[od]; td < taps_d.begin[od + 1]; ++td) {
              for (int64_t th = taps_h.begin[oh]; th < taps_h.begin[oh + 1]; ++th) {
                const scalar_t* x_row =
                    x_channel + (taps_d.inputs[td] * H.input + taps_h.inputs[th]) * W.input;
                const scalar_t* w_row =
                    w_channel + (taps_d.taps[td] * H.kernel + taps_h.taps[th]) * W.kernel;
                for (int64_t iw = 0; iw < W.input; ++iw) {
                  const acc_t xv = static_cast<acc_t>(x_row[iw]);
                  for (int64_t kw = 0; kw < W.kernel; ++kw) {
                    const int64_t ow = W.output_index_inside(iw, kw);
                    if (ow >= 0) {
                      row[ow] += xv * static_cast<acc_t>(w_row[kw]);
                    }
                  }
                }
              }
            }
          }
          scalar_t* y_row = y_plane + (od * H.output + oh) * W.output;
          for (int64_t ow = 0; ow < W.output; ++ow) {
            y_row[ow] = static_cast<scalar_t>(row[ow]);
          }
        }
      }
    }
  });
}

}  // namespace

at::Tensor conv_transpose3d_cpu(CT3D_CONV_TRANSPOSE3D_PARAMS) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  check_dtype_supported(input, {at::kFloat, at::kDouble}, "CPU");
  CT3D_CHECK(input.is_cpu(), "conv_transpose3d (CPU kernel): input must be a CPU tensor, got ",
             input.device());

  const at::Tensor input5 = (args.batched ? input : input.unsqueeze(0)).contiguous();
  const at::Tensor weight_c = weight.contiguous();
  const at::Tensor bias_c = args.has_bias ? bias->contiguous() : at::Tensor();
  // The kernel writes a contiguous tensor; a channels-last result is a copy of it.
  at::Tensor output = at::empty_symint(args.output_shape(), input.options());
  at::Tensor output5 = args.batched ? output : output.unsqueeze(0);
  const at::MemoryFormat memory_format = output_memory_format(args, input, weight);
  if (output.numel() > 0) {
    AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "ct3d_conv_transpose3d_cpu", [&] {
      conv_transpose3d_cpu_kernel<scalar_t>(
          geometry_of(args), input5, weight_c, args.has_bias ? bias_c.const_data_ptr<scalar_t>() : nullptr,
          output5);
    });
  }
  return output.contiguous(memory_format);
}

}  // namespace ct3d
