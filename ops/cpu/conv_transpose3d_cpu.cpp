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

TapList taps_per_output(int64_t output_extent, int64_t input_extent, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t dilation) {
  TapList list;
  list.begin.reserve(output_extent + 1);
  for (int64_t o = 0; o < output_extent; ++o) {
    list.begin.push_back(static_cast<int64_t>(list.taps.size()));
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t numerator = o + padding - k * dilation;
      if (numerator < 0 || numerator % stride != 0) continue;
      const int64_t i = numerator / stride;
      if (i >= input_extent) continue;
      list.taps.push_back(k);
      list.inputs.push_back(i);
    }
  }
  list.begin.push_back(static_cast<int64_t>(list.taps.size()));
  return list;
}

template <typename scalar_t>
void conv_transpose3d_cpu_kernel(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                 const at::Tensor& weight, const scalar_t* bias,
                                 at::Tensor& output) {
  using acc_t = at::acc_type<scalar_t, /*is_cuda=*/false>;
  const Int3 in = args.concrete_input_size();
  const Int3 out = args.concrete_output_size();
  const TapList taps_d = taps_per_output(out[0], in[0], args.kernel_size[0], args.stride[0],
                                         args.padding[0], args.dilation[0]);
  const TapList taps_h = taps_per_output(out[1], in[1], args.kernel_size[1], args.stride[1],
                                         args.padding[1], args.dilation[1]);

  const int64_t batch = output.size(0);
  const int64_t cin_g = args.in_channels_per_group();
  const int64_t cout_g = args.out_channels_per_group();
  const int64_t kd_n = args.kernel_size[0], kh_n = args.kernel_size[1], kw_n = args.kernel_size[2];
  const int64_t in_plane = in[0] * in[1] * in[2];
  const int64_t out_plane = out[0] * out[1] * out[2];
  const int64_t w_taps = kd_n * kh_n * kw_n;
  const int64_t sw = args.stride[2], pw = args.padding[2], dw = args.dilation[2];

  const scalar_t* x = input.const_data_ptr<scalar_t>();
  const scalar_t* w = weight.const_data_ptr<scalar_t>();
  scalar_t* y = output.mutable_data_ptr<scalar_t>();

  at::parallel_for(0, batch * args.out_channels, 1, [&](int64_t first, int64_t last) {
    std::vector<acc_t> row(out[2]);
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t n = plane / args.out_channels;
      const int64_t oc = plane % args.out_channels;
      const int64_t g = oc / cout_g;
      const int64_t oc_in_group = oc % cout_g;
      const acc_t bias_value = bias ? static_cast<acc_t>(bias[oc]) : acc_t(0);
      scalar_t* y_plane = y + plane * out_plane;
      for (int64_t od = 0; od < out[0]; ++od) {
        for (int64_t oh = 0; oh < out[1]; ++oh) {
          std::fill(row.begin(), row.end(), bias_value);
          for (int64_t ic = g * cin_g; ic < (g + 1) * cin_g; ++ic) {
            const scalar_t* x_channel = x + (n * args.in_channels + ic) * in_plane;
            const scalar_t* w_channel = w + (ic * cout_g + oc_in_group) * w_taps;
            for (int64_t td = taps_d.begin[od]; td < taps_d.begin[od + 1]; ++td) {
              for (int64_t th = taps_h.begin[oh]; th < taps_h.begin[oh + 1]; ++th) {
                const scalar_t* x_row =
                    x_channel + (taps_d.inputs[td] * in[1] + taps_h.inputs[th]) * in[2];
                const scalar_t* w_row =
                    w_channel + (taps_d.taps[td] * kh_n + taps_h.taps[th]) * kw_n;
                for (int64_t iw = 0; iw < in[2]; ++iw) {
                  const acc_t xv = static_cast<acc_t>(x_row[iw]);
                  for (int64_t kw = 0; kw < kw_n; ++kw) {
                    const int64_t ow = iw * sw - pw + kw * dw;
                    if (ow >= 0 && ow < out[2]) {
                      row[ow] += xv * static_cast<acc_t>(w_row[kw]);
                    }
                  }
                }
              }
            }
          }
          scalar_t* y_row = y_plane + (od * out[1] + oh) * out[2];
          for (int64_t ow = 0; ow < out[2]; ++ow) {
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
          args, input5, weight_c, args.has_bias ? bias_c.const_data_ptr<scalar_t>() : nullptr,
          output5);
    });
  }
  return output.contiguous(memory_format);
}

}  // namespace ct3d
