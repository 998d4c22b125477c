// Device code of the float32 implicit GEMM: a cp.async multi-stage pipeline that
// gathers input tiles and packed weight tiles into shared memory, and 3xTF32
// tensor-core products (hi*hi + hi*lo + lo*hi, float32 accumulation) that keep
// float32 accuracy at tensor-core speed.
#pragma once

#include "ops/cuda/implicit_gemm_problem.h"
#include "ops/cuda/ptx_helpers.cuh"

namespace ct3d::cuda {

constexpr int kBlockK = 16;  // input channels of one tap per pipeline stage
constexpr int kStages = 3;   // cp.async pipeline depth

// A block is kWarps warps stacked along the rows; each warp owns kMTiles x kNTiles
// tiles of 16x8 outputs, so a block covers all kNTiles*8 columns of its rows and
// the input tile is loaded exactly once.
template <int kWarps, int kMTilesPerWarp, int kNTilesPerWarp>
struct TileConfig {
  static constexpr int kMTiles = kMTilesPerWarp;
  static constexpr int kNTiles = kNTilesPerWarp;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockM = kWarps * kMTiles * 16;
  static constexpr int kBlockN = kNTiles * 8;
  static constexpr int kRowsPerThread = kBlockM / kThreads;
  // Row pitches congruent to 8 or 24 (mod 32) words make the fragment loads of a
  // warp (4 k-rows x 8 consecutive words) hit 32 different banks.
  static constexpr int kPitchA = kBlockM + 8;
  static constexpr int kPitchB = (kBlockN % 16 == 8) ? kBlockN : kBlockN + 8;
  static constexpr int kStageFloats = kBlockK * kPitchA + 2 * kBlockK * kPitchB;
  static constexpr int kSharedBytes = kStages * kStageFloats * 4;
  // Blocks that must fit on one multiprocessor, so that the register allocator
  // leaves room for them (2 x 256 or 3 x 128 threads: 16 or 12 warps).
  static constexpr int kMinBlocksPerSM = kThreads >= 256 ? 2 : 3;
  static_assert(kBlockM % kThreads == 0, "every thread loads whole rows");
  static_assert(kPitchA % 32 == 8, "conflict-free A fragments");
};

// Phase coordinates of a GEMM row (qw fastest).
struct PhasePosition {
  int64_t n;
  int qd, qh, qw;
};

// Decodes rows block_row0 + local with 32-bit arithmetic: the one 64-bit division
// is done once per block (RowOrigin), the rest fits in 32 bits because
// positions_per_sample < 2^31 (checked on the host).
struct RowOrigin {
  int64_t n;
  int offset;
};

__device__ __forceinline__ RowOrigin row_origin(const PhaseProblem& p, int64_t row0) {
  const int64_t n = row0 / p.positions_per_sample;
  return {n, static_cast<int>(row0 - n * p.positions_per_sample)};
}

__device__ __forceinline__ PhasePosition decode_row(const PhaseProblem& p, RowOrigin origin,
                                                    int local) {
  uint32_t rest = static_cast<uint32_t>(origin.offset) + static_cast<uint32_t>(local);
  const uint32_t per_sample = static_cast<uint32_t>(p.positions_per_sample);
  const uint32_t carry = rest / per_sample;
  rest -= carry * per_sample;
  PhasePosition pos;
  pos.n = origin.n + carry;
  const uint32_t width = static_cast<uint32_t>(p.dim[2].max_positions);
  const uint32_t height = static_cast<uint32_t>(p.dim[1].max_positions);
  pos.qw = static_cast<int>(rest % width);
  rest /= width;
  pos.qh = static_cast<int>(rest % height);
  pos.qd = static_cast<int>(rest / height);
  return pos;
}

// Bit t set when phase tap t of this dimension reads inside the input.
__device__ __forceinline__ uint32_t valid_tap_mask(const ResidueParams& residue, int q,
                                                   int extent) {
  uint32_t mask = 0;
  for (int t = 0; t < residue.taps; ++t) {
    const int i = q + residue.input_shift[t];
    mask |= (i >= 0 && i < extent ? 1u : 0u) << t;
  }
  return mask;
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
    implicit_gemm_phase_kernel(const __grid_constant__ PhaseProblem p,
                               const float* __restrict__ input,
                               const float* __restrict__ weight_hi,
                               const float* __restrict__ weight_lo,
                               const float* __restrict__ bias, float* __restrict__ output) {
  extern __shared__ __align__(16) float shared[];
  constexpr int kRows = Cfg::kRowsPerThread;
  constexpr int kMTiles = Cfg::kMTiles;
  constexpr int kNTiles = Cfg::kNTiles;

  const int tid = threadIdx.x;
  const int group = blockIdx.z;
  const int col0 = blockIdx.y * Cfg::kBlockN;
  // The phase varies fastest across blocks, width residue first: blocks that run
  // together write the interleaved halves of the same output lines, which then
  // meet in L2 instead of reaching memory as partial sectors.
  const int phase = static_cast<int>(blockIdx.x % p.phases);
  const int64_t block_row0 = static_cast<int64_t>(blockIdx.x / p.phases) * Cfg::kBlockM;
  const int residue_w = phase % p.dim[2].stride;
  const int residue_h = (phase / p.dim[2].stride) % p.dim[1].stride;
  const int residue_d = phase / (p.dim[2].stride * p.dim[1].stride);
  const ResidueParams& res_d = p.dim[0].residue[residue_d];
  const ResidueParams& res_h = p.dim[1].residue[residue_h];
  const ResidueParams& res_w = p.dim[2].residue[residue_w];
  const RowOrigin origin = row_origin(p, block_row0);
  auto row_in_phase = [&](int64_t row, const PhasePosition& pos) {
    return row < p.rows && pos.qd < res_d.positions && pos.qh < res_h.positions &&
           pos.qw < res_w.positions;
  };

  // Each thread gathers the same kRows rows of A for the whole reduction.
  int64_t row_base[kRows];
  uint32_t mask_d[kRows], mask_h[kRows], mask_w[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int local = tid + r * Cfg::kThreads;
    const PhasePosition pos = decode_row(p, origin, local);
    row_base[r] = 0;
    mask_d[r] = mask_h[r] = mask_w[r] = 0;
    if (row_in_phase(block_row0 + local, pos)) {
      row_base[r] = pos.n * p.input_batch_stride +
                    static_cast<int64_t>(group) * p.cin_per_group * p.input_channel_stride +
                    pos.qd * p.input_stride[0] + pos.qh * p.input_stride[1] +
                    pos.qw * p.input_stride[2];
      mask_d[r] = valid_tap_mask(res_d, pos.qd, p.input_extent[0]);
      mask_h[r] = valid_tap_mask(res_h, pos.qh, p.input_extent[1]);
      mask_w[r] = valid_tap_mask(res_w, pos.qw, p.input_extent[2]);
    }
  }

  const int chunks_per_tap = p.cin_padded / kBlockK;
  const int total_stages = res_d.taps * res_h.taps * res_w.taps * chunks_per_tap;
  const float* group_hi = weight_hi + group * p.packed_group_stride + col0;
  const float* group_lo = weight_lo + group * p.packed_group_stride + col0;

  // Reduction position of the next stage to load: channel chunk fastest, then taps.
  int load_ic = 0, load_tw = 0, load_th = 0, load_td = 0;

  auto load_stage = [&](int slot) {
    float* tile_a = shared + slot * Cfg::kStageFloats;
    float* tile_b_hi = tile_a + kBlockK * Cfg::kPitchA;
    float* tile_b_lo = tile_b_hi + kBlockK * Cfg::kPitchB;

    const int64_t tap_shift = res_d.input_shift[load_td] * p.input_stride[0] +
                              res_h.input_shift[load_th] * p.input_stride[1] +
                              res_w.input_shift[load_tw] * p.input_stride[2];
    const int channels = min(kBlockK, p.cin_per_group - load_ic);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const bool tap_valid = (mask_d[r] >> load_td) & (mask_h[r] >> load_th) &
                             (mask_w[r] >> load_tw) & 1u;
      const int valid_channels = tap_valid ? channels : 0;
      const float* src = input + row_base[r] + tap_shift + load_ic * p.input_channel_stride;
      const uint32_t dst = shared_address(tile_a + tid + r * Cfg::kThreads);
#pragma unroll
      for (int k = 0; k < kBlockK; ++k) {
        const bool ok = k < valid_channels;
        cp_async_4_or_zero(dst + k * Cfg::kPitchA * 4, ok ? src + k * p.input_channel_stride : input,
                           ok ? 4 : 0);
      }
    }

    const int kernel_tap =
        (res_d.kernel_tap[load_td] * p.kernel_h + res_h.kernel_tap[load_th]) * p.kernel_w +
        res_w.kernel_tap[load_tw];
    const int64_t b_offset =
        (static_cast<int64_t>(kernel_tap) * p.cin_padded + load_ic) * p.cout_padded;
    constexpr int kVectorsPerRow = Cfg::kBlockN / 4;
    constexpr int kVectors = kBlockK * kVectorsPerRow;
    for (int v = tid; v < 2 * kVectors; v += Cfg::kThreads) {
      const bool lo_half = v >= kVectors;
      const int index = lo_half ? v - kVectors : v;
      const int k = index / kVectorsPerRow;
      const int c = (index % kVectorsPerRow) * 4;
      const float* src = (lo_half ? group_lo : group_hi) + b_offset + k * p.cout_padded + c;
      float* dst = (lo_half ? tile_b_lo : tile_b_hi) + k * Cfg::kPitchB + c;
      cp_async_16(shared_address(dst), src);
    }

    load_ic += kBlockK;
    if (load_ic >= p.cin_padded) {
      load_ic = 0;
      if (++load_tw == res_w.taps) {
        load_tw = 0;
        if (++load_th == res_h.taps) {
          load_th = 0;
          ++load_td;
        }
      }
    }
  };

  const int lane = tid & 31;
  const int lane_row = lane >> 2;  // "groupID" of the mma fragment layouts
  const int lane_k = lane & 3;     // "threadID_in_group"
  const int warp_row0 = (tid >> 5) * kMTiles * 16;
  float acc[kMTiles][kNTiles][4] = {};

  auto compute_stage = [&](int slot) {
    const float* tile_a = shared + slot * Cfg::kStageFloats;
    const float* tile_b_hi = tile_a + kBlockK * Cfg::kPitchA;
    const float* tile_b_lo = tile_b_hi + kBlockK * Cfg::kPitchB;
#pragma unroll
    for (int k0 = 0; k0 < kBlockK; k0 += 8) {
      uint32_t a_hi[kMTiles][4], a_lo[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        const float* a = tile_a + (k0 + lane_k) * Cfg::kPitchA + warp_row0 + mt * 16 + lane_row;
        split_tf32(a[0], a_hi[mt][0], a_lo[mt][0]);
        split_tf32(a[8], a_hi[mt][1], a_lo[mt][1]);
        split_tf32(a[4 * Cfg::kPitchA], a_hi[mt][2], a_lo[mt][2]);
        split_tf32(a[4 * Cfg::kPitchA + 8], a_hi[mt][3], a_lo[mt][3]);
      }
      uint32_t b_hi[kNTiles][2], b_lo[kNTiles][2];
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const int offset = (k0 + lane_k) * Cfg::kPitchB + nt * 8 + lane_row;
        b_hi[nt][0] = __float_as_uint(tile_b_hi[offset]);
        b_hi[nt][1] = __float_as_uint(tile_b_hi[offset + 4 * Cfg::kPitchB]);
        b_lo[nt][0] = __float_as_uint(tile_b_lo[offset]);
        b_lo[nt][1] = __float_as_uint(tile_b_lo[offset + 4 * Cfg::kPitchB]);
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          // The tensor core truncates when it adds into its accumulator, a bias
          // that grows with the reduction length (2e-5 at K = 3360). So each
          // k-step's three products (small terms first) go into a fresh partial,
          // added to the running sum by an ordinary round-to-nearest FADD.
          float partial[4] = {0.f, 0.f, 0.f, 0.f};
          mma_tf32_16x8x8(partial, a_lo[mt], b_hi[nt]);
          mma_tf32_16x8x8(partial, a_hi[mt], b_lo[nt]);
          mma_tf32_16x8x8(partial, a_hi[mt], b_hi[nt]);
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][nt][e] += partial[e];
        }
      }
    }
  };

  // Multi-stage pipeline: while stage it is multiplied, stages it+1 .. it+kStages-1
  // are in flight. One commit per iteration, empty or not, keeps the group count
  // that cp.async.wait_group relies on.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < total_stages) load_stage(s);
    cp_async_commit();
  }
  for (int it = 0; it < total_stages; ++it) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage it is visible, and every warp is done with stage it-1
    const int next = it + kStages - 1;
    if (next < total_stages) load_stage(next % kStages);
    cp_async_commit();
    compute_stage(it % kStages);
  }

  // Epilogue: bias, then straight from the accumulators to the output. Lanes of a
  // warp write 8 consecutive phase positions of 4 channels per instruction.
  const int64_t group_channel0 = static_cast<int64_t>(group) * p.cout_per_group;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int local = warp_row0 + mt * 16 + lane_row + half * 8;
      const PhasePosition pos = decode_row(p, origin, local);
      if (!row_in_phase(block_row0 + local, pos)) continue;
      const int64_t out_base =
          pos.n * p.output_batch_stride + group_channel0 * p.output_channel_stride +
          static_cast<int64_t>(pos.qd * p.dim[0].stride + residue_d) * p.output_stride[0] +
          static_cast<int64_t>(pos.qh * p.dim[1].stride + residue_h) * p.output_stride[1] +
          static_cast<int64_t>(pos.qw * p.dim[2].stride + residue_w) * p.output_stride[2];
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = col0 + nt * 8 + lane_k * 2 + e;
          if (col >= p.cout_per_group) continue;
          float value = acc[mt][nt][half * 2 + e];
          if (bias != nullptr) value += bias[group_channel0 + col];
          output[out_base + col * p.output_channel_stride] = value;
        }
      }
    }
  }
}

// Splits the weights (C_in, C_out/groups, kD, kH, kW) into TF32 hi and lo parts,
// laid out as PhaseProblem describes, zero in the padding.
__global__ void pack_weights_kernel(const float* __restrict__ weight, float* __restrict__ hi,
                                    float* __restrict__ lo, int64_t total, int cin_per_group,
                                    int cout_per_group, int cin_padded, int cout_padded,
                                    int taps) {
  for (int64_t index = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; index < total;
       index += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = index;
    const int col = static_cast<int>(rest % cout_padded);
    rest /= cout_padded;
    const int ic = static_cast<int>(rest % cin_padded);
    rest /= cin_padded;
    const int tap = static_cast<int>(rest % taps);
    const int64_t group = rest / taps;
    float value = 0.f;
    if (ic < cin_per_group && col < cout_per_group) {
      value = weight[((group * cin_per_group + ic) * cout_per_group + col) * taps + tap];
    }
    const float value_hi = round_to_tf32(value);
    hi[index] = value_hi;
    lo[index] = value - value_hi;
  }
}

}  // namespace ct3d::cuda
