#include <ATen/Dispatch.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>

#include "ops/cuda/channel_sums.h"
#include "ops/cuda/device_capability.h"

namespace ct3d::cuda {
namespace {

constexpr int kThreads = 256;

// Block (channel, part): the part's share of the channel's batch x positions values,
// summed in float64 into partials[channel * parts + part].
template <typename T>
__global__ void __launch_bounds__(kThreads)
    channel_partials_kernel(const T* __restrict__ grad_output, int64_t batch, int64_t channels,
                            int64_t positions, int64_t per_part, double* __restrict__ partials) {
  const int64_t channel = blockIdx.x, part = blockIdx.y;
  const int64_t values = batch * positions;
  const int64_t first = part * per_part, last = min(values, first + per_part);
  double sum = 0.0;
  for (int64_t i = first + threadIdx.x; i < last; i += kThreads) {
    const int64_t n = i / positions, p = i - n * positions;
    sum += static_cast<double>(grad_output[(n * channels + channel) * positions + p]);
  }
  __shared__ double warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
    partials[channel * gridDim.y + part] = total;
  }
}

template <typename T>
__global__ void sum_partials_kernel(const double* __restrict__ partials, int64_t channels,
                                    int parts, T* __restrict__ sums) {
  const int64_t channel = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (channel >= channels) return;
  double total = 0.0;
  for (int part = 0; part < parts; ++part) total += partials[channel * parts + part];
  sums[channel] = static_cast<T>(total);
}

}  // namespace

at::Tensor channel_sums(const at::Tensor& grad_output, cudaStream_t stream) {
  const at::Tensor g = grad_output.contiguous();
  const int64_t batch = g.size(0), channels = g.size(1);
  at::Tensor sums = at::empty({channels}, g.options());
  if (channels == 0) return sums;
  const int64_t positions = g.numel() == 0 ? 0 : g.numel() / (batch * channels);
  const int64_t values = batch * positions;
  // Enough blocks for a few waves, each at least a few thousand values.
  const int64_t wanted = std::max<int64_t>(1, 4 * multiprocessor_count() / channels);
  const int64_t parts = std::min<int64_t>({wanted, std::max<int64_t>(1, values / 4096), 65535});
  const int64_t per_part = std::max<int64_t>(1, (values + parts - 1) / parts);
  at::Tensor partials = at::empty({channels * parts}, g.options().dtype(at::kDouble));
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, g.scalar_type(), "ct3d_channel_sums", [&] {
        channel_partials_kernel<scalar_t>
            <<<dim3(static_cast<unsigned>(channels), static_cast<unsigned>(parts)), kThreads, 0,
               stream>>>(g.const_data_ptr<scalar_t>(), batch, channels, positions, per_part,
                         partials.mutable_data_ptr<double>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        sum_partials_kernel<scalar_t>
            <<<static_cast<unsigned>((channels + 255) / 256), 256, 0, stream>>>(
                partials.const_data_ptr<double>(), channels, static_cast<int>(parts),
                sums.mutable_data_ptr<scalar_t>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
  return sums;
}

}  // namespace ct3d::cuda
