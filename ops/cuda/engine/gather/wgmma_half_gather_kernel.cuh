// The gathering implicit GEMM on float16 / bfloat16 operands (sm_90a): the problem,
// staging, reduction walk and epilogue of wgmma_kernel.cuh (float32), with the
// operands as they are. Any stride, dilation and padding (it gathers staged rows per
// phase, as the float32 mainloop does); host side in half_gather_launch.cu.
//
// Block: warpgroup 0 loads, warpgroups 1 and 2 compute kMTiles m64 tiles of phase
// positions each against the block's kN output channels. A stage is kChunks chunks
// (a chunk: one tap, 16 input channels = one k16 step):
// - the producers copy each row's chunk (2 x 16 bytes, cp.async) into the stage, the
//   pieces of a row XOR-swizzled so that ldmatrix's 8 rows of one piece fall in 8
//   different bank groups; one thread bulk-copies each chunk's packed weights
//   (half_window_weights.h's layout, kN x 32 bytes per chunk);
// - each warp loads its 16 rows of a chunk with one ldmatrix.x4 (wgmma's A registers)
//   and issues one m64nNk16 product per m-tile into float32; one stage's wgmmas stay
//   in flight while the next is loaded. The products are exact in float32 and the
//   output is rounded once, so the chain runs the whole reduction (no flushes).
// The grid is persistent: a block walks tiles (phase fastest, then row block, channel
// block, group) gridDim.x apart, its producers loading the next tile's stages while
// the compute warpgroups store the last one (a phase's reduction is as short as 2
// chunks, so a block per tile spent most of its time filling its pipeline and storing).
// The epilogue parks the tile in its own shared memory, past the stages.
#pragma once

#include "ops/cuda/engine/epilogue/wgmma_epilogue.cuh"
#include "ops/cuda/engine/gather/implicit_gemm_kernel.cuh"
#include "ops/cuda/engine/gather/wgmma_split_products.cuh"
#include "ops/cuda/engine/instructions/hopper_ptx.cuh"
#include "ops/cuda/engine/instructions/wgmma_instructions.cuh"
#include "ops/cuda/engine/staging/half_stage_layout.h"

namespace ct3d::cuda {

template <int kChannels, int kMTilesPerWarpgroup, int kChunksPerStage, class ElementType>
struct HalfGatherConfig {
  using Element = ElementType;
  using Mma = WgmmaHalf<Element, kChannels>;
  static constexpr int kN = kChannels;
  static constexpr int kMTiles = kMTilesPerWarpgroup;
  static constexpr int kChunks = kChunksPerStage;
  static constexpr int kBlockChannels = kChannels;
  static constexpr int kBlockPositions = 2 * 64 * kMTiles;
  static constexpr int kThreads = 384, kComputeThreads = 256;
  static constexpr int kPiecesPerRow = 2 * kChunks;  // 16 bytes: 8 channels
  static constexpr int kRowBytes = 16 * kPiecesPerRow;
  static constexpr int kTileInputBytes = kBlockPositions * kRowBytes;
  static constexpr int kChunkWeightBytes = kN * 32;  // 16 input channels x kN
  static constexpr int kStageBytes = kTileInputBytes + kChunks * kChunkWeightBytes;
  static constexpr int kEpilogueBytes = 4 * kN * (kBlockPositions + 4);  // wgmma_store_tile
  static constexpr int kSlotsThatFit = (220 * 1024 - kEpilogueBytes) / kStageBytes;
  static constexpr int kSlots = kSlotsThatFit < 8 ? kSlotsThatFit : 8;
  static constexpr int kSharedBytes = kSlots * kStageBytes + kEpilogueBytes;
  // Producer thread tid copies piece tid % 2 of each chunk of rows tid / 2 + 64 r.
  static constexpr int kProducerRows = kBlockPositions / 64;
  // 128 x 80 + 256 x 208 <= 64 K registers: the producers keep a tile's walk and rows
  // across the tile loop (56 spilled), the compute warpgroups need far fewer than 208.
  static constexpr int kProducerRegisters = 80;
  static constexpr int kComputeRegisters = 208;
  static_assert(kChunks == 1 || kChunks == 2, "stage chunks");
  static_assert(kSlots >= 3, "a slot computing, one in flight, one loading");
  static_assert(kN % 16 == 0 && kN <= 128, "wgmma N");
};

// A launch's tiles: x_tiles (row blocks x phases) x channel_blocks x groups.
struct HalfGatherTiles {
  unsigned x_tiles, channel_blocks;
  int64_t count;
};

struct HalfGatherTile {
  PhaseBlock block;
  int group, channel0;
};

template <class Cfg>
__device__ __forceinline__ HalfGatherTile half_gather_tile(const PhaseProblem& p,
                                                           const HalfGatherTiles& tiles,
                                                           int64_t index) {
  HalfGatherTile tile;
  const int64_t rest = index / tiles.x_tiles;
  tile.block = phase_block_at(p, Cfg::kBlockPositions,
                              static_cast<unsigned>(index - rest * tiles.x_tiles));
  tile.group = static_cast<int>(rest / tiles.channel_blocks);
  tile.channel0 = static_cast<int>(rest - int64_t{tile.group} * tiles.channel_blocks) * Cfg::kN;
  return tile;
}

// Warpgroup 0, the producers: for each of the block's tiles, stage after stage, the
// source rows' pieces of kChunks chunks (cp.async) and their packed weights (one bulk
// copy a chunk) into the next free slot.
template <class Cfg>
__device__ __forceinline__ void produce_half_gather_stages(
    const PhaseProblem& p, const HalfGatherTiles& tiles,
    const typename Cfg::Element* __restrict__ staged,
    const typename Cfg::Element* __restrict__ packed_weight, uint32_t shared_base, uint32_t full0,
    uint32_t empty0, int tid) {
  using Element = typename Cfg::Element;
  constexpr int kSlots = Cfg::kSlots, kChunks = Cfg::kChunks;
  constexpr int kPieces = Cfg::kPiecesPerRow;
  constexpr int kRows = Cfg::kProducerRows;
  const int piece = tid & 1;
  int ring = 0;  // stages loaded by this block, over all its tiles
  for (int64_t index = blockIdx.x; index < tiles.count; index += gridDim.x) {
    const HalfGatherTile tile = half_gather_tile<Cfg>(p, tiles, index);
    ReductionWalk walk(p, tile.block);
    const int chunks = walk.total_stages;
    const int stages = (chunks + kChunks - 1) / kChunks;
    const Element* row_source[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      row_source[r] = staged_row(p, tile.block, staged, tile.group, tid / 2 + 64 * r) + 8 * piece;
    }
    // The packed weights: per (tap, chunk) cout_padded x 16 values; ReductionWalk
    // counts float32's packing (cout_padded x 32 floats), twice as many elements.
    const Element* weight_source =
        packed_weight + tile.group * (p.packed_group_stride / 2) + tile.channel0 * 16;
    for (int it = 0; it < stages; ++it, ++ring) {
      const int slot = ring % kSlots;
      mbarrier_wait(empty0 + 8 * slot, ((ring / kSlots) & 1) ^ 1);
      const uint32_t stage = shared_base + slot * Cfg::kStageBytes;
      const int stage_chunks = min(kChunks, chunks - it * kChunks);
      if (tid == 0)
        mbarrier_arrive_expect_bytes(full0 + 8 * slot, stage_chunks * Cfg::kChunkWeightBytes);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c < stage_chunks) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            const int row = tid / 2 + 64 * r;
            cp_async_16(stage + half_stage_piece_offset<kPieces>(row, 2 * c + piece),
                        row_source[r] + walk.input_offset);
          }
          if (tid == 0) {
            bulk_copy(stage + Cfg::kTileInputBytes + c * Cfg::kChunkWeightBytes,
                      weight_source + walk.weight_offset / 2, Cfg::kChunkWeightBytes,
                      full0 + 8 * slot);
          }
          walk.advance();
        }
      }
      cp_async_arrive(full0 + 8 * slot);
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_half_gather_kernel(const __grid_constant__ PhaseProblem p, const HalfGatherTiles tiles,
                             const typename Cfg::Element* __restrict__ staged,
                             const typename Cfg::Element* __restrict__ packed_weight,
                             const float* __restrict__ bias,
                             typename Cfg::Element* __restrict__ output) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Element = typename Cfg::Element;
  using Mma = typename Cfg::Mma;
  constexpr int kN = Cfg::kN, kSlots = Cfg::kSlots, kMTiles = Cfg::kMTiles, kChunks = Cfg::kChunks;
  constexpr int kPieces = Cfg::kPiecesPerRow;
  constexpr int kAccumulators = Mma::kAccumulators;
  extern __shared__ __align__(128) float shared[];
  __shared__ __align__(8) uint64_t barriers[2 * kSlots];
  const int tid = threadIdx.x;
  const uint32_t shared_base = shared_address(shared);
  const uint32_t full0 = shared_address(&barriers[0]);
  const uint32_t empty0 = shared_address(&barriers[kSlots]);
  init_slot_barriers(full0, empty0, kSlots, Cfg::kComputeThreads);
  // A tile's chunks (ReductionWalk's total_stages: the walk steps one chunk at a time),
  // for the consumers, which need no walk; a stage holds kChunks of them.
  const auto chunks_of = [&](const PhaseBlock& block) {
    return block.res_d.taps * block.res_h.taps * block.res_w.taps * (p.cin_padded / kBlockK);
  };

  if (tid < 128) {
    release_registers<Cfg::kProducerRegisters>();
    produce_half_gather_stages<Cfg>(p, tiles, staged, packed_weight, shared_base, full0, empty0,
                                    tid);
    return;
  }

  claim_registers<Cfg::kComputeRegisters>();
  const int ctid = tid - 128, lane = ctid & 31;
  // ldmatrix.x4: lane L gives row L % 8 of matrix L / 8; matrices (rows 0-7, k 0-7),
  // (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15) of the warp's 16 rows
  // are wgmma's A registers in order.
  const int warp_row0 = compute_row_base<kMTiles>(ctid & ~31);
  const int lane_row = (lane & 7) + 8 * ((lane >> 3) & 1), lane_piece = lane >> 4;
  uint32_t a_offset[kMTiles][kChunks];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      a_offset[mt][c] =
          half_stage_piece_offset<kPieces>(warp_row0 + 64 * mt + lane_row, 2 * c + lane_piece);
    }
  float acc[kMTiles][kAccumulators];

  struct Fragments {
    uint32_t a[kMTiles][kChunks][4];
  };
  auto load = [&](int slot, int stage_chunks, Fragments& f) {
    const uint32_t stage = shared_base + slot * Cfg::kStageBytes;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c < stage_chunks) {
          ldmatrix_x4(f.a[mt][c], stage + a_offset[mt][c]);
        }
      }
  };
  auto issue = [&](int slot, int stage_chunks, const Fragments& f, int accumulate) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c < stage_chunks) {
        const uint64_t b = chunk_weight_descriptor<kN>(
            shared_base + slot * Cfg::kStageBytes + Cfg::kTileInputBytes +
                c * Cfg::kChunkWeightBytes,
            0);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) Mma::run(acc[mt], f.a[mt][c], b, c > 0 || accumulate);
      }
    }
  };
  auto hold = [](Fragments& f) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) fence_registers(f.a[mt][c]);
  };
  Fragments fragments[2];
  float* park = shared + kSlots * Cfg::kStageBytes / 4;  // the epilogue's own
  int ring = 0;  // stages consumed by this block, over all its tiles
  for (int64_t index = blockIdx.x; index < tiles.count; index += gridDim.x) {
    const HalfGatherTile tile = half_gather_tile<Cfg>(p, tiles, index);
    const int chunks = chunks_of(tile.block);
    const int stages = (chunks + kChunks - 1) / kChunks;
    // Stages in pairs (run_stage_pairs). The chain starts with the accumulate flag
    // off (issue's first product), not with zeroed registers.
    int accumulate = 0;
    auto step = [&](int it, Fragments& mine, Fragments& other) {
      const int slot = (ring + it) % kSlots;
      const int stage_chunks = min(kChunks, chunks - it * kChunks);
      mbarrier_wait(full0 + 8 * slot, ((ring + it) / kSlots) & 1);
      load(slot, stage_chunks, mine);
      fence_accumulators(acc);
      wgmma_fence();
      issue(slot, stage_chunks, mine, accumulate);
      accumulate = 1;
      wgmma_commit();
      wgmma_wait<1>();  // stage it - 1's wgmmas are done with its slot and fragments
      hold(other);
      if (it > 0) mbarrier_arrive(empty0 + 8 * ((ring + it + kSlots - 1) % kSlots));
    };
    run_stage_pairs(stages, fragments, step);
    fence_accumulators(acc);
    ring += stages;
    mbarrier_arrive(empty0 + 8 * ((ring + kSlots - 1) % kSlots));  // the tile's last stage

    // Epilogue (every stage of the tile has landed and been read).
    wgmma_store_tile<kN, kMTiles, Cfg::kBlockPositions, Cfg::kComputeThreads>(
        p, tile.block, park, acc, ctid, compute_row_base<kMTiles>(ctid), tile.group,
        tile.channel0, bias, output);
  }
#endif
}

}  // namespace ct3d::cuda
