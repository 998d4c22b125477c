#include "ops/cpu/channel_sums.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <array>

namespace ct3d::cpu {

at::Tensor channel_sums(const at::Tensor& grad_output) {
  const at::Tensor g = grad_output.contiguous();
  const int64_t batch = g.size(0), channels = g.size(1);
  const int64_t positions = g.numel() == 0 ? 0 : g.numel() / (batch * channels);
  at::Tensor sums = at::empty({channels}, g.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, g.scalar_type(), "ct3d_channel_sums", [&] {
        const scalar_t* data = g.const_data_ptr<scalar_t>();
        scalar_t* out = sums.mutable_data_ptr<scalar_t>();
        at::parallel_for(0, channels, 1, [&](int64_t first, int64_t last) {
          for (int64_t c = first; c < last; ++c) {
            // Four partial sums: independent adds in flight (a single chain is latency-bound).
            std::array<double, 4> partial{};
            for (int64_t n = 0; n < batch; ++n) {
              const scalar_t* row = data + (n * channels + c) * positions;
              int64_t p = 0;
              for (; p + 4 <= positions; p += 4) {
                for (int j = 0; j < 4; ++j) partial[j] += static_cast<double>(row[p + j]);
              }
              for (; p < positions; ++p) partial[0] += static_cast<double>(row[p]);
            }
            out[c] = static_cast<scalar_t>((partial[0] + partial[1]) + (partial[2] + partial[3]));
          }
        });
      });
  return sums;
}

}  // namespace ct3d::cpu
