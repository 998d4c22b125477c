// Device code of the float32 implicit GEMM: a cp.async multi-stage pipeline that
// gathers channels-last input rows and packed, TF32-split weight fragments into
// shared memory with 16-byte copies, and 3xTF32 tensor-core products (hi*hi +
// hi*lo + lo*hi, float32 accumulation) that keep float32 accuracy at tensor-core
// speed.
//
// The mma's M side is output channels (A = weights) and its N side is output
// positions (B = input): a B fragment is two channels of one position, which the
// staged layout keeps adjacent, and an A fragment is packed in the mma's register
// order. So every fragment is one 16-byte shared-memory load, straight into the
// registers the mma reads. The input is split into TF32 hi and lo in registers:
// splitting it in the staging pass doubled the bytes each stage moves from L2,
// and that traffic, not the split, was the limit (2x slower).
#pragma once

#include "ops/cuda/implicit_gemm_problem.h"
#include "ops/cuda/ptx_helpers.cuh"

namespace ct3d::cuda {

constexpr int kBlockK = 16;                    // input channels of one tap per pipeline stage
constexpr int kRowFloats = kBlockK;            // a row of one stage: 16 channels
constexpr int kChunksPerRow = kRowFloats / 4;  // 16-byte chunks in a row
// Packed weights of one stage and one 16-channel tile: {hi, lo} x 2 k-steps x 32
// lanes x 4 registers.
constexpr int kWeightTileFloats = 2 * 2 * 32 * 4;

// A block is kWarps warps side by side along the positions; each warp owns
// kMTiles x kNTiles mma tiles (16 channels x 8 positions), so a block covers all
// kMTiles*16 channels of its positions and the input tile is loaded exactly once.
template <int kWarps, int kMTilesPerWarp, int kNTilesPerWarp, int kPipelineStages>
struct TileConfig {
  static constexpr int kStages = kPipelineStages;  // cp.async pipeline depth
  static constexpr int kMTiles = kMTilesPerWarp;
  static constexpr int kNTiles = kNTilesPerWarp;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockChannels = kMTiles * 16;
  static constexpr int kBlockPositions = kWarps * kNTiles * 8;
  // Four consecutive lanes copy the four chunks of one row, so a warp's copy
  // reads 8 whole 64-byte row segments (one row per lane took ~7x more L1
  // wavefronts); a thread therefore gathers 4x as many rows, one chunk each.
  static constexpr int kRowsPerThread = kBlockPositions * kChunksPerRow / kThreads;
  static constexpr int kRowStep = kThreads / kChunksPerRow;
  static constexpr int kTileInputFloats = kBlockPositions * kRowFloats;
  static constexpr int kTileWeightFloats = kMTiles * kWeightTileFloats;
  static constexpr int kStageFloats = kTileInputFloats + kTileWeightFloats;
  // The epilogue parks each warp's tile as [channel][position]; a pitch of 8
  // (mod 32) words makes the fragment writes (float2, half a warp at a time)
  // conflict-free.
  static constexpr int kEpiloguePitch = kNTiles * 8 + 8;
  static constexpr int kEpilogueFloats = kWarps * kBlockChannels * kEpiloguePitch;
  static constexpr int kPipelineFloats = kStages * kStageFloats;
  static constexpr int kSharedBytes =
      4 * (kPipelineFloats > kEpilogueFloats ? kPipelineFloats : kEpilogueFloats);
  // Blocks per multiprocessor the register allocator is told to leave room for:
  // as many as shared memory allows, up to 12 warps (more would cap registers
  // below the accumulators' needs).
  static constexpr int kBlocksByShared = 227 * 1024 / (kSharedBytes + 1024);
  static constexpr int kBlocksByWarps = 12 / kWarps;
  static constexpr int kMinBlocksPerSM = kBlocksByShared < kBlocksByWarps
                                             ? (kBlocksByShared < 1 ? 1 : kBlocksByShared)
                                             : kBlocksByWarps;
  static_assert(kBlockPositions % kRowStep == 0, "every thread copies the same rows");
  static_assert(kNTiles * 8 % 32 == 0, "the epilogue stores 32 positions per lane sweep");
};

// Offset of 16-byte chunk `chunk` of row `row` in an input tile. The chunk index
// is XOR-swizzled with bits 1-2 of the row: 8 consecutive rows copying the same
// chunk, and 2 consecutive rows loading 4 chunks as fragments, both cover all 32
// banks.
__device__ __forceinline__ int row_chunk_offset(int row, int chunk) {
  return row * kRowFloats + ((chunk ^ ((row >> 1) & 3)) << 2);
}

// x = hi + lo, hi the TF32 value nearest x (ties away from zero, by adding half a
// TF32 unit to the magnitude bits), lo the exact float32 remainder, of which the
// tensor core reads the TF32 bits. Two integer ops and a FADD: cvt.rna.tf32
// compiles to five instructions here.
__device__ __forceinline__ void split_tf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

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
  const uint32_t carry = p.per_sample_divider.divide(rest);
  rest -= carry * p.per_sample_divider.divisor;
  PhasePosition pos;
  pos.n = origin.n + carry;
  const uint32_t lines = p.width_divider.divide(rest);
  pos.qw = static_cast<int>(rest - lines * p.width_divider.divisor);
  pos.qd = static_cast<int>(p.height_divider.divide(lines));
  pos.qh = static_cast<int>(lines - pos.qd * p.height_divider.divisor);
  return pos;
}

__device__ __forceinline__ void as_registers(const float4& v, uint32_t (&r)[4]) {
  r[0] = __float_as_uint(v.x);
  r[1] = __float_as_uint(v.y);
  r[2] = __float_as_uint(v.z);
  r[3] = __float_as_uint(v.w);
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
    implicit_gemm_phase_kernel(const __grid_constant__ PhaseProblem p,
                               const float* __restrict__ staged,
                               const float* __restrict__ packed_weight,
                               const float* __restrict__ bias, float* __restrict__ output) {
  extern __shared__ __align__(16) float shared[];
  constexpr int kRows = Cfg::kRowsPerThread;
  constexpr int kMTiles = Cfg::kMTiles;
  constexpr int kNTiles = Cfg::kNTiles;
  constexpr int kStages = Cfg::kStages;

  const int tid = threadIdx.x;
  const int group = blockIdx.z;
  const int channel0 = blockIdx.y * Cfg::kBlockChannels;
  // The (active) phase varies fastest across blocks, width residue first: blocks that run
  // together write the interleaved halves of the same output lines, which then
  // meet in L2 instead of reaching memory as partial sectors.
  const int phase = static_cast<int>(blockIdx.x % p.phases);
  const int64_t block_row0 = static_cast<int64_t>(blockIdx.x / p.phases) * Cfg::kBlockPositions;
  const int active_w = p.dim[2].active_residues, active_h = p.dim[1].active_residues;
  const int residue_w = p.dim[2].active_residue[phase % active_w];
  const int residue_h = p.dim[1].active_residue[(phase / active_w) % active_h];
  const int residue_d = p.dim[0].active_residue[phase / (active_w * active_h)];
  const ResidueParams res_d = p.dim[0].residue[residue_d];
  const ResidueParams res_h = p.dim[1].residue[residue_h];
  const ResidueParams res_w = p.dim[2].residue[residue_w];
  const RowOrigin origin = row_origin(p, block_row0);
  auto row_in_phase = [&](int64_t row, const PhasePosition& pos) {
    return row < p.rows && pos.qd < res_d.positions && pos.qh < res_h.positions &&
           pos.qw < res_w.positions;
  };

  // Each thread copies chunk (tid % 4) of the same kRows staged rows for the whole
  // reduction. Thanks to the staged halo every tap of a row is inside, so a row is
  // just its address; rows past the end gather the last row again (not stored).
  const int copy_chunk = tid % kChunksPerRow;
  const float* row_source[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int local = tid / kChunksPerRow + r * Cfg::kRowStep;
    const int clamped =
        block_row0 + local < p.rows ? local : static_cast<int>(p.rows - 1 - block_row0);
    const PhasePosition pos = decode_row(p, origin, clamped);
    row_source[r] = staged + pos.n * p.staged_batch_stride + p.staged_origin +
                    static_cast<int64_t>(group) * p.cin_padded + pos.qd * p.staged_stride[0] +
                    pos.qh * p.staged_stride[1] + pos.qw * p.staged_stride[2] + 4 * copy_chunk;
  }

  // The reduction runs over (depth tap, height tap, width tap, channel chunk), chunk
  // fastest. Each dimension's taps are a progression, so moving to the next stage
  // adds one of four precomputed steps to the input offset and to the weights'.
  const int chunks_per_tap = p.cin_padded / kBlockK;
  const int total_stages = res_d.taps * res_h.taps * res_w.taps * chunks_per_tap;
  // Packed weights of one (tap, chunk): cout_padded / 16 tiles of kWeightTileFloats.
  const int64_t weight_chunk_step = static_cast<int64_t>(p.cout_padded / 16) * kWeightTileFloats;
  const int64_t weight_tap_step = chunks_per_tap * weight_chunk_step;
  const int64_t input_step_d = res_d.shift_step * p.staged_stride[0];
  const int64_t input_step_h = res_h.shift_step * p.staged_stride[1];
  const int64_t input_step_w = res_w.shift_step * p.staged_stride[2];
  const int64_t weight_step_d = res_d.tap_step * p.kernel_h * p.kernel_w * weight_tap_step;
  const int64_t weight_step_h = res_h.tap_step * p.kernel_w * weight_tap_step;
  const int64_t weight_step_w = res_w.tap_step * weight_tap_step;
  // Steps from one stage to the next: to the next chunk, or on wrapping to the
  // next width, height or depth tap (the other counters back to their first).
  const int last_chunk = chunks_per_tap - 1;
  const int64_t input_wrap_w = input_step_w - last_chunk * kRowFloats;
  const int64_t input_wrap_h = input_wrap_w + input_step_h - res_w.taps * input_step_w;
  const int64_t input_wrap_d = input_wrap_h + input_step_d - res_h.taps * input_step_h;
  const int64_t weight_wrap_w = weight_step_w - last_chunk * weight_chunk_step;
  const int64_t weight_wrap_h = weight_wrap_w + weight_step_h - res_w.taps * weight_step_w;
  const int64_t weight_wrap_d = weight_wrap_h + weight_step_d - res_h.taps * weight_step_h;
  // Offsets of the next stage to load, and its position in the reduction.
  int64_t input_offset = res_d.first_shift * p.staged_stride[0] +
                         res_h.first_shift * p.staged_stride[1] +
                         res_w.first_shift * p.staged_stride[2];
  const float* weight_source =
      packed_weight + group * p.packed_group_stride + (channel0 / 16) * kWeightTileFloats +
      ((res_d.first_tap * p.kernel_h + res_h.first_tap) * p.kernel_w + res_w.first_tap) *
          weight_tap_step;
  int load_chunk = 0, load_tw = 0, load_th = 0;
  // Shared-memory address of this thread's first copied chunk; row r is
  // r * kRowStep rows further (kRowStep is a multiple of 8, so the swizzle agrees).
  static_assert(Cfg::kRowStep % 8 == 0, "rows r * kRowStep apart share their swizzle");
  const uint32_t copy_destination =
      shared_address(shared + row_chunk_offset(tid / kChunksPerRow, copy_chunk));
  constexpr uint32_t kStageBytes = Cfg::kStageFloats * 4;

  auto load_stage = [&](int slot) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      cp_async_16_cached(copy_destination + slot * kStageBytes + r * Cfg::kRowStep * kRowFloats * 4,
                         row_source[r] + input_offset);
    }
    float* tile_weight = shared + slot * Cfg::kStageFloats + Cfg::kTileInputFloats;
    constexpr int kVectors = Cfg::kTileWeightFloats / 4;
#pragma unroll
    for (int v0 = 0; v0 < kVectors; v0 += Cfg::kThreads) {
      const int index = (v0 + tid) * 4;
      if (kVectors % Cfg::kThreads == 0 || v0 + tid < kVectors) {
        cp_async_16(shared_address(tile_weight + index), weight_source + index);
      }
    }
    int64_t input_step = kRowFloats, weight_step = weight_chunk_step;
    if (++load_chunk > last_chunk) {
      load_chunk = 0;
      input_step = input_wrap_w;
      weight_step = weight_wrap_w;
      if (++load_tw == res_w.taps) {
        load_tw = 0;
        input_step = input_wrap_h;
        weight_step = weight_wrap_h;
        if (++load_th == res_h.taps) {
          load_th = 0;
          input_step = input_wrap_d;
          weight_step = weight_wrap_d;
        }
      }
    }
    input_offset += input_step;
    weight_source += weight_step;
  };

  const int lane = tid & 31;
  const int lane_row = lane >> 2;  // "groupID" of the mma fragment layouts
  const int lane_k = lane & 3;     // "threadID_in_group"
  const int warp_position0 = (tid >> 5) * kNTiles * 8;
  float acc[kMTiles][kNTiles][4] = {};

  // k order: a thread's input fragment of k-step s is channels 4*lane_k + 2s and
  // 4*lane_k + 2s + 1 (mma k indices lane_k and lane_k + 4), so one 16-byte load
  // of a row chunk gives both k-steps; the weights are packed in the same order.
  // Row warp_position0 + nt * 8 + lane_row agrees with lane_row in bits 1-2, so
  // its fragment sits at the swizzled offset of lane_row plus whole rows.
  const int fragment_offset =
      row_chunk_offset(lane_row, lane_k) + warp_position0 * kRowFloats;
  auto compute_stage = [&](int slot) {
    const float* tile_input = shared + slot * Cfg::kStageFloats + fragment_offset;
    const float* tile_weight = shared + slot * Cfg::kStageFloats + Cfg::kTileInputFloats;
    uint32_t x_hi[kNTiles][4], x_lo[kNTiles][4];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      const float4 x = *reinterpret_cast<const float4*>(tile_input + nt * 8 * kRowFloats);
      split_tf32(x.x, x_hi[nt][0], x_lo[nt][0]);
      split_tf32(x.y, x_hi[nt][1], x_lo[nt][1]);
      split_tf32(x.z, x_hi[nt][2], x_lo[nt][2]);
      split_tf32(x.w, x_hi[nt][3], x_lo[nt][3]);
    }
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      // Weight fragments: [hi, lo][k-step][lane][4].
      const float* fragments = tile_weight + mt * kWeightTileFloats + lane * 4;
      uint32_t w_hi[2][4], w_lo[2][4];
      as_registers(*reinterpret_cast<const float4*>(fragments), w_hi[0]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 128), w_hi[1]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 256), w_lo[0]);
      as_registers(*reinterpret_cast<const float4*>(fragments + 384), w_lo[1]);
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const uint32_t xh0[2] = {x_hi[nt][0], x_hi[nt][1]}, xh1[2] = {x_hi[nt][2], x_hi[nt][3]};
        const uint32_t xl0[2] = {x_lo[nt][0], x_lo[nt][1]}, xl1[2] = {x_lo[nt][2], x_lo[nt][3]};
        // The tensor core truncates when it adds into its accumulator, a bias
        // that grows with the reduction length (2e-5 at K = 3360). So each
        // stage's products (small terms first) go into a fresh partial, added to
        // the running sum by an ordinary round-to-nearest FADD.
        float partial[4] = {0.f, 0.f, 0.f, 0.f};
        mma_tf32_16x8x8(partial, w_lo[0], xh0);
        mma_tf32_16x8x8(partial, w_hi[0], xl0);
        mma_tf32_16x8x8(partial, w_lo[1], xh1);
        mma_tf32_16x8x8(partial, w_hi[1], xl1);
        mma_tf32_16x8x8(partial, w_hi[0], xh0);
        mma_tf32_16x8x8(partial, w_hi[1], xh1);
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mt][nt][e] += partial[e];
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
  int load_slot = kStages - 1, compute_slot = 0;
  for (int it = 0; it < total_stages; ++it) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage it is visible, and every warp is done with stage it-1
    if (it + kStages - 1 < total_stages) load_stage(load_slot);
    cp_async_commit();
    compute_stage(compute_slot);
    load_slot = load_slot == kStages - 1 ? 0 : load_slot + 1;
    compute_slot = compute_slot == kStages - 1 ? 0 : compute_slot + 1;
  }

  // Epilogue, through shared memory: each warp parks its tile as [channel]
  // [position] and reads it back with the lanes along 32 consecutive positions of
  // one channel, so a store covers 128 bytes of a phase line (the fragment order
  // gave 4 positions per channel per store: 2-4x more sectors on strided shapes).
  cp_async_wait<0>();
  __syncthreads();  // every warp is done with the pipeline's shared memory
  constexpr int kWarpPositions = kNTiles * 8;
  constexpr int kPitch = Cfg::kEpiloguePitch;
  float* park = shared + (tid >> 5) * Cfg::kBlockChannels * kPitch;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        // Registers 2 half, 2 half + 1: channel lane_row + 8 half, positions
        // 2 lane_k and 2 lane_k + 1.
        const int channel = mt * 16 + lane_row + 8 * half;
        *reinterpret_cast<float2*>(park + channel * kPitch + nt * 8 + 2 * lane_k) =
            make_float2(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
      }
    }
  }
  __syncwarp();
  // Lane l stores position segment * 32 + l of the warp's tile, channel by
  // channel; the bias of a channel is one broadcast load shared by the segments.
  constexpr int kSegments = kWarpPositions / 32;
  const int64_t group_channel0 = static_cast<int64_t>(group) * p.cout_per_group + channel0;
  float* out[kSegments];
#pragma unroll
  for (int segment = 0; segment < kSegments; ++segment) {
    const int local = warp_position0 + segment * 32 + lane;
    const PhasePosition pos = decode_row(p, origin, local);
    out[segment] =
        row_in_phase(block_row0 + local, pos)
            ? output + pos.n * p.output_batch_stride + group_channel0 * p.output_channel_stride +
                  static_cast<int64_t>(pos.qd * p.dim[0].stride + residue_d) * p.output_stride[0] +
                  static_cast<int64_t>(pos.qh * p.dim[1].stride + residue_h) * p.output_stride[1] +
                  static_cast<int64_t>(pos.qw * p.dim[2].stride + residue_w) * p.output_stride[2]
            : nullptr;
  }
  const int channels = min(Cfg::kBlockChannels, p.cout_per_group - channel0);
  const float* channel_bias = bias != nullptr ? bias + group_channel0 : nullptr;
#pragma unroll
  for (int segment = 0; segment < kSegments; ++segment) {
    float* destination = out[segment];
    if (destination == nullptr) continue;
    const float* parked = park + segment * 32 + lane;
#pragma unroll
    for (int c = 0; c < Cfg::kBlockChannels; ++c) {
      if (c < channels) {
        float value = parked[c * kPitch];
        if (channel_bias != nullptr) value += channel_bias[c];
        *destination = value;
      }
      destination += p.output_channel_stride;
    }
  }
}

}  // namespace ct3d::cuda
