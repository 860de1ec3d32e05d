#include "bench/gdn_bench_ceilings.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "bench/bench_kernels.h"
#include "bench/decode_bytes.h"
#include "gdn/dtype.h"

namespace rollout::bench {

using gdn::DType;
using nlohmann::json;

namespace {

// The tf32 tensor ceiling (bench_kernels.h), ~0.7 ms per launch.
double MeasureMmaTf32(cudaStream_t s, Events& ev) {
  constexpr int kIters = 4096;
  float* out = Alloc<float>(1);
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    t.push_back(ev.Time(s, [&] { BENCH_CUDA(MmaTf32Loop(kIters, out, s)); }));
  }
  t.erase(t.begin(), t.begin() + 2);  // warm-up
  FreeAll(out);
  return MmaTf32LoopFlops(kIters) / (Median(t) * 1e-3) / 1e12;
}

// Exits unless the copy kernel copies: dst zeroed, one CopyOneShot, then
// the first and last 64 KiB of dst equal src's (the rate it is timed at is
// a ceiling only if it moves the bytes).
void CheckCopyKernel(const float* src, float* dst, size_t n, cudaStream_t s) {
  constexpr size_t kEnd = 16384;  // floats, 64 KiB
  BENCH_CUDA(cudaMemsetAsync(dst, 0, n * sizeof(float), s));
  BENCH_CUDA(CopyOneShot(src, dst, n, s));
  // The copies below run on stream 0, which does not wait for s.
  BENCH_CUDA(cudaStreamSynchronize(s));
  for (const size_t off : {size_t{0}, n - kEnd}) {
    std::vector<float> a(kEnd), b(kEnd);
    BENCH_CUDA(cudaMemcpy(a.data(), src + off, kEnd * sizeof(float),
                          cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(b.data(), dst + off, kEnd * sizeof(float),
                          cudaMemcpyDeviceToHost));
    if (a != b) {
      std::fprintf(stderr, "gdn_bench: the copy kernel did not copy\n");
      std::exit(1);
    }
  }
}

}  // namespace

Ceilings MeasureCeilings(cudaStream_t s, Events& ev) {
  constexpr int kAllocations = 3, kRuns = 12, kWarmup = 2;
  const size_t bytes = 2ull << 30, n = bytes / 4;
  // All pairs are held at once, so that each has its own physical pages.
  std::vector<float*> src(kAllocations), dst(kAllocations);
  for (int i = 0; i < kAllocations; ++i) {
    src[i] = Alloc<float>(n);
    dst[i] = Alloc<float>(n);
    BENCH_CUDA(FillUniform(src[i], n, 1 + i, -1.f, 1.f, s));
    BENCH_CUDA(cudaMemsetAsync(dst[i], 0, bytes, s));
  }
  float* sum = Alloc<float>(1);
  CheckCopyKernel(src[0], dst[0], n, s);
  // The timed passes over allocation i: bytes moved, launch.
  struct Pass {
    double moved;
    std::function<void(int)> launch;
  };
  enum { kMemcpy, kCopyKernel, kRmw, kRmwCs, kRead, kPasses };
  const Pass passes[kPasses] = {
      {2.0 * bytes,
       [&](int i) {
         BENCH_CUDA(cudaMemcpyAsync(dst[i], src[i], bytes,
                                    cudaMemcpyDeviceToDevice, s));
       }},
      {2.0 * bytes,
       [&](int i) { BENCH_CUDA(CopyOneShot(src[i], dst[i], n, s)); }},
      {2.0 * bytes,
       [&](int i) { BENCH_CUDA(ScaleInPlace(src[i], n, 1.0f, false, s)); }},
      {2.0 * bytes,
       [&](int i) { BENCH_CUDA(ScaleInPlace(src[i], n, 1.0f, true, s)); }},
      {1.0 * bytes, [&](int i) { BENCH_CUDA(ReadSum(src[i], n, sum, s)); }}};
  // GB/s of each pass, one entry per allocation (the median of its runs).
  std::vector<double> gbps[kPasses];
  std::vector<double> copy;  // per allocation, the faster copy
  for (int i = 0; i < kAllocations; ++i) {
    std::vector<double> t[kPasses];  // ms; the passes interleaved per run
    for (int run = 0; run < kRuns; ++run) {
      for (int k = 0; k < kPasses; ++k) {
        t[k].push_back(ev.Time(s, [&] { passes[k].launch(i); }));
      }
    }
    for (int k = 0; k < kPasses; ++k) {
      t[k].erase(t[k].begin(), t[k].begin() + kWarmup);
      gbps[k].push_back(passes[k].moved / (Median(t[k]) * 1e-3) / 1e9);
    }
    copy.push_back(std::max(gbps[kMemcpy][i], gbps[kCopyKernel][i]));
  }
  for (int i = 0; i < kAllocations; ++i) FreeAll(src[i], dst[i]);
  FreeAll(sum);
  Ceilings c;
  c.copy_memcpy_gbps = gbps[kMemcpy];
  c.copy_kernel_gbps = gbps[kCopyKernel];
  c.copy_gbps = Median(copy);
  c.rmw_gbps = Median(gbps[kRmw]);
  c.rmw_cs_gbps = Median(gbps[kRmwCs]);
  c.read_gbps = Median(gbps[kRead]);
  c.mma_tf32_tflops = MeasureMmaTf32(s, ev);
  return c;
}

void PrintCeilings(const Ceilings& c) {
  std::printf(
      "ceilings: copy %.0f GB/s (per allocation, cudaMemcpyAsync / "
      "copy kernel:",
      c.copy_gbps);
  for (size_t i = 0; i < c.copy_memcpy_gbps.size(); ++i) {
    std::printf(" %.0f / %.0f", c.copy_memcpy_gbps[i], c.copy_kernel_gbps[i]);
  }
  std::printf(
      "), in-place rmw %.0f GB/s (evict-first %.0f), read-only %.0f GB/s; "
      "tensor mma.sync tf32 %.0f TFLOP/s (3xTF32 fp32 products %.0f)\n",
      c.rmw_gbps, c.rmw_cs_gbps, c.read_gbps, c.mma_tf32_tflops,
      c.mma_tf32_tflops / 3);
}

json CeilingsJson(const Ceilings& c) {
  return {{"copy", c.copy_gbps},
          {"rmw", c.rmw_gbps},
          {"rmw_evict_first", c.rmw_cs_gbps},
          {"read", c.read_gbps},
          {"copy_memcpy_by_allocation", c.copy_memcpy_gbps},
          {"copy_kernel_by_allocation", c.copy_kernel_gbps}};
}

// The largest ReplaySSM L = 16 speed-up over the packed step that the byte
// counts allow (bench/decode_bytes.h), per head shape and ring dtype: every
// step at one bandwidth, and (given ceilings) the non-flush steps at the
// read-only ceiling, the others at the copy ceiling. Printed and returned
// as JSON.
json RatioBounds(double copy_gbps, double read_gbps) {
  json j = json::array();
  std::printf(
      "ReplaySSM L = %d speed-up bounds from the byte counts (H = %d): equal "
      "bandwidth / non-flush steps at read %.0f, others at copy %.0f GB/s\n",
      kL, kH, read_gbps, copy_gbps);
  for (int HV : {16, 32, 48, 64}) {
    for (DType ring : {DType::kFp32, DType::kBf16}) {
      const bench::DecodeShape s{kH, HV};
      const int e = gdn::DTypeBytes(ring);
      const double eq = bench::ReplayRatioBound(s, kL, e);
      const double at =
          bench::ReplayRatioBoundAtCeilings(s, kL, e, copy_gbps, read_gbps);
      const char* name = gdn::DTypeName(ring);
      std::printf("  16/%-2d %s ring: %.3fx / %.3fx\n", HV, name, eq, at);
      j.push_back({{"hv", HV},
                   {"ring", name},
                   {"equal_bandwidth", eq},
                   {"at_ceilings", at}});
    }
  }
  return j;
}

Floors MeasureFloors(Runner& r) {
  constexpr int kCalls = 128;
  const size_t pool = kRotateBytes / 4;  // floats
  float* x = Alloc<float>(pool);
  float* sink = Alloc<float>(1);
  BENCH_CUDA(FillUniform(x, pool, 3, -1.f, 1.f, r.s));
  Floors f;
  f.empty1 =
      r.UsPerCall(kCalls, [&](int) { BENCH_CUDA(LaunchEmpty(1, 32, r.s)); });
  f.empty512 =
      r.UsPerCall(kCalls, [&](int) { BENCH_CUDA(LaunchEmpty(512, 64, r.s)); });
  for (const size_t mib : {2, 1}) {
    const size_t n = mib << 18, chunks = pool / n;
    (mib == 2 ? f.rmw_2mib : f.rmw_1mib) = r.UsPerCall(kCalls, [&](int i) {
      BENCH_CUDA(ScaleInPlace(x + (i % chunks) * n, n, 1.0f, false, r.s));
    });
    (mib == 2 ? f.read_2mib : f.read_1mib) = r.UsPerCall(kCalls, [&](int i) {
      BENCH_CUDA(ReadOnly(x + (i % chunks) * n, n, sink, r.s));
    });
  }
  FreeAll(x, sink);
  std::printf(
      "batch-1 floors (graph, us per call): empty kernel 1 CTA %.2f, 512 x 64 "
      "%.2f; in-place x *= c over 2 MiB %.2f, 1 MiB %.2f; read-only 2 MiB "
      "%.2f, 1 MiB %.2f (ReplaySSM L = 16 ratio at these floors: 2 MiB "
      "%.3fx, 1 MiB %.3fx)\n",
      f.empty1, f.empty512, f.rmw_2mib, f.rmw_1mib, f.read_2mib, f.read_1mib,
      Floors::RatioBound(f.rmw_2mib, f.read_2mib),
      Floors::RatioBound(f.rmw_1mib, f.read_1mib));
  return f;
}

}  // namespace rollout::bench
