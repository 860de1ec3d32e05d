#include "bench/gdn_bench_ceilings.h"

#include <cstdio>
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

}  // namespace

Ceilings MeasureCeilings(cudaStream_t s, Events& ev) {
  const size_t bytes = 2ull << 30, n = bytes / 4;
  float* src = Alloc<float>(n);
  float* dst = Alloc<float>(n);
  float* sum = Alloc<float>(1);
  BENCH_CUDA(FillUniform(src, n, 1, -1.f, 1.f, s));
  BENCH_CUDA(cudaMemsetAsync(dst, 0, bytes, s));
  std::vector<double> copy, rmw, rmw_cs, read;
  for (int i = 0; i < 12; ++i) {
    copy.push_back(ev.Time(s, [&] {
      BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
    }));
    rmw.push_back(
        ev.Time(s, [&] { BENCH_CUDA(ScaleInPlace(src, n, 1.0f, false, s)); }));
    rmw_cs.push_back(
        ev.Time(s, [&] { BENCH_CUDA(ScaleInPlace(src, n, 1.0f, true, s)); }));
    read.push_back(ev.Time(s, [&] { BENCH_CUDA(ReadSum(src, n, sum, s)); }));
  }
  Ceilings c;
  // Drop the first two of each (warm-up).
  for (auto* v : {&copy, &rmw, &rmw_cs, &read})
    v->erase(v->begin(), v->begin() + 2);
  c.copy_gbps = 2.0 * bytes / (Median(copy) * 1e-3) / 1e9;
  c.rmw_gbps = 2.0 * bytes / (Median(rmw) * 1e-3) / 1e9;
  c.rmw_cs_gbps = 2.0 * bytes / (Median(rmw_cs) * 1e-3) / 1e9;
  c.read_gbps = 1.0 * bytes / (Median(read) * 1e-3) / 1e9;
  FreeAll(src, dst, sum);
  c.mma_tf32_tflops = MeasureMmaTf32(s, ev);
  return c;
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
