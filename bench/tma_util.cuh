// Hopper (sm_90) asynchronous-copy primitives of the memory-pattern
// microbenchmarks (bench/rmw_micro.cu): mbarriers, 1-D bulk copies
// (TMA without a tensor map) between global and shared memory, Ampere-style
// cp.async with mbarrier completion, proxy fences and named barriers (L2
// cache policies: gdn/cache_policy.cuh). Thin wrappers over PTX (ISA 8.0+), so
// the kernels read as the pipeline they implement.
//
// A decode chunk is one contiguous [rows, K] fp32 block, so one bulk copy
// moves it with no registers and completion counted in bytes on an mbarrier.
// Measured (docs/benchmarks/gdn_history.md): for the in-place update these
// pipelines stay below small one-shot CTAs, so the decode kernels do not use
// them.
#ifndef ROLLOUT_BENCH_TMA_UTIL_CUH_
#define ROLLOUT_BENCH_TMA_UTIL_CUH_

#include <cuda_runtime.h>

#include <cstdint>

namespace rollout::bench {

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier --------------------------------------------------------------
__device__ __forceinline__ void MbarInit(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddr(bar)),
               "r"(count)
               : "memory");
}
// Makes initialised barriers visible to the other threads and to the async
// proxy (the copy engine signals them); follow with __syncthreads().
__device__ __forceinline__ void MbarInitFence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Adds `bytes` to the transaction count of the current phase (no arrival).
__device__ __forceinline__ void MbarExpectTx(uint64_t* bar, uint32_t bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(
          SmemAddr(bar)),
      "r"(bytes)
      : "memory");
}
// One arrival (release semantics: this thread's earlier writes are visible to
// a thread whose wait observes the phase completion).
__device__ __forceinline__ void MbarArrive(uint64_t* bar) {
  asm volatile(
      "{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::
          "r"(SmemAddr(bar))
      : "memory");
}
// One arrival once all of this thread's earlier cp.async copies have landed
// (noinc: the arrival counts against the barrier's expected count).
__device__ __forceinline__ void MbarArriveOnCpAsync(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                   SmemAddr(bar))
               : "memory");
}
// Non-blocking test of the completion of the phase with parity `parity`.
__device__ __forceinline__ bool MbarTryWait(uint64_t* bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      " selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(SmemAddr(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}
// Blocks until the phase with parity `parity` has completed (acquire).
__device__ __forceinline__ void MbarWait(uint64_t* bar, uint32_t parity) {
  while (!MbarTryWait(bar, parity)) {
  }
}

// ---- bulk copies (1-D TMA)
// --------------------------------------------------- Global -> shared, `bytes`
// (multiple of 16, both addresses 16-byte aligned); completion is counted in
// bytes on `bar`.
__device__ __forceinline__ void BulkG2S(void* smem, const void* gmem,
                                        uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
      "[%0], [%1], %2, [%3];\n" ::"r"(SmemAddr(smem)),
      "l"(gmem), "r"(bytes), "r"(SmemAddr(bar))
      : "memory");
}
__device__ __forceinline__ void BulkG2SHint(void* smem, const void* gmem,
                                            uint32_t bytes, uint64_t* bar,
                                            uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(SmemAddr(smem)),
      "l"(gmem), "r"(bytes), "r"(SmemAddr(bar)), "l"(policy)
      : "memory");
}
// Shared -> global, tracked by this thread's bulk groups.
__device__ __forceinline__ void BulkS2G(void* gmem, const void* smem,
                                        uint32_t bytes) {
  asm volatile(
      "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
          gmem),
      "r"(SmemAddr(smem)), "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void BulkS2GHint(void* gmem, const void* smem,
                                            uint32_t bytes, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], "
      "%2, %3;\n" ::"l"(gmem),
      "r"(SmemAddr(smem)), "r"(bytes), "l"(policy)
      : "memory");
}
__device__ __forceinline__ void BulkCommit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Every committed bulk group of this thread has finished reading shared
// memory (its buffer may be overwritten).
__device__ __forceinline__ void BulkWaitRead0() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// Every committed bulk group of this thread has completed (writes performed).
__device__ __forceinline__ void BulkWait0() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// Orders this thread's generic-proxy shared-memory writes before later
// async-proxy (bulk copy) reads of them.
__device__ __forceinline__ void FenceProxyAsync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// 4-byte global -> shared copy (Ampere cp.async; pairs with
// MbarArriveOnCpAsync).
__device__ __forceinline__ void CpAsync4(void* smem, const void* gmem) {
  asm volatile(
      "cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(SmemAddr(smem)),
      "l"(gmem)
      : "memory");
}

// Barrier over `threads` threads (a multiple of 32) with id 1..15 (id 0 is
// __syncthreads).
__device__ __forceinline__ void NamedBarrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_TMA_UTIL_CUH_
