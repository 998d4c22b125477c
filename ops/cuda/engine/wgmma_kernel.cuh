// Device code of the gathering implicit GEMM on Hopper's wgmma (sm_90a): the same
// problem, staging, weight walk and epilogue rows as implicit_gemm_kernel.cuh, with
// a warp-specialized mainloop (measured in bench/wgmma_probe: 121-129 TFLOP/s on a
// plain GEMM, against 60 for the mma.sync mainloop).
//
// Block: warpgroup 0 loads, warpgroups 1 and 2 compute. GEMM rows (phase positions)
// are on wgmma's M, 64 per compute warpgroup; the block's kN output channels are
// its N. Per stage (one tap, 16 input channels):
// - the producer threads copy one staged row each (4 x 16 bytes, cp.async) and one
//   thread bulk-copies the stage's packed weights, both completing on the slot's
//   `full` mbarrier;
// - each compute thread loads its two rows' values, splits them into TF32 hi and lo
//   in registers, and issues 2 k-steps x 3 wgmmas (lo*hi, hi*lo, hi*hi) against the
//   packed hi and lo weights; one stage's wgmmas stay in flight while the next is
//   prepared, and the slot is handed back (`empty`) once they have completed.
// The tensor core truncates as it accumulates, so every kFlushStages stages (128
// products) the chain is added into a float32 total (probe: error 6e-6 at K = 864
// without, 9e-7 with).
//
// K order inside a stage: k-step s reads logical k j from stage column
// 4 (j % 4) + 2 s + j / 4, so lane (g, t) finds all its values of a row in columns
// 4t .. 4t+3 (one 16-byte load); the weight pack writes the same order
// (wgmma_weight_layout.h).
#pragma once

#include "ops/cuda/engine/hopper_ptx.cuh"
#include "ops/cuda/engine/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/wgmma_instructions.cuh"
#include "ops/cuda/engine/wgmma_weight_layout.h"

namespace ct3d::cuda {

template <int kChannels>
struct WgmmaConfig {
  static constexpr int kN = kChannels;  // output channels of a block
  static constexpr int kBlockChannels = kChannels;
  static constexpr bool kPackPositionsOnM = false;
  static constexpr int kPackWgmmaChannels = kChannels;
  static constexpr int kComputeWarpgroups = 2;
  static constexpr int kBlockPositions = 64 * kComputeWarpgroups;
  static constexpr int kThreads = 128 * (1 + kComputeWarpgroups);
  static constexpr int kComputeThreads = 128 * kComputeWarpgroups;
  static constexpr int kSlots = 8;
  static constexpr int kFlushStages = 8;
  static constexpr int kTileInputFloats = kBlockPositions * kRowFloats;
  static constexpr int kTileWeightFloats = kN * kWeightFloatsPerChannel;  // hi and lo
  static constexpr int kStageFloats = kTileInputFloats + kTileWeightFloats;
  static constexpr int kEpiloguePitch = kBlockPositions + 4;
  static constexpr int kEpilogueFloats = kN * kEpiloguePitch;
  static constexpr int kPipelineFloats = kSlots * kStageFloats;
  static constexpr int kSharedBytes =
      4 * (kPipelineFloats > kEpilogueFloats ? kPipelineFloats : kEpilogueFloats);
  // Registers after setmaxnreg: 128 x 40 + 256 x 232 <= 64 K.
  static constexpr int kProducerRegisters = 40;
  static constexpr int kComputeRegisters = 232;
  static_assert(kN % 8 == 0 && kN <= 128, "wgmma N");
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_phase_kernel(const __grid_constant__ PhaseProblem p, const float* __restrict__ staged,
                       const float* __restrict__ packed_weight, const float* __restrict__ bias,
                       float* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kN = Cfg::kN, kSlots = Cfg::kSlots;
  using Mma = Wgmma<kN>;
  constexpr int kAccumulators = Mma::kAccumulators;
  extern __shared__ __align__(128) float shared[];
  __shared__ __align__(8) uint64_t barriers[2 * kSlots];
  const int tid = threadIdx.x;
  const int group = blockIdx.z;
  const int channel0 = blockIdx.y * kN;
  const PhaseBlock block = phase_block(p, Cfg::kBlockPositions);
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[kSlots]);
  constexpr uint32_t kStageBytes = 4 * Cfg::kStageFloats;
  constexpr uint32_t kWeightBytes = 4 * Cfg::kTileWeightFloats;
  if (tid == 0) {
    for (int s = 0; s < kSlots; ++s) {
      mbarrier_init(full0 + 8 * s, 128 + 1);  // the producers' copies + the weights' bulk copy
      mbarrier_init(empty0 + 8 * s, Cfg::kComputeThreads);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  ReductionWalk walk(p, block);

  if (tid < 128) {
    // Producer: thread tid copies staged row tid of every stage.
    release_registers<Cfg::kProducerRegisters>();
    const float* row_source = staged_row(p, block, staged, group, tid);
    const float* weight_source =
        packed_weight + group * p.packed_group_stride + channel0 * kWeightFloatsPerChannel;
    const uint32_t row_destination = shared_base + 4 * tid * kRowFloats;
    for (int it = 0; it < walk.total_stages; ++it) {
      const int slot = it % kSlots;
      mbarrier_wait(empty0 + 8 * slot, ((it / kSlots) & 1) ^ 1);
      const uint32_t stage = slot * kStageBytes;
#pragma unroll
      for (int c = 0; c < kChunksPerRow; ++c) {
        cp_async_16(row_destination + stage + 16 * c, row_source + walk.input_offset + 4 * c);
      }
      cp_async_arrive(full0 + 8 * slot);
      if (tid == 0) {
        mbarrier_arrive_expect_bytes(full0 + 8 * slot, kWeightBytes);
        bulk_copy(shared_base + stage + 4 * Cfg::kTileInputFloats,
                  weight_source + walk.weight_offset, kWeightBytes, full0 + 8 * slot);
      }
      walk.advance();
    }
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  const int ctid = tid - 128, warp = ctid >> 5, lane = ctid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int row0 = warp * 16 + g;  // warps 0-3: rows 0-63 (warpgroup 1), 4-7: 64-127
  float acc[kAccumulators], total[kAccumulators];
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) acc[i] = total[i] = 0.f;

  // This lane's hi and lo values of rows row0 and row0 + 8 in one stage: element
  // 2s + half of each row belongs to k-step s.
  struct Fragments {
    uint32_t hi[8], lo[8];
  };
  auto load_split = [&](int slot, Fragments& f) {
    const float* stage = shared + slot * Cfg::kStageFloats;
    const float4 x0 = *reinterpret_cast<const float4*>(stage + row0 * kRowFloats + 4 * t);
    const float4 x1 = *reinterpret_cast<const float4*>(stage + (row0 + 8) * kRowFloats + 4 * t);
    const float v[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) split_tf32(v[i], f.hi[i], f.lo[i]);
  };
  auto issue = [&](int slot, const Fragments& f) {
    const uint32_t weights_hi = shared_base + slot * kStageBytes + 4 * Cfg::kTileInputFloats;
    const uint32_t weights_lo = weights_hi + 4 * kN * kBlockK;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      // {row g, k t}, {row g + 8, k t}, {row g, k t + 4}, {row g + 8, k t + 4}
      const uint32_t a_hi[4] = {f.hi[2 * s], f.hi[4 + 2 * s], f.hi[2 * s + 1], f.hi[5 + 2 * s]};
      const uint32_t a_lo[4] = {f.lo[2 * s], f.lo[4 + 2 * s], f.lo[2 * s + 1], f.lo[5 + 2 * s]};
      const uint32_t step = s * (kN / 8) * 256;
      const uint64_t b_hi = matrix_descriptor(weights_hi + step, 128, 256);
      const uint64_t b_lo = matrix_descriptor(weights_lo + step, 128, 256);
      Mma::run(acc, a_lo, b_hi, 1);
      Mma::run(acc, a_hi, b_lo, 1);
      Mma::run(acc, a_hi, b_hi, 1);
    }
  };
  Fragments fragments[2];
  // Two stages per trip, so that each fragment set is a fixed set of registers
  // (wgmma reads them asynchronously).
  auto step = [&](int it, Fragments& mine, Fragments& other) {
    const int slot = it % kSlots;
    mbarrier_wait(full0 + 8 * slot, (it / kSlots) & 1);
    load_split(slot, mine);
    fence_registers(acc);
    wgmma_fence();
    issue(slot, mine);
    wgmma_commit();
    const int previous_slot = (it + kSlots - 1) % kSlots;
    if ((it + 1) % Cfg::kFlushStages == 0) {
      wgmma_wait<0>();
      fence_registers(acc);
      fence_registers(mine.hi);
      fence_registers(mine.lo);
      fence_registers(other.hi);
      fence_registers(other.lo);
      mbarrier_arrive(empty0 + 8 * slot);
      if (it > 0) mbarrier_arrive(empty0 + 8 * previous_slot);
#pragma unroll
      for (int i = 0; i < kAccumulators; ++i) {
        total[i] += acc[i];
        acc[i] = 0.f;
      }
    } else {
      wgmma_wait<1>();  // stage it - 1's wgmmas are done with its slot and fragments
      fence_registers(other.hi);
      fence_registers(other.lo);
      if (it > 0 && it % Cfg::kFlushStages != 0) mbarrier_arrive(empty0 + 8 * previous_slot);
    }
  };
  int it = 0;
  for (; it + 1 < walk.total_stages; it += 2) {
    step(it, fragments[0], fragments[1]);
    step(it + 1, fragments[1], fragments[0]);
  }
  if (it < walk.total_stages) step(it, fragments[0], fragments[1]);
  wgmma_wait<0>();
  fence_registers(acc);
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) total[i] += acc[i];

  // Epilogue, through shared memory (every stage has landed and been read): the
  // tile parked as [channel][position], then each warp stores 32 consecutive
  // positions of one channel per instruction, as the mma.sync epilogue does.
  named_barrier_sync(Cfg::kComputeThreads);
  constexpr int kPitch = Cfg::kEpiloguePitch;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      shared[(8 * j + 2 * t + (e & 1)) * kPitch + row0 + 8 * (e >> 1)] = total[4 * j + e];
    }
  }
  named_barrier_sync(Cfg::kComputeThreads);
  // Thread ctid stores position ctid % 128 of channels ctid / 128, + 2, + 4, ...
  const int position = ctid % Cfg::kBlockPositions;
  const int first_channel = ctid / Cfg::kBlockPositions;
  const int64_t group_channel0 = static_cast<int64_t>(group) * p.cout_per_group + channel0;
  float* destination = output_row(p, block, output, group_channel0, position);
  if (destination == nullptr) return;
  const int channels = min(kN, p.cout_per_group - channel0);
  const float* channel_bias = bias != nullptr ? bias + group_channel0 : nullptr;
  destination += first_channel * p.output_channel_stride;
  constexpr int kChannelStep = Cfg::kComputeThreads / Cfg::kBlockPositions;
#pragma unroll 4
  for (int c = first_channel; c < channels; c += kChannelStep) {
    float value = shared[c * kPitch + position];
    if (channel_bias != nullptr) value += channel_bias[c];
    *destination = value;
    destination += kChannelStep * p.output_channel_stride;
  }
#endif
}

}  // namespace ct3d::cuda
