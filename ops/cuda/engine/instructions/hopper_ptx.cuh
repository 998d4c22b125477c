// Thin wrappers over the Hopper (sm_90a) instructions of the wgmma mainloop:
// shared-memory matrix descriptors, the wgmma fences and groups, mbarriers,
// bulk copies and register reallocation. Compiled to nothing for other targets
// (the kernel that uses them is only launched on sm_90, from an sm_90a image).
#pragma once

#include <cstdint>

namespace ct3d::cuda {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CT3D_SM90A(...) __VA_ARGS__
#else
#define CT3D_SM90A(...)
#endif

// K-major operand without swizzle: core matrices of 8 rows x 16 bytes, the next
// one along K `leading_bytes` further, the next 8-row group `stride_bytes` further.
__device__ __forceinline__ uint64_t matrix_descriptor(uint32_t address, uint32_t leading_bytes,
                                                      uint32_t stride_bytes) {
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<uint64_t>(stride_bytes >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() {
  CT3D_SM90A(asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");)
}
__device__ __forceinline__ void wgmma_commit() {
  CT3D_SM90A(asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");)
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  CT3D_SM90A(asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");)
}

// Keeps the compiler from moving other accesses of these registers across the
// asynchronous wgmma instructions, which it cannot see running.
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&values)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(values[i])::"memory");
}
template <int kCount>
__device__ __forceinline__ void fence_registers(uint32_t (&values)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+r"(values[i])::"memory");
}

__device__ __forceinline__ void mbarrier_init(uint32_t barrier, int count) {
  CT3D_SM90A(asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(count));)
}
__device__ __forceinline__ void mbarrier_init_fence() {
  CT3D_SM90A(asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");)
}
// Waits until the barrier's phase of the given parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint32_t barrier, int parity) {
  CT3D_SM90A(asm volatile(
                 "{\n"
                 ".reg .pred done;\n"
                 "wait_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_%=;\n"
                 "}\n" ::"r"(barrier),
                 "r"(parity)
                 : "memory");)
}
__device__ __forceinline__ void mbarrier_arrive(uint32_t barrier) {
  CT3D_SM90A(
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");)
}
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(uint32_t barrier, uint32_t bytes) {
  CT3D_SM90A(asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier),
                          "r"(bytes)
                          : "memory");)
}
// Arrives on the barrier once this thread's earlier cp.async copies have landed
// (counted in the barrier's arrival count: .noinc).
__device__ __forceinline__ void cp_async_arrive(uint32_t barrier) {
  CT3D_SM90A(asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(barrier)
                          : "memory");)
}
// One contiguous copy of `bytes` (a multiple of 16) that completes on the barrier.
__device__ __forceinline__ void bulk_copy(uint32_t destination, const void* source, uint32_t bytes,
                                          uint32_t barrier) {
  CT3D_SM90A(asm volatile(
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(destination),
                 "l"(source), "r"(bytes), "r"(barrier)
                 : "memory");)
}

// One box of a 5-D tensor map (tiled mode; out-of-bounds elements read as zero) to a
// 128-byte aligned destination, completing on the barrier. Coordinates innermost first.
__device__ __forceinline__ void tensor_copy_5d(uint32_t destination, const void* tensor_map,
                                               int c0, int c1, int c2, int c3, int c4,
                                               uint32_t barrier) {
  CT3D_SM90A(asm volatile(
                 "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(destination),
                 "l"(tensor_map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(barrier)
                 : "memory");)
}

// Barrier 1 among `threads` threads (barrier 0 is __syncthreads).
__device__ __forceinline__ void named_barrier_sync(int threads) {
  asm volatile("bar.sync 1, %0;\n" ::"r"(threads) : "memory");
}

template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  CT3D_SM90A(asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));)
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  CT3D_SM90A(asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));)
}

}  // namespace ct3d::cuda
