#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "ops/cuda/engine/staging/half_window_weights.h"

namespace ct3d::cuda {
namespace {

struct HalfWeightPacking {
  WeightLayout layout;
  int cin_per_group, cout_per_group, chunks, kernel_h, kernel_w;
  int rows, channel_pitch;
  int64_t outers, steps_per_group;  // outers x chunks, padded
  ResidueParams rd, rh, rw;
  // The bias to widen (null: none): bias_count values, bfloat16 or float16 bits.
  const uint16_t* bias;
  float* bias32;
  int bias_count;
  bool bfloat16;
};

// Thread: one 16-byte piece of the packed layout (half_window_weights.h: a core-matrix
// row, 8 input channels of one target row), moved as raw bits; its place is decoded
// once for the 8 values (a decode per value made the packing a tenth of a wide layer's
// forward).
__global__ void pack_half_window_weights_kernel(const uint16_t* __restrict__ weight,
                                                uint4* __restrict__ packed, int64_t pieces,
                                                const HalfWeightPacking s) {
  if (s.bias != nullptr) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < s.bias_count;
         i += gridDim.x * blockDim.x) {
      s.bias32[i] = s.bfloat16 ? __uint_as_float(uint32_t{s.bias[i]} << 16)
                               : __half2float(__ushort_as_half(s.bias[i]));
    }
  }
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < pieces;
       index += int64_t(gridDim.x) * blockDim.x) {
    const int row_in_group = static_cast<int>(index & 7);
    const int k_half = static_cast<int>((index >> 3) & 1);
    int64_t rest = index >> 4;
    const int row = static_cast<int>(rest % (s.rows / 8)) * 8 + row_in_group;
    rest /= s.rows / 8;
    const int64_t step = rest % s.steps_per_group;
    const int64_t group = rest / s.steps_per_group;
    const int64_t outer = step / s.chunks;
    const int chunk = static_cast<int>(step - outer * s.chunks);
    const int first_channel = chunk * 16 + 8 * k_half;
    int64_t tap = outer;
    int channel = row;
    bool valid = outer < s.outers;
    if (s.channel_pitch > 0) {
      const int tw = row / s.channel_pitch;
      channel = row - tw * s.channel_pitch;
      const int td = static_cast<int>(outer / s.rh.taps);
      const int th = static_cast<int>(outer - td * s.rh.taps);
      tap = ((s.rd.first_tap + td * s.rd.tap_step) * int64_t{s.kernel_h} + s.rh.first_tap +
             th * s.rh.tap_step) *
                s.kernel_w +
            s.rw.first_tap + tw * s.rw.tap_step;
      valid = valid && tw < s.rw.taps;
    }
    valid = valid && channel < s.cout_per_group;
    const uint16_t* source = weight + group * s.layout.group_stride +
                             first_channel * s.layout.reduce_stride +
                             channel * s.layout.target_stride + tap;
    uint32_t bits[4];
#pragma unroll
    for (int e = 0; e < 8; e += 2) {
      const bool low = valid && first_channel + e < s.cin_per_group;
      const bool high = valid && first_channel + e + 1 < s.cin_per_group;
      bits[e / 2] = (low ? source[e * s.layout.reduce_stride] : 0u) |
                    (high ? uint32_t{source[(e + 1) * s.layout.reduce_stride]} << 16 : 0u);
    }
    packed[index] = make_uint4(bits[0], bits[1], bits[2], bits[3]);
  }
}

}  // namespace

HalfPackedWeights pack_half_window_weights(const GatherProblem& problem, const PhaseProblem& p,
                                           int rows, int channel_pitch, int stage_steps,
                                           const at::Tensor& weight, const at::Tensor& bias,
                                           cudaStream_t stream) {
  TORCH_INTERNAL_ASSERT(weight.element_size() == 2 && weight.is_contiguous() && rows % 8 == 0);
  HalfWeightPacking s{};
  HalfPackedWeights result;
  if (bias.defined()) {
    TORCH_INTERNAL_ASSERT(bias.scalar_type() == weight.scalar_type() && bias.is_contiguous());
    result.bias = at::empty({bias.numel()}, weight.options().dtype(at::kFloat));
    s.bias = static_cast<const uint16_t*>(bias.const_data_ptr());
    s.bias32 = result.bias.mutable_data_ptr<float>();
    s.bias_count = static_cast<int>(bias.numel());
    s.bfloat16 = bias.scalar_type() == at::kBFloat16;
  }
  s.layout = problem.weight;
  s.cin_per_group = p.cin_per_group;
  s.cout_per_group = p.cout_per_group;
  s.chunks = p.cin_padded / 16;
  s.kernel_h = p.kernel_h;
  s.kernel_w = p.kernel_w;
  s.rows = rows;
  s.channel_pitch = channel_pitch;
  s.rd = p.dim[0].residue[0];
  s.rh = p.dim[1].residue[0];
  s.rw = p.dim[2].residue[0];
  s.outers = channel_pitch > 0 ? int64_t{s.rd.taps} * s.rh.taps : problem.taps();
  s.steps_per_group = (s.outers * s.chunks + stage_steps - 1) / stage_steps * stage_steps;
  const int64_t total = problem.groups * s.steps_per_group * int64_t{rows} * 16;
  result.weights = at::empty({total}, weight.options());  // 16-byte aligned (allocator)
  constexpr int kPackThreads = 256;
  const int64_t pieces = total / 8;
  const int64_t blocks = std::min<int64_t>((pieces + kPackThreads - 1) / kPackThreads, 4096);
  pack_half_window_weights_kernel<<<blocks, kPackThreads, 0, stream>>>(
      static_cast<const uint16_t*>(weight.const_data_ptr()),
      static_cast<uint4*>(result.weights.mutable_data_ptr()), pieces, s);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return result;
}

}  // namespace ct3d::cuda
