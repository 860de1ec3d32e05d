// Proof that a sanitizer build really checks: each mode commits one bug (or
// its correctly synchronised twin), and canary_test.sh asserts that the
// sanitizer of the current build reports exactly the bugs and nothing else.
//
//   canary which            prints asan | tsan | tsan-full | none
//                           (tsan-full: --config=tsan_full, whose binaries
//                           load TSan-built absl and gRPC, tools/tsan_libs.sh)
//   canary loaded-libs      prints the file each of libabsl_synchronization,
//                           libgpr, libgrpc and libgrpc++ is mapped from
//   canary heap-overflow    ASan: heap-buffer-overflow
//   canary signed-overflow  UBSan: signed integer overflow
//   canary race             TSan: data race (plain int, no lock)
//   canary rollout-mutex    TSan: clean (rollout::Mutex, common/mutex.h)
//   canary absl-mutex       --config=tsan: data race reported although the
//                           code is correct: absl::Mutex from Debian's
//                           uninstrumented libabsl is invisible to TSan, which
//                           is why our code uses rollout::Mutex. If this one
//                           turns clean, libabsl has become TSan-aware.
//                           --config=tsan_full: clean (instrumented libabsl).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/mutex.h"
#include "grpcpp/grpcpp.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif

namespace {

// Volatile sinks so the optimiser keeps every bad access.
volatile int g_sink = 0;

template <typename Fn>
void TwoThreads(Fn fn) {
  std::thread a(fn);
  std::thread b(fn);
  a.join();
  b.join();
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "which") == 0) {
#if __has_feature(address_sanitizer) || defined(__SANITIZE_ADDRESS__)
    std::puts("asan");
#elif (__has_feature(thread_sanitizer) || defined(__SANITIZE_THREAD__)) && \
    defined(ROLLOUT_TSAN_INSTRUMENTED_LIBS)
    std::puts("tsan-full");
#elif __has_feature(thread_sanitizer) || defined(__SANITIZE_THREAD__)
    std::puts("tsan");
#else
    std::puts("none");
#endif
    return 0;
  }
  if (std::strcmp(mode, "loaded-libs") == 0) {
    // The call makes libgrpc++ (and through it libgrpc, libgpr) a real
    // dependency of this binary, so the loader maps them.
    std::printf("grpc version %s\n", grpc::Version().c_str());
    std::vector<std::string> maps;
    std::ifstream in("/proc/self/maps");
    for (std::string line; std::getline(in, line);) maps.push_back(line);
    for (const char* lib : {"/libabsl_synchronization.so", "/libgpr.so",
                            "/libgrpc.so", "/libgrpc++.so"}) {
      const char* where = "not-mapped";
      std::string path;
      for (const std::string& line : maps) {
        const size_t at = line.find(lib);
        if (at == std::string::npos) continue;
        path = line.substr(line.rfind(' ', at) + 1);
        where = path.c_str();
        break;
      }
      std::printf("%s %s\n", lib + 1, where);
    }
    return 0;
  }
  if (std::strcmp(mode, "heap-overflow") == 0) {
    int* a = new int[4];
    g_sink = a[argc + 2];  // argc == 2: a[4]
    delete[] a;
    return 0;
  }
  if (std::strcmp(mode, "signed-overflow") == 0) {
    int x = std::numeric_limits<int>::max() - 1;
    x += argc;  // argc == 2
    g_sink = x;
    return 0;
  }
  if (std::strcmp(mode, "race") == 0) {
    int counter = 0;
    TwoThreads([&] {
      for (int i = 0; i < 1000; ++i) ++counter;
    });
    g_sink = counter;
    return 0;
  }
  if (std::strcmp(mode, "rollout-mutex") == 0) {
    rollout::Mutex mu;
    int counter = 0;
    TwoThreads([&] {
      for (int i = 0; i < 1000; ++i) {
        rollout::MutexLock lock(&mu);
        ++counter;
      }
    });
    rollout::MutexLock lock(&mu);
    g_sink = counter;
    return 0;
  }
  if (std::strcmp(mode, "absl-mutex") == 0) {
    absl::Mutex mu;
    int counter = 0;
    TwoThreads([&] {
      for (int i = 0; i < 1000; ++i) {
        absl::MutexLock lock(&mu);
        ++counter;
      }
    });
    absl::MutexLock lock(&mu);
    g_sink = counter;
    return 0;
  }
  std::fprintf(stderr, "unknown mode '%s'\n", mode);
  return 2;
}
