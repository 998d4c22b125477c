// Thin wrappers over the PTX instructions the implicit GEMMs need: asynchronous
// global-to-shared copies (cp.async) and the pipeline that drives them, and the
// TF32 tensor-core product (mma.sync), and ldmatrix for the 16-bit operands.
#pragma once

#include <cstdint>

namespace ct3d::cuda {

__device__ __forceinline__ uint32_t shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// The first 128-byte boundary of shared memory at or after `pointer`.
__device__ __forceinline__ float* align_shared_128(float* pointer) {
  return pointer + ((128 - (shared_address(pointer) & 127)) & 127) / 4;
}

// Copies 16 bytes, bypassing L1 (.cg). Also for the input rows that neighbouring
// taps re-read: L1 caught under 10 % of them, and caching them (.ca) cost 2-14 %
// (L1 throughput was the limit on L1-58).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

// Copies 16 bytes when `copy` holds, else writes 16 zero bytes (src-size 0 reads
// nothing; src must still be a valid address).
__device__ __forceinline__ void cp_async_16_or_zero(uint32_t dst, const void* src, bool copy) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(copy ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPendingGroups>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPendingGroups));
}

// A kStages-deep cp.async pipeline over `stages` stages, shared by the engine's
// mainloops: while stage it is computed, stages it+1 .. it+kStages-1 are in
// flight. load(slot) issues one stage's copies into a shared-memory slot,
// compute(slot, it) consumes one. One commit per iteration, empty or not, keeps the
// group count that cp.async.wait_group relies on. Returns with every copy landed.
template <int kStages, class Load, class Compute>
__device__ __forceinline__ void run_cp_async_pipeline(int stages, Load&& load, Compute&& compute) {
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < stages) load(s);
    cp_async_commit();
  }
  int load_slot = kStages - 1, compute_slot = 0;
  for (int it = 0; it < stages; ++it) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage it is visible, and every warp is done with stage it-1
    if (it + kStages - 1 < stages) load(load_slot);
    cp_async_commit();
    compute(compute_slot, it);
    load_slot = load_slot == kStages - 1 ? 0 : load_slot + 1;
    compute_slot = compute_slot == kStages - 1 ? 0 : compute_slot + 1;
  }
  cp_async_wait<0>();
}

// Four 8 x 8 matrices of 16-bit values from shared memory (ldmatrix.x4): lane L gives
// the address of row L % 8 of matrix L / 8 (16 bytes); lane (g = L / 4, t = L % 4)
// receives in r[j] matrix j's row g, columns 2t and 2t + 1 (the mma / wgmma A fragment
// layout). The .trans form gives instead column g, rows 2t and 2t + 1.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// The nearest TF32 value (ties away from zero). x - round_to_tf32(x) is exact in
// float32 and 2^-11 times smaller than x, so the tensor core, which reads only
// the TF32 bits of an operand, loses nothing that matters from it.
__device__ __forceinline__ float round_to_tf32(float x) {
  uint32_t rounded;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(rounded) : "f"(x));
  return __uint_as_float(rounded);
}

// D = A * B + D for one 16x8x8 TF32 tile, accumulated in float32.
__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const uint32_t (&a)[4],
                                                const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace ct3d::cuda
