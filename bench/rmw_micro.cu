// Memory-pattern microbenchmarks (rmw_micro.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_kernels.h"
#include "bench/rmw_micro.h"
#include "bench/tma_util.cuh"
#include "gdn/cache_policy.cuh"

namespace rollout::bench {
namespace {

// Load / store flavours of the element-wise kernels.
enum Hint : int {
  kPlain = 0,
  kLdNoAlloc = 1,     // ld.global.L1::no_allocate
  kStCs = 2,          // st.global.cs (evict-first)
  kStEvictFirst = 3,  // st.global.L2::cache_hint, evict_first policy
  kStEvictLast = 4,   // st.global.L2::cache_hint, evict_last policy
  kLdEfStEl = 5,      // loads evict_first, stores evict_last (policies)
  kLd256 = 6,         // ld.global.L2::256B (prefetch size)
  kLdNc = 7,          // ld.global.nc.L1::no_allocate
  kLdCsStCs = 8,      // ld.global.cs + st.global.cs
};

template <int kHint>
__device__ __forceinline__ float4 Ld(const float4* p, uint64_t pol) {
  float4 v;
  if constexpr (kHint == kLdNoAlloc) {
    asm volatile("ld.global.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else if constexpr (kHint == kLd256) {
    asm volatile("ld.global.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else if constexpr (kHint == kLdNc) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else if constexpr (kHint == kLdEfStEl) {
    v = gdn::LoadHint4(p, pol);
  } else if constexpr (kHint == kLdCsStCs) {
    v = __ldcs(p);
  } else {
    asm volatile("ld.global.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  }
  return v;
}

template <int kHint>
__device__ __forceinline__ void St(float4* p, float4 v, uint64_t pol) {
  if constexpr (kHint == kStCs || kHint == kLdCsStCs) {
    __stcs(p, v);
  } else if constexpr (kHint == kStEvictFirst || kHint == kStEvictLast ||
                       kHint == kLdEfStEl) {
    gdn::StoreHint4(p, v, pol);
  } else {
    asm volatile("st.global.v4.f32 [%0], {%1,%2,%3,%4};\n" ::"l"(p), "f"(v.x),
                 "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
  }
}

__device__ __forceinline__ float4 Mul4(float4 v, float c) {
  return make_float4(v.x * c, v.y * c, v.z * c, v.w * c);
}

// One-shot grid: block b covers U * blockDim consecutive float4 (thread t:
// b * U * blockDim + u * blockDim + t); all loads first, then the stores.
// y == x: in place.
template <int U, int kHint>
__global__ void OneShotKernel(const float4* x, float4* y, float c) {
  const size_t base =
      static_cast<size_t>(blockIdx.x) * blockDim.x * U + threadIdx.x;
  uint64_t pol = 0, pol_ld = 0;
  if constexpr (kHint == kStEvictFirst) pol = gdn::EvictFirstPolicy();
  if constexpr (kHint == kStEvictLast || kHint == kLdEfStEl) {
    pol = gdn::EvictLastPolicy();
  }
  if constexpr (kHint == kLdEfStEl) pol_ld = gdn::EvictFirstPolicy();
  float4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    v[u] = Ld<kHint>(x + base + u * blockDim.x, pol_ld);
#pragma unroll
  for (int u = 0; u < U; ++u)
    St<kHint>(y + base + u * blockDim.x, Mul4(v[u], c), pol);
}

// Grid-stride, 4 accesses in flight per thread (bench_kernels' ScaleKernel)
// but out of place.
__global__ void GridStrideCopyKernel(const float4* x, float4* y, size_t n4,
                                     float c) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
       i + 3 * stride < n4; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = x[i + u * stride];
#pragma unroll
    for (int u = 0; u < 4; ++u) y[i + u * stride] = Mul4(v[u], c);
  }
}

__global__ void WriteOnlyKernel(float4* y, float c) {
  const size_t base =
      static_cast<size_t>(blockIdx.x) * blockDim.x * 4 + threadIdx.x;
#pragma unroll
  for (int u = 0; u < 4; ++u)
    y[base + u * blockDim.x] = make_float4(c, c, c, c);
}

// Chunk of `chunk` bytes -> its address, through an optional permutation of
// `block`-byte blocks (like a decode's scattered slots).
__device__ __forceinline__ float4* ChunkPtr(float* x, int64_t c, int chunk,
                                            const int* perm, int cpb) {
  int64_t cc = c;
  if (perm != nullptr) cc = static_cast<int64_t>(perm[c / cpb]) * cpb + c % cpb;
  return reinterpret_cast<float4*>(reinterpret_cast<char*>(x) + cc * chunk);
}

// Keeps the calling warp busy for `cycles` clock cycles (a decode CTA's work
// between its tile's arrival and its exit); returns x changed by nothing the
// compiler can see through, so that the caller keeps the loop.
__device__ __forceinline__ float Spin(int cycles, float x) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) x += 1e-30f;
  return x;
}

// One CTA per chunk: 16-byte cp.async into shared memory, wait, scale,
// st.global from shared memory (the tile decode kernel's memory pattern).
// hint: 0 none, 1 evict-last stores, 2 evict-last loads and stores.
// ahead > 0 (slot tables only): the first CTA of each block of the table
// also prefetches into L2 the first line of the block `ahead` entries later
// (of `blocks` in the table), so that its address translation is ready
// before that block's CTAs start (the TLB question of the scattered slots).
// spin > 0: every warp stays busy for `spin` clock cycles between the tile's
// arrival and its stores (a packed step's dots and reductions).
// run > 0 (slot tables only; `blocks` rows of cpb chunks): the CTAs take the
// chunks in another order. The default (run = 0) is the decode kernels':
// a row's cpb chunks one after another. With run chunks per row piece, CTA
// b takes piece b / run of the rows in turn: row (b / run) % blocks, its
// chunk ((b / run) / blocks) * run + b % run. So run = 16 (64 KB, one
// head of 4 KB chunks) has the resident CTAs spread over ~128 rows instead
// of ~8, and run = 1 over every row.
__global__ void ChunkCpAsyncKernel(float* x, int chunk, const int* perm,
                                   int cpb, float c, int hint, int ahead = 0,
                                   int blocks = 0, int spin = 0, int run = 0) {
  extern __shared__ float4 buf[];
  int64_t cid = blockIdx.x;
  if (run > 0) {
    const int piece = static_cast<int>(blockIdx.x / run);
    const int row = piece % blocks;
    cid = static_cast<int64_t>(row) * cpb + (piece / blocks) * run +
          blockIdx.x % run;
  }
  float4* g = ChunkPtr(x, cid, chunk, perm, cpb);
  if (ahead > 0 && threadIdx.x == 0 && blockIdx.x % cpb == 0) {
    const int next = static_cast<int>(blockIdx.x / cpb) + ahead;
    if (next < blocks) {
      const float4* q =
          ChunkPtr(x, static_cast<int64_t>(next) * cpb, chunk, perm, cpb);
      asm volatile("prefetch.global.L2 [%0];\n" ::"l"(q));
    }
  }
  const int n4 = chunk / 16;
  const uint64_t pol = hint ? gdn::EvictLastPolicy() : 0;
  for (int i = threadIdx.x; i < n4; i += blockDim.x) {
    if (hint == 2) {
      gdn::CpAsync16Hint(buf + i, g + i, pol);
    } else {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                       SmemAddr(buf + i)),
                   "l"(g + i));
    }
  }
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
  if (spin > 0) c = Spin(spin, c);
  for (int i = threadIdx.x; i < n4; i += blockDim.x) {
    if (hint) {
      St<kStEvictLast>(g + i, Mul4(buf[i], c), pol);
    } else {
      g[i] = Mul4(buf[i], c);
    }
  }
}

// Read-only chunks (a non-flush ReplaySSM step's pattern): cp.async into
// shared memory, a sum kept alive by a never-taken store. spin > 0: every
// warp then stays busy for `spin` more clock cycles (a decode CTA's work
// after its tile arrived, during which it holds its shared memory with no
// bytes in flight). pieces > 0 (32 KB chunks, pieces <= 8, 16 * pieces <=
// blockDim): the CTA also reads `pieces` ring entries of 256 B, as the
// precomputed route's bv64 CTA stages its d entries: chunk c of slot
// perm[c / cpb] is v-block c % 2 of head (c % cpb) / 2, whose ring is
// [16][128] floats at ring + (slot * cpb / 2 + head) * 2048; entry j's 64
// floats of that v-block follow the chunk in shared memory.
__global__ void ChunkReadKernel(const float* x, int chunk, const int* perm,
                                int cpb, float* sink, int spin = 0,
                                const float* ring = nullptr, int pieces = 0) {
  extern __shared__ float4 rbuf[];
  const float4* g =
      ChunkPtr(const_cast<float*>(x), blockIdx.x, chunk, perm, cpb);
  const int n4 = chunk / 16;
  for (int i = threadIdx.x; i < n4; i += blockDim.x) {
    asm volatile(
        "cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(SmemAddr(rbuf + i)),
        "l"(g + i));
  }
  const int ring4 = pieces * 16;  // float4 of ring entries
  if (threadIdx.x < ring4) {
    const int c = static_cast<int>(blockIdx.x % cpb);
    const int64_t head =
        static_cast<int64_t>(perm[blockIdx.x / cpb]) * (cpb / 2) + c / 2;
    const int j = threadIdx.x / 16, q = threadIdx.x % 16;
    const float* src = ring + head * 2048 + j * 128 + (c % 2) * 64 + q * 4;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                     SmemAddr(rbuf + n4 + threadIdx.x)),
                 "l"(src));
  }
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
  float acc = 0.f;
  for (int i = threadIdx.x; i < n4 + ring4; i += blockDim.x) {
    const float4 v = rbuf[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (spin > 0) acc = Spin(spin, acc);
  if (acc == 1234.5f) *sink = acc;
}

// One CTA per chunk with bulk copies: one G2S, scale in shared memory, then
// one S2G (or st.global).
template <bool kBulkStore>
__global__ void ChunkTmaKernel(float* x, int chunk, float c) {
  extern __shared__ __align__(128) float4 tbuf[];
  __shared__ uint64_t bar;
  float4* g = ChunkPtr(x, blockIdx.x, chunk, nullptr, 1);
  if (threadIdx.x == 0) {
    MbarInit(&bar, 1);
    MbarInitFence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    MbarExpectTx(&bar, chunk);
    BulkG2S(tbuf, g, chunk, &bar);
    MbarArrive(&bar);
  }
  MbarWait(&bar, 0);
  const int n4 = chunk / 16;
  if constexpr (kBulkStore) {
    for (int i = threadIdx.x; i < n4; i += blockDim.x)
      tbuf[i] = Mul4(tbuf[i], c);
    FenceProxyAsync();
    __syncthreads();
    if (threadIdx.x == 0) {
      BulkS2G(g, tbuf, chunk);
      BulkCommit();
      BulkWaitRead0();
    }
  } else {
    for (int i = threadIdx.x; i < n4; i += blockDim.x) g[i] = Mul4(tbuf[i], c);
  }
}

// Persistent, warp-specialised pipeline (the skeleton of the persistent decode
// kernel tried in run 5, docs/benchmarks/gdn_history.md): warp 0 issues one
// bulk G2S per chunk into a ring of `stages` buffers; 4 consumer warps scale
// and store (st.global, or a bulk S2G whose buffer is released one chunk
// later).
struct PipeCfg {
  int chunk = 16384, stages = 4, cps = 2;
  bool strided = true;
  int store = 1;   // 0 st.global, 1 bulk, 2 bulk evict_first, 3 bulk evict_last
  int ldhint = 0;  // 0 none, 1 evict_first, 2 evict_last (bulk G2S)
  bool perm = false;
};

constexpr int kPipeCWarps = 4;

__global__ void __launch_bounds__(32 * (kPipeCWarps + 1), 1)
    PipeKernel(float* x, int64_t T, PipeCfg cfg, const int* perm, int cpb,
               float c) {
  extern __shared__ __align__(128) unsigned char pbuf[];
  __shared__ uint64_t full[8], empty[8];
  const int S = cfg.stages, CB = cfg.chunk, G = gridDim.x;
  int64_t lo, cnt, step;
  if (cfg.strided) {
    lo = blockIdx.x;
    step = G;
    cnt = T > lo ? (T - lo + G - 1) / G : 0;
  } else {
    lo = T * blockIdx.x / G;
    step = 1;
    cnt = T * (blockIdx.x + 1) / G - lo;
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      MbarInit(&full[s], 1);
      MbarInit(&empty[s], 1);
    }
    MbarInitFence();
  }
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (warp == 0) {
    uint64_t pol = 0;
    if (cfg.ldhint == 1) pol = gdn::EvictFirstPolicy();
    if (cfg.ldhint == 2) pol = gdn::EvictLastPolicy();
    for (int64_t i0 = 0; i0 < cnt; i0 += 32) {
      // Block indices of 32 chunks at once (one latency per batch).
      const int64_t li = i0 + lane;
      int64_t my = 0;
      if (li < cnt) {
        const int64_t ch = lo + li * step;
        my = cfg.perm ? static_cast<int64_t>(perm[ch / cpb]) * cpb + ch % cpb
                      : ch;
      }
      const int batch = static_cast<int>(cnt - i0 < 32 ? cnt - i0 : 32);
      for (int l = 0; l < batch; ++l) {
        const int64_t cc = __shfl_sync(0xffffffffu, my, l);
        const int64_t i = i0 + l;
        const int s = static_cast<int>(i % S);
        if (lane == 0) {
          if (i >= S)
            MbarWait(&empty[s], static_cast<uint32_t>((i / S - 1) & 1));
          MbarExpectTx(&full[s], CB);
          const char* src = reinterpret_cast<const char*>(x) + cc * CB;
          if (cfg.ldhint) {
            BulkG2SHint(pbuf + s * CB, src, CB, &full[s], pol);
          } else {
            BulkG2S(pbuf + s * CB, src, CB, &full[s]);
          }
          MbarArrive(&full[s]);
        }
      }
    }
    return;
  }
  const int tc = threadIdx.x - 32, nct = 32 * kPipeCWarps;
  uint64_t spol = 0;
  if (cfg.store == 2) spol = gdn::EvictFirstPolicy();
  if (cfg.store == 3) spol = gdn::EvictLastPolicy();
  int pend = -1;
  for (int64_t i = 0; i < cnt; ++i) {
    const int s = static_cast<int>(i % S);
    const int64_t ch = lo + i * step;
    float4* g = ChunkPtr(x, ch, CB, cfg.perm ? perm : nullptr, cpb);
    if (tc == 0 && pend >= 0) {
      BulkWaitRead0();
      MbarArrive(&empty[pend]);
      pend = -1;
    }
    MbarWait(&full[s], static_cast<uint32_t>((i / S) & 1));
    float4* b = reinterpret_cast<float4*>(pbuf + s * CB);
    const int n4 = CB / 16;
    if (cfg.store == 0) {
      for (int j = tc; j < n4; j += nct) g[j] = Mul4(b[j], c);
      NamedBarrier(1, nct);
      if (tc == 0) MbarArrive(&empty[s]);
    } else {
      for (int j = tc; j < n4; j += nct) b[j] = Mul4(b[j], c);
      FenceProxyAsync();
      NamedBarrier(1, nct);
      if (tc == 0) {
        if (cfg.store == 1) {
          BulkS2G(g, b, CB);
        } else {
          BulkS2GHint(g, b, CB, spol);
        }
        BulkCommit();
        pend = s;
      }
    }
  }
  if (tc == 0 && pend >= 0) BulkWait0();
}

#define CKM(x)                                                                 \
  do {                                                                         \
    const cudaError_t e_ = (x);                                                \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "rmw_micro %s:%d %s: %s\n", __FILE__, __LINE__, #x, \
                   cudaGetErrorString(e_));                                    \
      cudaGetLastError();                                                      \
      return {};                                                               \
    }                                                                          \
  } while (0)

}  // namespace

std::vector<MicroResult> RunRmwMicro(cudaStream_t s, size_t bytes, int reps) {
  const size_t n4 = bytes / 16;
  float* x = nullptr;
  float* y = nullptr;
  float* sum = nullptr;
  int* perm = nullptr;
  CKM(cudaMalloc(&x, bytes));
  CKM(cudaMalloc(&y, bytes));
  CKM(cudaMalloc(&sum, 4));
  CKM(FillUniform(x, bytes / 4, 3, -1.f, 1.f, s));
  CKM(cudaMemsetAsync(y, 0, bytes, s));
  // Slot-like blocks of 2 MiB in a random order.
  constexpr int kBlock = 2 << 20;
  const int nblocks = static_cast<int>(bytes / kBlock);
  {
    std::vector<int> h(nblocks);
    std::iota(h.begin(), h.end(), 0);
    std::mt19937 rng(7);
    std::shuffle(h.begin(), h.end(), rng);
    CKM(cudaMalloc(&perm, nblocks * sizeof(int)));
    CKM(cudaMemcpy(perm, h.data(), nblocks * sizeof(int),
                   cudaMemcpyHostToDevice));
  }
  int dev = 0, sms = 132, max_smem = 0;
  CKM(cudaGetDevice(&dev));
  CKM(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CKM(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             dev));
  // The opt-in limit covers static + dynamic shared memory.
  auto opt_in = [&](const void* fn) {
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, fn);
    if (e == cudaSuccess) {
      e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               max_smem - static_cast<int>(fa.sharedSizeBytes));
    }
    return e;
  };
  CKM(opt_in(reinterpret_cast<const void*>(PipeKernel)));
  CKM(opt_in(reinterpret_cast<const void*>(ChunkCpAsyncKernel)));
  CKM(opt_in(reinterpret_cast<const void*>(ChunkReadKernel)));
  CKM(opt_in(reinterpret_cast<const void*>(ChunkTmaKernel<true>)));
  CKM(opt_in(reinterpret_cast<const void*>(ChunkTmaKernel<false>)));
  cudaEvent_t e0, e1;
  CKM(cudaEventCreate(&e0));
  CKM(cudaEventCreate(&e1));
  std::vector<MicroResult> out;
  const float c = 1.0f;
  auto run = [&](const std::string& name, double moved,
                 const std::function<void()>& fn) {
    MicroResult r;
    r.name = name;
    fn();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      cudaEventRecord(e0, s);
      fn();
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms = 0.f;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms);
    }
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    std::sort(t.begin(), t.end());
    r.ms = t[t.size() / 2];
    r.gbps = moved / (r.ms * 1e-3) / 1e9;
    r.ok = err == cudaSuccess;
    std::printf("micro %-34s %8.3f ms %7.0f GB/s%s\n", name.c_str(), r.ms,
                r.gbps, r.ok ? "" : cudaGetErrorString(err));
    std::fflush(stdout);
    out.push_back(r);
  };
  const double rw = 2.0 * bytes;
  float4* x4 = reinterpret_cast<float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);

  // ---- ceilings
  run("copy_memcpy", rw,
      [&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s); });
  run("read_sum", 1.0 * bytes, [&] { ReadSum(x, bytes / 4, sum, s); });
  run("write_os4_t256", 1.0 * bytes,
      [&] { WriteOnlyKernel<<<n4 / 1024, 256, 0, s>>>(y4, c); });
  run("copy_os1_t128", rw,
      [&] { OneShotKernel<1, kPlain><<<n4 / 128, 128, 0, s>>>(x4, y4, c); });
  run("copy_os4_t256", rw,
      [&] { OneShotKernel<4, kPlain><<<n4 / 1024, 256, 0, s>>>(x4, y4, c); });
  run("copy_gs4", rw,
      [&] { GridStrideCopyKernel<<<sms * 8, 256, 0, s>>>(x4, y4, n4, c); });
  // ---- in place, element-wise
  run("rmw_gs4", rw, [&] { ScaleInPlace(x, bytes / 4, c, false, s); });
  run("rmw_gs4_cs", rw, [&] { ScaleInPlace(x, bytes / 4, c, true, s); });
#define OS(U, T, H, NAME) \
  run(NAME, rw,           \
      [&] { OneShotKernel<U, H><<<n4 / ((U) * (T)), T, 0, s>>>(x4, x4, c); })
  OS(1, 128, kPlain, "rmw_os1_t128");
  OS(1, 256, kPlain, "rmw_os1_t256");
  OS(1, 512, kPlain, "rmw_os1_t512");
  OS(2, 128, kPlain, "rmw_os2_t128");
  OS(4, 128, kPlain, "rmw_os4_t128");
  OS(4, 256, kPlain, "rmw_os4_t256");
  OS(8, 128, kPlain, "rmw_os8_t128");
  OS(4, 256, kLdNoAlloc, "rmw_os4_t256_ldnoalloc");
  OS(4, 256, kStCs, "rmw_os4_t256_stcs");
  OS(4, 256, kStEvictFirst, "rmw_os4_t256_st_ef");
  OS(4, 256, kStEvictLast, "rmw_os4_t256_st_el");
  OS(4, 256, kLdEfStEl, "rmw_os4_t256_ld_ef_st_el");
  OS(4, 256, kLd256, "rmw_os4_t256_ld256");
  OS(4, 256, kLdNc, "rmw_os4_t256_ldnc");
  OS(4, 256, kLdCsStCs, "rmw_os4_t256_cs_cs");
  OS(1, 128, kStEvictFirst, "rmw_os1_t128_st_ef");
  OS(1, 128, kLd256, "rmw_os1_t128_ld256");
  OS(1, 128, kStCs, "rmw_os1_t128_stcs");
#undef OS
  // ---- one CTA per chunk (decode tile pattern)
  // perm: 0 linear, 1 scattered 2 MiB blocks, 2 identity table (the
  // indirection's latency without the scatter).
  int* ident = nullptr;
  {
    std::vector<int> h(nblocks);
    std::iota(h.begin(), h.end(), 0);
    CKM(cudaMalloc(&ident, nblocks * sizeof(int)));
    CKM(cudaMemcpy(ident, h.data(), nblocks * sizeof(int),
                   cudaMemcpyHostToDevice));
  }
  static const char* kPerm[] = {"", "_perm", "_permid"};
  static const char* kHint[] = {"", "_stel", "_ldel_stel"};
  auto table = [&](int use_perm) -> const int* {
    return use_perm == 1 ? perm : use_perm == 2 ? ident : nullptr;
  };
  auto chunk_cp = [&](int chunk, int threads, int use_perm, int hint) {
    const std::string name =
        "rmw_chunk_cpasync_" + std::to_string(chunk >> 10) + "k_t" +
        std::to_string(threads) + kPerm[use_perm] + kHint[hint];
    run(name, rw, [&] {
      ChunkCpAsyncKernel<<<static_cast<unsigned>(bytes / chunk), threads, chunk,
                           s>>>(x, chunk, table(use_perm), kBlock / chunk, c,
                                hint);
    });
  };
  chunk_cp(2048, 128, 0, 0);
  chunk_cp(4096, 64, 0, 0);
  chunk_cp(4096, 128, 0, 0);
  chunk_cp(8192, 128, 0, 0);
  chunk_cp(16384, 128, 0, 0);
  chunk_cp(32768, 128, 0, 0);
  chunk_cp(2048, 128, 1, 0);
  chunk_cp(4096, 64, 1, 0);
  chunk_cp(4096, 128, 1, 0);
  chunk_cp(4096, 64, 2, 0);
  chunk_cp(4096, 128, 2, 0);
  chunk_cp(16384, 128, 1, 0);
  chunk_cp(4096, 64, 1, 1);
  chunk_cp(4096, 64, 1, 2);
  chunk_cp(4096, 128, 1, 2);
  chunk_cp(16384, 128, 1, 2);
  // ---- The decode steps' memory patterns at the benchmark's step sizes:
  // `batch` slots of `slot_mib` MiB (16/16 heads: 1 MiB per slot, 16/32:
  // 2 MiB), the slots a random permutation of all the buffer's (or in order:
  // "contig"), one launch per step, the steps rotating over the buffer, timed
  // as a graph of back-to-back launches (gdn_bench's method). "rmw": the
  // packed step's 4 KB chunks from 64 threads, evict-last loads and stores
  // (the bv8 tile); "read": a non-flush ReplaySSM step's 32 KB chunks from
  // 128 threads, read only (the bv64 tile). What a pattern alone reaches
  // bounds the kernel's share of copy (read) bandwidth at that batch.
  for (const int slot_mib : {1, 2}) {
    const int64_t slot = static_cast<int64_t>(slot_mib) << 20;
    const int nslots = static_cast<int>(bytes / slot);
    std::vector<int> order(nslots);
    std::iota(order.begin(), order.end(), 0);
    int* contig = nullptr;
    int* scatter = nullptr;
    // The read lines' ring entries (ChunkReadKernel): [16][128] floats for
    // every 64 KB head of every slot, bytes / 8 in all.
    float* ring = nullptr;
    CKM(cudaMalloc(&ring, bytes / 8));
    CKM(cudaMemset(ring, 0, bytes / 8));
    CKM(cudaMalloc(&contig, nslots * sizeof(int)));
    CKM(cudaMemcpy(contig, order.data(), nslots * sizeof(int),
                   cudaMemcpyHostToDevice));
    std::mt19937 rng(11 + slot_mib);
    std::shuffle(order.begin(), order.end(), rng);
    CKM(cudaMalloc(&scatter, nslots * sizeof(int)));
    CKM(cudaMemcpy(scatter, order.data(), nslots * sizeof(int),
                   cudaMemcpyHostToDevice));
    // 1 MiB slots scattered in pairs: consecutive table entries share a
    // 2 MiB page (half as many pages per step as "scattered", the same
    // scatter of the 2 MiB slots).
    int* pairs = nullptr;
    if (slot_mib == 1) {
      std::vector<int> pr(nslots / 2);
      std::iota(pr.begin(), pr.end(), 0);
      std::shuffle(pr.begin(), pr.end(), rng);
      std::vector<int> t(nslots);
      for (int i = 0; i < nslots / 2; ++i) {
        t[2 * i] = 2 * pr[i];
        t[2 * i + 1] = 2 * pr[i] + 1;
      }
      CKM(cudaMalloc(&pairs, nslots * sizeof(int)));
      CKM(cudaMemcpy(pairs, t.data(), nslots * sizeof(int),
                     cudaMemcpyHostToDevice));
    }
    constexpr int kCalls = 32;
    // A graph of kCalls steps; launch(t) issues the step of slot table t.
    auto steps = [&](const std::string& name, int batch, const int* table,
                     double moved_per_step,
                     const std::function<void(const int*)>& launch) {
      const int sets = nslots / batch;
      cudaGraphExec_t exec;
      const cudaError_t e = CaptureGraph(
          s,
          [&] {
            for (int i = 0; i < kCalls; ++i) {
              launch(table + (i % sets) * batch);
            }
          },
          &exec);
      if (e != cudaSuccess) return e;
      run(name, moved_per_step * kCalls, [&] { cudaGraphLaunch(exec, s); });
      std::printf("micro %-34s %8.2f us per step\n", name.c_str(),
                  out.back().ms * 1e3 / kCalls);
      return cudaGraphExecDestroy(exec);
    };
    const std::string tag = std::to_string(slot_mib) + "m_b";
    // A pattern's line variant: its dynamic shared memory (fewer CTAs per
    // SM) and clock cycles of work per warp after the data arrived.
    struct PatternVariant {
      const char* suffix;
      int smem, spin;
      int pieces;  // read lines: ring entries of 256 B per CTA
    };
    for (const int batch : {128, 256, 512, 1024}) {
      if (nslots / batch < 1) continue;
      for (const bool scattered : {true, false}) {
        if (!scattered && batch != 256) continue;
        constexpr int kChunk = 4096;
        const int cpb = static_cast<int>(slot / kChunk);
        // One line of the packed step's pattern (4 KB chunks from 64
        // threads, evict-last) over slot table `table`.
        auto rmw_line = [&](const std::string& suffix, const int* table,
                            int smem, int ahead, int spin, int run = 0) {
          return steps(
              "rmw_slots_" + tag + std::to_string(batch) + suffix, batch, table,
              2.0 * batch * slot, [&](const int* t) {
                ChunkCpAsyncKernel<<<static_cast<unsigned>(batch * cpb), 64,
                                     smem, s>>>(x, kChunk, t, cpb, c, 2, ahead,
                                                batch, spin, run);
              });
        };
        CKM(rmw_line(scattered ? "" : "_contig", scattered ? scatter : contig,
                     kChunk, 0, 0));
        if (!scattered || (batch != 256 && batch != 1024)) continue;
        // The TLB question: translations prefetched `ahead` slots early, and
        // (1 MiB) the slots scattered in 2 MiB pairs.
        for (const int ahead : {4, 16, 64}) {
          CKM(rmw_line("_pf" + std::to_string(ahead), scatter, kChunk, ahead,
                       0));
        }
        // The packed step's gap to this pattern (2.5-3 points of copy at
        // B >= 256, run 76): "_occ16" holds the packed bv8 kernel's 16 CTAs
        // per SM (its registers) by shared memory, "_s400" adds 400 clock
        // cycles of work per warp between the tile's arrival and its stores.
        static const PatternVariant kRmwVariants[] = {
            {"_occ16", 13312, 0},
            {"_s400", kChunk, 400},
            {"_occ16_s400", 13312, 400}};
        for (const PatternVariant& rv : kRmwVariants) {
          CKM(rmw_line(rv.suffix, scatter, rv.smem, 0, rv.spin));
        }
        if (pairs != nullptr) CKM(rmw_line("_pairs", pairs, kChunk, 0, 0));
        // Is the scatter's cost the few rows the resident CTAs share (~8
        // slots of scattered addresses at a time)? The same chunks, taken
        // head by head across ~128 rows ("_run16") or chunk by chunk across
        // every row ("_run1").
        CKM(rmw_line("_run16", scatter, kChunk, 0, 0, 16));
        CKM(rmw_line("_run1", scatter, kChunk, 0, 0, 1));
      }
      constexpr int kReadChunk = 32768;
      const int rcpb = static_cast<int>(slot / kReadChunk);
      // The non-flush step's gap to this pattern (16/16 B = 128: ~14 %,
      // runs 74-78): occupancy and the CTA's work after its tile arrived.
      // "_occ5": shared memory as the fused route's staged bv64 kernel
      // (44032 B: five CTAs per SM, the pattern alone six); "_sN": N clock
      // cycles of work per warp after the tile arrived; "_ring7": each CTA
      // also reads 7 ring entries of 256 B (a cycle's mean over the
      // non-flush cursors 0-14: the d entries the precomputed route
      // stages), its bytes counted.
      static const PatternVariant kReadVariants[] = {
          {"", kReadChunk, 0, 0},
          {"_occ5", 44032, 0, 0},
          {"_s1000", kReadChunk, 1000, 0},
          {"_occ5_s1000", 44032, 1000, 0},
          {"_occ5_s3000", 44032, 3000, 0},
          {"_ring7", kReadChunk + 7 * 256, 0, 7},
          {"_occ5_s1000_ring7", 44032, 1000, 7}};
      for (const PatternVariant& rv : kReadVariants) {
        const bool variant = rv.smem != kReadChunk || rv.spin != 0;
        if (variant && batch != 128 && batch != 1024) continue;
        const double ring_bytes = 256.0 * rv.pieces * batch * rcpb;
        CKM(steps("read_slots_" + tag + std::to_string(batch) + rv.suffix,
                  batch, scatter, 1.0 * batch * slot + ring_bytes,
                  [&](const int* t) {
                    ChunkReadKernel<<<static_cast<unsigned>(batch * rcpb), 128,
                                      rv.smem, s>>>(x, kReadChunk, t, rcpb, sum,
                                                    rv.spin, ring, rv.pieces);
                  }));
      }
    }
    CKM(cudaFree(contig));
    CKM(cudaFree(scatter));
    CKM(cudaFree(ring));
    if (pairs != nullptr) CKM(cudaFree(pairs));
  }
  auto chunk_rd = [&](int chunk, int threads, int use_perm) {
    const std::string name = "read_chunk_cpasync_" +
                             std::to_string(chunk >> 10) + "k_t" +
                             std::to_string(threads) + kPerm[use_perm];
    run(name, 1.0 * bytes, [&] {
      ChunkReadKernel<<<static_cast<unsigned>(bytes / chunk), threads, chunk,
                        s>>>(x, chunk, table(use_perm), kBlock / chunk, sum);
    });
  };
  chunk_rd(4096, 128, 1);
  chunk_rd(8192, 128, 1);
  chunk_rd(16384, 128, 1);
  chunk_rd(32768, 128, 1);
  chunk_rd(65536, 256, 1);
  auto chunk_tma = [&](int chunk, bool bulk_store) {
    const std::string name = "rmw_chunk_tma_" + std::to_string(chunk >> 10) +
                             "k" + (bulk_store ? "_s2g" : "_stg");
    run(name, rw, [&] {
      if (bulk_store) {
        ChunkTmaKernel<true>
            <<<static_cast<unsigned>(bytes / chunk), 128, chunk, s>>>(x, chunk,
                                                                      c);
      } else {
        ChunkTmaKernel<false>
            <<<static_cast<unsigned>(bytes / chunk), 128, chunk, s>>>(x, chunk,
                                                                      c);
      }
    });
  };
  chunk_tma(4096, true);
  chunk_tma(16384, true);
  chunk_tma(32768, true);
  chunk_tma(16384, false);
  // ---- persistent pipeline (the run-5 persistent decode kernel's pattern)
  auto pipe = [&](PipeCfg cfg) {
    int fit = 0;
    const int smem = cfg.stages * cfg.chunk;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, PipeKernel,
                                                  32 * (kPipeCWarps + 1), smem);
    const int cps = std::max(1, std::min(cfg.cps, fit));
    static const char* kStore[] = {"stg", "s2g", "s2g_ef", "s2g_el"};
    const std::string name =
        "rmw_pipe_" + std::to_string(cfg.chunk >> 10) + "k_s" +
        std::to_string(cfg.stages) + "_c" + std::to_string(cps) +
        (cfg.strided ? "_str_" : "_con_") + kStore[cfg.store] +
        (cfg.ldhint == 1   ? "_ldef"
         : cfg.ldhint == 2 ? "_ldel"
                           : "") +
        (cfg.perm ? "_perm" : "");
    const int64_t T = static_cast<int64_t>(bytes / cfg.chunk);
    run(name, rw, [&] {
      PipeKernel<<<sms * cps, 32 * (kPipeCWarps + 1), smem, s>>>(
          x, T, cfg, perm, kBlock / cfg.chunk, c);
    });
  };
  auto P = [](int chunk, int stages, int cps) {
    PipeCfg p;
    p.chunk = chunk;
    p.stages = stages;
    p.cps = cps;
    return p;
  };
  // (Call 2 swept stages 2-8, 1-4 CTAs/SM, 4-64 KB chunks, both orders and
  // store paths, L2 hints: 88-95.6 % of copy; these three are kept.)
  pipe(P(16384, 4, 2));
  pipe(P(4096, 8, 4));
  {
    PipeCfg p = P(16384, 4, 2);
    p.ldhint = 2;
    pipe(p);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(x);
  cudaFree(y);
  cudaFree(sum);
  cudaFree(perm);
  cudaFree(ident);
  return out;
}

}  // namespace rollout::bench
