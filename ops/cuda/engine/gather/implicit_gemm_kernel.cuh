// Device code of the float32 implicit GEMM: a cp.async multi-stage pipeline that
// gathers channels-last input rows and packed, TF32-split weight fragments into
// shared memory with 16-byte copies, 3xTF32 tensor-core products by warp tiles
// (implicit_gemm_warp_tiles.cuh), and an epilogue that stores whole phase-line
// segments. The input is split into TF32 hi and lo in registers: splitting it in
// the staging pass doubled the bytes each stage moves from L2, and that traffic,
// not the split, was the limit (2x slower).
#pragma once

#include "ops/cuda/engine/gather/implicit_gemm_layout.cuh"
#include "ops/cuda/engine/gather/implicit_gemm_warp_tiles.cuh"
#include "ops/cuda/engine/instructions/ptx_helpers.cuh"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace ct3d::cuda {

// A block is kWarps warps side by side along the positions, each a WarpTile
// (ChannelsOnM or PositionsOnM) over all of the block's channels, so the input tile
// is loaded exactly once. (Splitting 64 channels over 2 x 2 warps, each reading half
// the weights, measured 5 % slower on 68.)
template <int kBlockWarps, class WarpTileType, int kPipelineStages>
struct TileConfig {
  using WarpTile = WarpTileType;
  static constexpr bool kWidthReuse = false;
  static constexpr int kStages = kPipelineStages;  // cp.async pipeline depth
  // How the weights are packed for it (weight_packing.cuh).
  static constexpr bool kPackPositionsOnM = WarpTile::kPositionsOnM;
  static constexpr int kPackWgmmaChannels = 0;
  static constexpr int kWarps = kBlockWarps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockChannels = WarpTile::kChannels;
  static constexpr int kWarpPositions = WarpTile::kPositions;
  static constexpr int kBlockPositions = kWarps * kWarpPositions;
  // Four consecutive lanes copy the four chunks of one row, so a warp's copy
  // reads 8 whole 64-byte row segments (one row per lane took ~7x more L1
  // wavefronts); a thread therefore gathers 4x as many rows, one chunk each.
  static constexpr int kRowsPerThread = kBlockPositions * kChunksPerRow / kThreads;
  static constexpr int kRowStep = kThreads / kChunksPerRow;
  static constexpr int kTileInputFloats = kBlockPositions * kRowFloats;
  static constexpr int kTileWeightFloats = kBlockChannels * kWeightFloatsPerChannel;
  static constexpr int kStageFloats = kTileInputFloats + kTileWeightFloats;
  static constexpr int kEpilogueFloats = kWarps * kBlockChannels * WarpTile::kPitch;
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
  static_assert(kWarpPositions % 32 == 0, "the epilogue stores 32 positions per lane sweep");
  static_assert(kRowStep % 8 == 0, "rows r * kRowStep apart share their swizzle");
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

// The phase and first row of a block (the active phase varies fastest across
// blocks, width residue first: blocks that run together write the interleaved
// halves of the same output lines, which then meet in L2 instead of reaching
// memory as partial sectors).
struct PhaseBlock {
  int residue_d, residue_h, residue_w;
  ResidueParams res_d, res_h, res_w;
  int64_t row0;
  RowOrigin origin;

  __device__ __forceinline__ bool row_in_phase(const PhaseProblem& p, int64_t row,
                                               const PhasePosition& pos) const {
    return row < p.rows && pos.qd < res_d.positions && pos.qh < res_h.positions &&
           pos.qw < res_w.positions;
  }
};

// Block x of a launch with phase fastest: (row block x / phases, phase x % phases).
__device__ __forceinline__ PhaseBlock phase_block_at(const PhaseProblem& p, int block_positions,
                                                     unsigned x) {
  PhaseBlock b;
  const int phase = static_cast<int>(x % p.phases);
  b.row0 = static_cast<int64_t>(x / p.phases) * block_positions;
  const int active_w = p.dim[2].active_residues, active_h = p.dim[1].active_residues;
  b.residue_w = p.dim[2].active_residue[phase % active_w];
  b.residue_h = p.dim[1].active_residue[(phase / active_w) % active_h];
  b.residue_d = p.dim[0].active_residue[phase / (active_w * active_h)];
  b.res_d = p.dim[0].residue[b.residue_d];
  b.res_h = p.dim[1].residue[b.residue_h];
  b.res_w = p.dim[2].residue[b.residue_w];
  b.origin = row_origin(p, b.row0);
  return b;
}

__device__ __forceinline__ PhaseBlock phase_block(const PhaseProblem& p, int block_positions) {
  return phase_block_at(p, block_positions, blockIdx.x);
}

// The staged source row of block row `local` at the reduction's origin (rows past
// the end gather the last row again; they are not stored). Thanks to the staged
// halo every tap of a row is inside, so a row is just its address.
template <class Element>
__device__ __forceinline__ const Element* staged_row(const PhaseProblem& p, const PhaseBlock& b,
                                                     const Element* staged, int group, int local) {
  const int clamped = b.row0 + local < p.rows ? local : static_cast<int>(p.rows - 1 - b.row0);
  const PhasePosition pos = decode_row(p, b.origin, clamped);
  return staged + pos.n * p.staged_batch_stride + p.staged_origin +
         static_cast<int64_t>(group) * p.cin_padded + pos.qd * p.row_stride[0] +
         pos.qh * p.row_stride[1] + pos.qw * p.row_stride[2];
}

// Where block row `local` of channel group_channel0 goes in the output, or null
// when the row is past the phase's end.
template <class Element>
__device__ __forceinline__ Element* output_row(const PhaseProblem& p, const PhaseBlock& b,
                                               Element* output, int64_t group_channel0,
                                               int local) {
  const PhasePosition pos = decode_row(p, b.origin, local);
  if (!b.row_in_phase(p, b.row0 + local, pos)) return nullptr;
  return output + pos.n * p.output_batch_stride + group_channel0 * p.output_channel_stride +
         static_cast<int64_t>(pos.qd * p.dim[0].stride + b.residue_d) * p.output_stride[0] +
         static_cast<int64_t>(pos.qh * p.dim[1].stride + b.residue_h) * p.output_stride[1] +
         static_cast<int64_t>(pos.qw * p.dim[2].stride + b.residue_w) * p.output_stride[2];
}

// The reduction runs over (depth tap, height tap, width tap, channel chunk), chunk
// fastest. Each dimension's taps are a progression, so moving to the next stage
// adds one of four precomputed steps to the input offset and to the weights'.
// Packed weights of one (tap, chunk): kWeightFloatsPerChannel per padded channel.
struct ReductionWalk {
  int total_stages;
  int last_chunk, taps_w, taps_h;
  int64_t weight_chunk_step;
  int64_t input_wrap_w, input_wrap_h, input_wrap_d;
  int64_t weight_wrap_w, weight_wrap_h, weight_wrap_d;
  // The next stage's offsets (input: from a staged row; weights: from the packed
  // start) and its place in the reduction.
  int64_t input_offset, weight_offset;
  int chunk = 0, tw = 0, th = 0;

  __device__ __forceinline__ ReductionWalk(const PhaseProblem& p, const PhaseBlock& b) {
    const int chunks_per_tap = p.cin_padded / kBlockK;
    total_stages = b.res_d.taps * b.res_h.taps * b.res_w.taps * chunks_per_tap;
    taps_w = b.res_w.taps;
    taps_h = b.res_h.taps;
    weight_chunk_step = static_cast<int64_t>(p.cout_padded) * kWeightFloatsPerChannel;
    const int64_t weight_tap_step = chunks_per_tap * weight_chunk_step;
    const int64_t input_step_d = b.res_d.shift_step * p.staged_stride[0];
    const int64_t input_step_h = b.res_h.shift_step * p.staged_stride[1];
    const int64_t input_step_w = b.res_w.shift_step * p.staged_stride[2];
    const int64_t weight_step_d = b.res_d.tap_step * p.kernel_h * p.kernel_w * weight_tap_step;
    const int64_t weight_step_h = b.res_h.tap_step * p.kernel_w * weight_tap_step;
    const int64_t weight_step_w = b.res_w.tap_step * weight_tap_step;
    // Steps from one stage to the next: to the next chunk, or on wrapping to the
    // next width, height or depth tap (the other counters back to their first).
    last_chunk = chunks_per_tap - 1;
    input_wrap_w = input_step_w - last_chunk * kRowFloats;
    input_wrap_h = input_wrap_w + input_step_h - b.res_w.taps * input_step_w;
    input_wrap_d = input_wrap_h + input_step_d - b.res_h.taps * input_step_h;
    weight_wrap_w = weight_step_w - last_chunk * weight_chunk_step;
    weight_wrap_h = weight_wrap_w + weight_step_h - b.res_w.taps * weight_step_w;
    weight_wrap_d = weight_wrap_h + weight_step_d - b.res_h.taps * weight_step_h;
    input_offset = b.res_d.first_shift * p.staged_stride[0] +
                   b.res_h.first_shift * p.staged_stride[1] +
                   b.res_w.first_shift * p.staged_stride[2];
    weight_offset =
        ((b.res_d.first_tap * p.kernel_h + b.res_h.first_tap) * p.kernel_w + b.res_w.first_tap) *
        weight_tap_step;
  }

  __device__ __forceinline__ void advance() {
    int64_t input_step = kRowFloats, weight_step = weight_chunk_step;
    if (++chunk > last_chunk) {
      chunk = 0;
      input_step = input_wrap_w;
      weight_step = weight_wrap_w;
      if (++tw == taps_w) {
        tw = 0;
        input_step = input_wrap_h;
        weight_step = weight_wrap_h;
        if (++th == taps_h) {
          th = 0;
          input_step = input_wrap_d;
          weight_step = weight_wrap_d;
        }
      }
    }
    input_offset += input_step;
    weight_offset += weight_step;
  }
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
    implicit_gemm_phase_kernel(const __grid_constant__ PhaseProblem p,
                               const float* __restrict__ staged,
                               const float* __restrict__ packed_weight,
                               const float* __restrict__ bias, float* __restrict__ output) {
  extern __shared__ __align__(16) float shared[];
  constexpr int kRows = Cfg::kRowsPerThread;
  constexpr int kStages = Cfg::kStages;

  const int tid = threadIdx.x;
  const int group = blockIdx.z;
  const int channel0 = blockIdx.y * Cfg::kBlockChannels;
  const PhaseBlock block = phase_block(p, Cfg::kBlockPositions);

  // Each thread copies chunk (tid % 4) of the same kRows staged rows for the whole
  // reduction.
  const int copy_chunk = tid % kChunksPerRow;
  const float* row_source[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    row_source[r] = staged_row(p, block, staged, group, tid / kChunksPerRow + r * Cfg::kRowStep) +
                    4 * copy_chunk;
  }
  ReductionWalk walk(p, block);
  const float* weight_source =
      packed_weight + group * p.packed_group_stride + channel0 * kWeightFloatsPerChannel;
  // Shared-memory address of this thread's first copied chunk; row r is
  // r * kRowStep rows further (kRowStep is a multiple of 8, so the swizzle agrees).
  const uint32_t copy_destination =
      shared_address(shared + row_chunk_offset(tid / kChunksPerRow, copy_chunk));
  constexpr uint32_t kStageBytes = Cfg::kStageFloats * 4;

  auto load_stage = [&](int slot) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      cp_async_16(copy_destination + slot * kStageBytes + r * Cfg::kRowStep * kRowFloats * 4,
                  row_source[r] + walk.input_offset);
    }
    float* tile_weight = shared + slot * Cfg::kStageFloats + Cfg::kTileInputFloats;
    const float* weights = weight_source + walk.weight_offset;
    constexpr int kVectors = Cfg::kTileWeightFloats / 4;
#pragma unroll
    for (int v0 = 0; v0 < kVectors; v0 += Cfg::kThreads) {
      const int index = (v0 + tid) * 4;
      if (kVectors % Cfg::kThreads == 0 || v0 + tid < kVectors) {
        cp_async_16(shared_address(tile_weight + index), weights + index);
      }
    }
    walk.advance();
  };

  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_position0 = warp * Cfg::kWarpPositions;
  typename Cfg::WarpTile tile;
  const int fragment_offset = Cfg::WarpTile::fragment_offset(lane) + warp_position0 * kRowFloats;
  auto compute_stage = [&](int slot) {
    const float* stage = shared + slot * Cfg::kStageFloats;
    tile.multiply(stage + fragment_offset, stage + Cfg::kTileInputFloats, lane);
  };

  run_cp_async_pipeline<kStages>(walk.total_stages, load_stage,
                                 [&](int slot, int) { compute_stage(slot); });

  // Epilogue, through shared memory: each warp parks its tile as [channel]
  // [position] and reads it back with the lanes along 32 consecutive positions of
  // one channel, so a store covers 128 bytes of a phase line (the fragment order
  // gave 4 positions per channel per store: 2-4x more sectors on strided shapes).
  __syncthreads();  // every warp is done with the pipeline's shared memory
  constexpr int kWarpPositions = Cfg::kWarpPositions;
  constexpr int kPitch = Cfg::WarpTile::kPitch;
  float* park = shared + warp * Cfg::kBlockChannels * kPitch;
  tile.park(park, lane);
  __syncwarp();
  // Lane l stores position segment * 32 + l of the warp's tile, channel by
  // channel (the bias is a broadcast load).
  constexpr int kSegments = kWarpPositions / 32;
  const int64_t group_channel0 = static_cast<int64_t>(group) * p.cout_per_group + channel0;
  float* out[kSegments];
#pragma unroll
  for (int segment = 0; segment < kSegments; ++segment) {
    out[segment] =
        output_row(p, block, output, group_channel0, warp_position0 + segment * 32 + lane);
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
