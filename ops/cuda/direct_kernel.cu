#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/direct_kernel.h"

namespace ct3d::cuda {
namespace {

struct DirectProblem {
  int64_t in_channels, out_channels, cin_per_group, cout_per_group;
  int64_t in_size[3], out_size[3], kernel[3], stride[3], padding[3], dilation[3];
};

// Input index along one dimension that tap k sends to output index o, or -1.
__device__ __forceinline__ int64_t source_index(int64_t o, int64_t k, int64_t stride,
                                                int64_t padding, int64_t dilation, int64_t extent) {
  const int64_t numerator = o + padding - k * dilation;
  if (numerator < 0 || numerator % stride != 0) return -1;
  const int64_t i = numerator / stride;
  return i < extent ? i : -1;
}

template <typename scalar_t>
__global__ void direct_conv_transpose3d_kernel(DirectProblem p, const scalar_t* __restrict__ x,
                                               const scalar_t* __restrict__ w,
                                               const scalar_t* __restrict__ bias,
                                               scalar_t* __restrict__ y, int64_t total,
                                               const int* __restrict__ run_only_if) {
  if (run_only_if != nullptr && *run_only_if == 0) return;
  using opmath_t = at::opmath_type<scalar_t>;
  const int64_t in_plane = p.in_size[0] * p.in_size[1] * p.in_size[2];
  const int64_t taps = p.kernel[0] * p.kernel[1] * p.kernel[2];
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = index;
    const int64_t ow = rest % p.out_size[2];
    rest /= p.out_size[2];
    const int64_t oh = rest % p.out_size[1];
    rest /= p.out_size[1];
    const int64_t od = rest % p.out_size[0];
    rest /= p.out_size[0];
    const int64_t oc = rest % p.out_channels;
    const int64_t n = rest / p.out_channels;
    const int64_t g = oc / p.cout_per_group;
    const int64_t oc_in_group = oc % p.cout_per_group;

    opmath_t acc = bias ? static_cast<opmath_t>(bias[oc]) : opmath_t(0);
    for (int64_t kd = 0; kd < p.kernel[0]; ++kd) {
      const int64_t id =
          source_index(od, kd, p.stride[0], p.padding[0], p.dilation[0], p.in_size[0]);
      if (id < 0) continue;
      for (int64_t kh = 0; kh < p.kernel[1]; ++kh) {
        const int64_t ih =
            source_index(oh, kh, p.stride[1], p.padding[1], p.dilation[1], p.in_size[1]);
        if (ih < 0) continue;
        for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
          const int64_t iw =
              source_index(ow, kw, p.stride[2], p.padding[2], p.dilation[2], p.in_size[2]);
          if (iw < 0) continue;
          const int64_t x_offset = (id * p.in_size[1] + ih) * p.in_size[2] + iw;
          const int64_t w_offset = (kd * p.kernel[1] + kh) * p.kernel[2] + kw;
          for (int64_t ic = g * p.cin_per_group; ic < (g + 1) * p.cin_per_group; ++ic) {
            acc +=
                static_cast<opmath_t>(x[(n * p.in_channels + ic) * in_plane + x_offset]) *
                static_cast<opmath_t>(w[(ic * p.cout_per_group + oc_in_group) * taps + w_offset]);
          }
        }
      }
    }
    y[index] = static_cast<scalar_t>(acc);
  }
}

}  // namespace

void launch_direct_conv_transpose3d(const ConvTranspose3dArgs& args, const at::Tensor& input,
                                    const at::Tensor& weight, const at::Tensor& bias,
                                    at::Tensor& output, cudaStream_t stream,
                                    const int* run_only_if) {
  DirectProblem p{};
  p.in_channels = args.in_channels;
  p.out_channels = args.out_channels;
  p.cin_per_group = args.in_channels_per_group();
  p.cout_per_group = args.out_channels_per_group();
  const Int3 in = args.concrete_input_size();
  const Int3 out = args.concrete_output_size();
  for (int i = 0; i < kSpatialDims; ++i) {
    p.in_size[i] = in[i];
    p.out_size[i] = out[i];
    p.kernel[i] = args.kernel_size[i];
    p.stride[i] = args.stride[i];
    p.padding[i] = args.padding[i];
    p.dilation[i] = args.dilation[i];
  }
  const int64_t total = output.numel();
  constexpr int kThreads = 256;
  // A grid-stride loop: cap the grid, the loop covers any number of elements.
  // Behind a guard, a grid of a few blocks per SM: cheap to launch when it does
  // nothing, enough to fill the GPU when it runs.
  const int64_t max_blocks = run_only_if != nullptr ? 1024 : int64_t(1) << 20;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, max_blocks);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, input.scalar_type(), "ct3d_direct_conv_transpose3d", [&] {
        direct_conv_transpose3d_kernel<scalar_t><<<blocks, kThreads, 0, stream>>>(
            p, input.const_data_ptr<scalar_t>(), weight.const_data_ptr<scalar_t>(),
            bias.defined() ? bias.const_data_ptr<scalar_t>() : nullptr,
            output.mutable_data_ptr<scalar_t>(), total, run_only_if);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
}

}  // namespace ct3d::cuda
