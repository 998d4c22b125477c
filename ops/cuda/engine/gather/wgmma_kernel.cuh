// Device code of the gathering implicit GEMM on Hopper's wgmma (sm_90a): the same
// problem, staging, weight walk and epilogue rows as implicit_gemm_kernel.cuh, with
// a warp-specialized mainloop (measured in bench/wgmma_probe: 121-129 TFLOP/s on a
// plain GEMM, against 60 for the mma.sync mainloop).
//
// Block: warpgroup 0 loads, warpgroups 1 and 2 compute. GEMM rows (phase positions)
// are on wgmma's M, kMTiles x 64 per compute warpgroup; the block's kN output
// channels are its N. A stage is kChunks reduction chunks (a chunk: one tap, 16
// input channels):
// - the producer threads copy the staged rows (4 consecutive threads the four
//   16-byte pieces of a row's chunk, cp.async: 8 whole 64-byte segments per warp
//   instruction) and one thread bulk-copies each chunk's packed weights, all
//   completing on the slot's `full` mbarrier;
// - each compute thread loads its rows' values, splits them into TF32 hi and lo in
//   registers, and issues per chunk 2 k-steps x kMTiles x 3 wgmmas (lo*hi, hi*lo,
//   hi*hi) against the packed hi and lo weights; one stage's wgmmas stay in flight
//   while the next is prepared, and the slot is handed back (`empty`) once they
//   have completed.
// The tensor core truncates as it accumulates, so every 128 products the chain is
// added into a float32 total (probe: error 6e-6 at K = 864 without, 9e-7 with).
//
// K order inside a chunk: k-step s reads logical k j from chunk column
// 4 (j % 4) + 2 s + j / 4, so lane (g, t) finds all its values of a row's chunk in
// columns 4t .. 4t+3 (one 16-byte load); the weight pack writes the same order
// (wgmma_weight_layout.h). A stage row holds its chunks side by side; with two
// chunks, odd rows swap their halves, so the 8 lanes of a 16-byte load phase (rows
// g and g + 1) and of a copy phase (two rows) cover all 32 banks.
#pragma once

#include "ops/cuda/engine/epilogue/wgmma_epilogue.cuh"
#include "ops/cuda/engine/gather/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/gather/wgmma_weight_layout.h"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"

namespace ct3d::cuda {

template <int kChannels, int kMTilesPerWarpgroup, int kChunksPerStage, bool kExact = false>
struct WgmmaConfig : WgmmaBlock<kChannels, kMTilesPerWarpgroup, kExact> {
  using Block = WgmmaBlock<kChannels, kMTilesPerWarpgroup, kExact>;
  using Block::kBlockPositions, Block::kN;
  static constexpr bool kWidthReuse = false;
  static constexpr int kChunks = kChunksPerStage;
  static constexpr int kStageK = kBlockK * kChunks;
  static constexpr int kFlushStages = 128 / kStageK;
  static constexpr int kTileInputFloats = kBlockPositions * kStageK;
  static constexpr int kChunkWeightFloats = kN * kWeightFloatsPerChannel;  // hi and lo
  static constexpr int kTileWeightFloats = kChunks * kChunkWeightFloats;
  static constexpr int kStageFloats = kTileInputFloats + kTileWeightFloats;
  // As many slots as fit in 200 KB, at most 8.
  static constexpr int kSlotsThatFit = 200 * 1024 / (4 * kStageFloats);
  static constexpr int kSlots = kSlotsThatFit < 8 ? kSlotsThatFit : 8;
  static constexpr int kEpilogueFloats = kN * (kBlockPositions + 4);  // wgmma_store_tile
  static constexpr int kPipelineFloats = kSlots * kStageFloats;
  static constexpr int kSharedBytes =
      4 * (kPipelineFloats > kEpilogueFloats ? kPipelineFloats : kEpilogueFloats);
  // Producer rows: thread tid copies piece tid % 4 of rows tid / 4 + 32 j.
  static constexpr int kProducerRows = kBlockPositions / 32;
  static_assert(kChunks == 1 || kChunks == 2, "stage chunks");
  static_assert(kSlots >= 3, "a slot computing, one in flight, one loading");
};

// Float offset of 16-byte piece `piece` (chunk * 4 + piece in chunk) of stage row
// `row` (see the swizzle above).
template <int kChunks>
__device__ __forceinline__ int stage_piece_offset(int row, int piece) {
  if constexpr (kChunks == 1) {
    return row * kBlockK + 4 * piece;
  } else {
    return row * 2 * kBlockK + 4 * (piece ^ ((row & 1) << 2));
  }
}

// The producer warpgroup's walk (threads 0-127): for each stage, once its slot is empty,
// the staged rows' pieces by cp.async (thread tid copies piece tid % 4 of rows tid / 4 +
// 32 r) and, by thread 0, each chunk's packed weights by one bulk copy, all completing on
// the slot's `full` barrier.
template <class Cfg>
__device__ __forceinline__ void produce_gather_stages(
    const PhaseProblem& p, const PhaseBlock& block, const float* __restrict__ staged,
    const float* __restrict__ packed_weight, int group, int channel0, ReductionWalk& walk,
    int chunks, int stages, uint32_t shared_base, uint32_t full0, uint32_t empty0, int tid) {
  constexpr int kSlots = Cfg::kSlots, kChunks = Cfg::kChunks;
  constexpr uint32_t kStageBytes = 4 * Cfg::kStageFloats;
  constexpr uint32_t kChunkWeightBytes = 4 * Cfg::kChunkWeightFloats;
  constexpr int kRows = Cfg::kProducerRows;
  const int piece = tid % kChunksPerRow;
  const float* row_source[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    row_source[r] = staged_row(p, block, staged, group, tid / kChunksPerRow + 32 * r) + 4 * piece;
  }
  const float* weight_source =
      packed_weight + group * p.packed_group_stride + channel0 * kWeightFloatsPerChannel;
  for (int it = 0; it < stages; ++it) {
    const int slot = it % kSlots;
    mbarrier_wait(empty0 + 8 * slot, ((it / kSlots) & 1) ^ 1);
    const uint32_t stage = shared_base + slot * kStageBytes;
    const int stage_chunks = min(kChunks, chunks - it * kChunks);
    if (tid == 0) mbarrier_arrive_expect_bytes(full0 + 8 * slot, stage_chunks * kChunkWeightBytes);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c < stage_chunks) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const int row = tid / kChunksPerRow + 32 * r;
          cp_async_16(stage + 4 * stage_piece_offset<kChunks>(row, 4 * c + piece),
                      row_source[r] + walk.input_offset);
        }
        if (tid == 0) {
          bulk_copy(stage + 4 * (Cfg::kTileInputFloats + c * Cfg::kChunkWeightFloats),
                    weight_source + walk.weight_offset, kChunkWeightBytes, full0 + 8 * slot);
        }
        walk.advance();
      }
    }
    cp_async_arrive(full0 + 8 * slot);
  }
}

// The compute warpgroups: per stage, this lane's rows of every chunk split into TF32 hi
// and lo while the stage before multiplies, the chain added into the total every
// kFlushStages stages; then the epilogue (every stage has landed and been read).
template <class Cfg>
__device__ __forceinline__ void compute_gather_stages_and_store(
    const PhaseProblem& p, const PhaseBlock& block, float* shared, uint32_t shared_base,
    uint32_t full0, uint32_t empty0, int chunks, int stages, int ctid, int group, int channel0,
    const float* __restrict__ bias, float* __restrict__ output) {
  constexpr int kN = Cfg::kN, kSlots = Cfg::kSlots, kMTiles = Cfg::kMTiles, kChunks = Cfg::kChunks;
  constexpr int kAccumulators = Wgmma<kN>::kAccumulators;
  constexpr uint32_t kStageBytes = 4 * Cfg::kStageFloats;
  const int t = ctid & 3;
  const int row_base = compute_row_base<kMTiles>(ctid);
  float acc[kMTiles][kAccumulators], total[kMTiles][kAccumulators];
  zero_chains(acc, total);

  // This lane's hi and lo values of one stage: per (m-tile, chunk), rows
  // row_base + 64 mt and + 8, element 2s + half of each row belonging to k-step s.
  struct Fragments {
    uint32_t hi[kMTiles][kChunks][8], lo[kMTiles][kChunks][8];
  };
  auto load_split = [&](int slot, int stage_chunks, Fragments& f) {
    const float* stage = shared + slot * Cfg::kStageFloats;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c < stage_chunks) {
          const int row = row_base + 64 * mt;
          const float4 x0 =
              *reinterpret_cast<const float4*>(stage + stage_piece_offset<kChunks>(row, 4 * c + t));
          const float4 x1 = *reinterpret_cast<const float4*>(
              stage + stage_piece_offset<kChunks>(row + 8, 4 * c + t));
          const float v[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
          for (int i = 0; i < 8; ++i) split_tf32(v[i], f.hi[mt][c][i], f.lo[mt][c][i]);
        }
      }
    }
  };
  auto issue = [&](int slot, int stage_chunks, const Fragments& f) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c < stage_chunks) {
        const uint32_t weights_hi = shared_base + slot * kStageBytes +
                                    4 * (Cfg::kTileInputFloats + c * Cfg::kChunkWeightFloats);
        const uint32_t weights_lo = weights_hi + 4 * kN * kBlockK;
#pragma unroll
        for (int s = 0; s < 2; ++s) {
          const uint64_t b_hi = chunk_weight_descriptor<kN>(weights_hi, s);
          const uint64_t b_lo = chunk_weight_descriptor<kN>(weights_lo, s);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            split_products<kN, Cfg::kExactOperands>(acc[mt], f.hi[mt][c], f.lo[mt][c], s, b_hi,
                                                    b_lo);
          }
        }
      }
    }
  };
  auto hold = [](Fragments& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        fence_registers(f.hi[mt][c]);
        if constexpr (!Cfg::kExactOperands) fence_registers(f.lo[mt][c]);
      }
  };
  Fragments fragments[2];
  // One stage (run_stage_pairs runs them in pairs).
  auto step = [&](int it, Fragments& mine, Fragments& other) {
    const int slot = it % kSlots;
    const int stage_chunks = min(kChunks, chunks - it * kChunks);
    mbarrier_wait(full0 + 8 * slot, (it / kSlots) & 1);
    load_split(slot, stage_chunks, mine);
    fence_accumulators(acc);
    wgmma_fence();
    issue(slot, stage_chunks, mine);
    wgmma_commit();
    const int previous_slot = (it + kSlots - 1) % kSlots;
    if ((it + 1) % Cfg::kFlushStages == 0) {
      wgmma_wait<0>();
      fence_accumulators(acc);
      hold(mine);
      hold(other);
      mbarrier_arrive(empty0 + 8 * slot);
      if (it > 0) mbarrier_arrive(empty0 + 8 * previous_slot);
      add_chain(total, acc);
    } else {
      wgmma_wait<1>();  // stage it - 1's wgmmas are done with its slot and fragments
      hold(other);
      if (it > 0 && it % Cfg::kFlushStages != 0) mbarrier_arrive(empty0 + 8 * previous_slot);
    }
  };
  run_stage_pairs(stages, fragments, step);
  fence_accumulators(acc);
  add_chain(total, acc);

  // Epilogue (every stage has landed and been read).
  wgmma_store_tile<kN, kMTiles, Cfg::kBlockPositions, Cfg::kComputeThreads>(
      p, block, shared, total, ctid, row_base, group, channel0, bias, output);
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_phase_kernel(const __grid_constant__ PhaseProblem p, const float* __restrict__ staged,
                       const float* __restrict__ packed_weight, const float* __restrict__ bias,
                       float* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kN = Cfg::kN, kSlots = Cfg::kSlots, kChunks = Cfg::kChunks;
  extern __shared__ __align__(128) float shared[];
  __shared__ __align__(8) uint64_t barriers[2 * kSlots];
  const int tid = threadIdx.x;
  const int group = blockIdx.z;
  const int channel0 = blockIdx.y * kN;
  const PhaseBlock block = phase_block(p, Cfg::kBlockPositions);
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[kSlots]);
  init_slot_barriers(full0, empty0, kSlots, Cfg::kComputeThreads);
  ReductionWalk walk(p, block);
  const int chunks = walk.total_stages;  // the walk steps one chunk at a time
  const int stages = (chunks + kChunks - 1) / kChunks;

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    produce_gather_stages<Cfg>(p, block, staged, packed_weight, group, channel0, walk, chunks,
                               stages, shared_base, full0, empty0, tid);
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  compute_gather_stages_and_store<Cfg>(p, block, shared, shared_base, full0, empty0, chunks,
                                       stages, tid - 128, group, channel0, bias, output);
#endif
}

}  // namespace ct3d::cuda
