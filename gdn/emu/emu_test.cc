// The emulator's own semantics (emu.h), on small kernels written as CUDA:
// barriers, every shuffle form, cp.async groups and their NaN fill, shared
// memory (fresh in every block), the thread order, the launch checks, exited
// threads and deadlock detection, and the guarded device memory
// (device_memory.h) with its check of programmatic dependent launch.
#include "gdn/emu/emu.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "gdn/ptx_ops.cuh"
#include "gtest/gtest.h"

namespace {

// Block sum of x[0 .. blockDim.x) by warp shuffles and a shared array, as
// GPU code writes it; one sum per block.
__global__ void BlockSum(const float* x, float* out) {
  GDN_SHARED(float, warp_sums, [32]);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(~0u, v, off);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) {
      s += warp_sums[w];
    }
    out[blockIdx.x] = s;
  }
}

TEST(EmuTest, BlockSumWithShufflesAndSharedMemory) {
  constexpr int kBlocks = 5, kThreads = 256;
  std::vector<float> x(kBlocks * kThreads);
  std::iota(x.begin(), x.end(), 0.f);
  std::vector<float> out(kBlocks, -1.f);
  ASSERT_EQ(
      GDN_LAUNCH(BlockSum, kBlocks, kThreads, 0, nullptr, x.data(), out.data()),
      cudaSuccess);
  for (int b = 0; b < kBlocks; ++b) {
    const float want = std::accumulate(x.begin() + b * kThreads,
                                       x.begin() + (b + 1) * kThreads, 0.f);
    EXPECT_EQ(out[b], want) << "block " << b;
  }
}

// Each shuffle form with a width of 8 and of 32: out[form][lane].
__global__ void Shuffles(int* out) {
  const int lane = threadIdx.x;
  const int v = 100 + lane;
  out[0 * 32 + lane] = __shfl_sync(~0u, v, 5);
  out[1 * 32 + lane] = __shfl_sync(~0u, v, 5, 8);
  out[2 * 32 + lane] = __shfl_xor_sync(~0u, v, 3);
  out[3 * 32 + lane] = __shfl_xor_sync(~0u, v, 9, 8);
  out[4 * 32 + lane] = __shfl_down_sync(~0u, v, 3);
  out[5 * 32 + lane] = __shfl_down_sync(~0u, v, 3, 8);
  out[6 * 32 + lane] = __shfl_up_sync(~0u, v, 2);
  out[7 * 32 + lane] = __shfl_up_sync(~0u, v, 2, 8);
}

TEST(EmuTest, ShuffleFormsFollowCudaSemantics) {
  std::vector<int> out(8 * 32, -1);
  ASSERT_EQ(GDN_LAUNCH(Shuffles, 1, 32, 0, nullptr, out.data()), cudaSuccess);
  for (int l = 0; l < 32; ++l) {
    const int base8 = l & ~7;
    EXPECT_EQ(out[0 * 32 + l], 105) << l;
    EXPECT_EQ(out[1 * 32 + l], 100 + base8 + 5) << l;
    EXPECT_EQ(out[2 * 32 + l], 100 + (l ^ 3)) << l;
    // xor 9 leaves an 8-lane segment: a later segment gives the own value,
    // an earlier one its lane.
    const int x9 = l ^ 9;
    EXPECT_EQ(out[3 * 32 + l], (x9 & ~7) > base8 ? 100 + l : 100 + x9) << l;
    EXPECT_EQ(out[4 * 32 + l], l + 3 < 32 ? 100 + l + 3 : 100 + l) << l;
    EXPECT_EQ(out[5 * 32 + l], l + 3 < base8 + 8 ? 100 + l + 3 : 100 + l) << l;
    EXPECT_EQ(out[6 * 32 + l], l >= 2 ? 100 + l - 2 : 100 + l) << l;
    EXPECT_EQ(out[7 * 32 + l], l - 2 >= base8 ? 100 + l - 2 : 100 + l) << l;
  }
}

// cp.async of two groups: before any wait the destination is NaN; after
// wait_group 1 the first group has landed, the second not; after wait_group 0
// both. Reported per thread as 0 (as expected) or 1.
__global__ void AsyncCopies(const float* src, int* bad) {
  GDN_DYNAMIC_SHARED(float, sm);
  const int t = threadIdx.x;
  float* a = sm + 8 * t;
  float* b = sm + 8 * t + 4;
  gdn_emu::CpAsync(a, src + 8 * t, 16);
  gdn_emu::CpAsyncCommit();
  gdn_emu::CpAsync(b, src + 8 * t + 4, 16);
  gdn_emu::CpAsyncCommit();
  int wrong = std::isnan(a[0]) && std::isnan(b[3]) ? 0 : 1;
  gdn_emu::CpAsyncWaitGroup(1);
  wrong |= a[2] == src[8 * t + 2] && std::isnan(b[0]) ? 0 : 1;
  gdn_emu::CpAsyncWaitGroup(0);
  wrong |= b[1] == src[8 * t + 5] ? 0 : 1;
  bad[t] = wrong;
}

TEST(EmuTest, AsyncCopiesLandWhenTheirGroupIsRetired) {
  constexpr int kThreads = 64;
  std::vector<float> src(8 * kThreads);
  std::iota(src.begin(), src.end(), 1.f);
  std::vector<int> bad(kThreads, -1);
  ASSERT_EQ(GDN_LAUNCH(AsyncCopies, 1, kThreads, 8 * kThreads * 4, nullptr,
                       src.data(), bad.data()),
            cudaSuccess);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

// Shared memory read before anything wrote it.
__global__ void ReadFreshShared(uint32_t* out) {
  GDN_DYNAMIC_SHARED(uint32_t, sm);
  out[blockIdx.x] = sm[threadIdx.x];
  __syncthreads();
  sm[threadIdx.x] = 7;  // must not reach the next block
}

TEST(EmuTest, EveryBlockStartsWithPoisonedDynamicSharedMemory) {
  std::vector<uint32_t> out(3, 0);
  ASSERT_EQ(GDN_LAUNCH(ReadFreshShared, 3, 32, 128, nullptr, out.data()),
            cudaSuccess);
  for (uint32_t v : out) EXPECT_EQ(v, 0xffffffffu);
}

// Half of each warp returns early; the others still meet at the barriers.
__global__ void EarlyExit(int* out) {
  if (threadIdx.x % 2 == 1) return;
  __syncthreads();
  const int v = __shfl_sync(~0u, static_cast<int>(threadIdx.x), 0);
  out[threadIdx.x] = v;
}

TEST(EmuTest, ExitedThreadsLeaveTheBarriers) {
  std::vector<int> out(64, -1);
  ASSERT_EQ(GDN_LAUNCH(EarlyExit, 1, 64, 0, nullptr, out.data()), cudaSuccess);
  for (int t = 0; t < 64; t += 2) EXPECT_EQ(out[t], t < 32 ? 0 : 32) << t;
}

// Lanes 0-15 shuffle while lanes 16-31 wait at __syncthreads: a deadlock.
__global__ void Diverged(int* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = __shfl_sync(~0u, 1, 0);
  } else {
    __syncthreads();
  }
}

TEST(EmuTest, DeadlockFailsTheLaunch) {
  std::vector<int> out(32, 0);
  EXPECT_EQ(GDN_LAUNCH(Diverged, 1, 32, 0, nullptr, out.data()),
            cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // read and cleared
  // The emulator is usable again.
  std::vector<int> ok(8 * 32, 0);
  EXPECT_EQ(GDN_LAUNCH(Shuffles, 1, 32, 0, nullptr, ok.data()), cudaSuccess);
}

__global__ void PartialMask(int* out) {
  out[threadIdx.x] = __shfl_sync(0xffffu, 1, 0);
}

TEST(EmuTest, PartialShuffleMaskFailsTheLaunch) {
  std::vector<int> out(32, 0);
  EXPECT_EQ(GDN_LAUNCH(PartialMask, 1, 32, 0, nullptr, out.data()),
            cudaErrorLaunchFailure);
  cudaGetLastError();
}

__global__ void BigShared(int* out) {
  GDN_DYNAMIC_SHARED(int, sm);
  sm[threadIdx.x] = 1;
  out[0] = sm[0];
}

TEST(EmuTest, DynamicSharedMemoryAbove48KbNeedsTheAttribute) {
  int out = 0;
  constexpr int kBytes = 64 * 1024;
  EXPECT_EQ(GDN_LAUNCH(BigShared, 1, 32, kBytes, nullptr, &out),
            cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_EQ(cudaFuncSetAttribute(
                BigShared, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes),
            cudaSuccess);
  EXPECT_EQ(GDN_LAUNCH(BigShared, 1, 32, kBytes, nullptr, &out), cudaSuccess);
  EXPECT_EQ(out, 1);
  // Past the device's 227 KB, whatever the attribute says.
  ASSERT_EQ(
      cudaFuncSetAttribute(
          BigShared, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024),
      cudaSuccess);
  EXPECT_EQ(GDN_LAUNCH(BigShared, 1, 32, 300 * 1024, nullptr, &out),
            cudaErrorInvalidValue);
  EXPECT_EQ(GDN_LAUNCH(BigShared, 1, 2048, 0, nullptr, &out),
            cudaErrorInvalidConfiguration);
  cudaGetLastError();
}

// D = A B for A, B 16 x 16 bf16 in shared memory (row-major, rows kStride
// apart) through the fragment loads and two m16n8k16 products, as the decode
// kernels address them; D row-major fp32.
constexpr int kStride = 24;  // bf16 elements
__global__ void MmaTile(const uint16_t* a_in, const uint16_t* b_in, float* d) {
  using namespace rollout::gdn::internal;
  GDN_DYNAMIC_SHARED(uint16_t, sm);
  uint16_t* sa = sm;
  uint16_t* sb = sm + 16 * kStride;
  const int l = threadIdx.x;
  for (int i = l; i < 256; i += 32) {
    sa[(i / 16) * kStride + i % 16] = a_in[i];
    sb[(i / 16) * kStride + i % 16] = b_in[i];
  }
  __syncwarp();
  const int row = (l & 7) + 8 * ((l >> 3) & 1), col = 8 * (l >> 4);
  uint32_t a[4], b[4];
  LdMatrixX4(a, sa + row * kStride + col);
  LdMatrixX4Trans(b, sb + row * kStride + col);
  const int g = l / 4, t = l % 4;
  for (int h = 0; h < 2; ++h) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    MmaBf16(c, a, b[2 * h], b[2 * h + 1]);
    for (int r = 0; r < 4; ++r) {
      d[(g + 8 * (r / 2)) * 16 + 8 * h + 2 * t + r % 2] = c[r];
    }
  }
}

TEST(EmuTest, TensorCoreProductOfSharedTiles) {
  // Small integers: every product and sum exact, so D must equal A B.
  std::vector<uint16_t> a(256), b(256);
  std::vector<float> fa(256), fb(256);
  for (int i = 0; i < 256; ++i) {
    fa[i] = static_cast<float>((i * 7) % 11 - 5);
    fb[i] = static_cast<float>((i * 5) % 13 - 6);
    uint32_t ua, ub;
    std::memcpy(&ua, &fa[i], 4);
    std::memcpy(&ub, &fb[i], 4);
    a[i] = static_cast<uint16_t>(ua >> 16);
    b[i] = static_cast<uint16_t>(ub >> 16);
  }
  std::vector<float> d(256, -1.f);
  ASSERT_EQ(GDN_LAUNCH(MmaTile, 1, 32, 2 * 16 * kStride * 2, nullptr, a.data(),
                       b.data(), d.data()),
            cudaSuccess);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      float want = 0.f;
      for (int k = 0; k < 16; ++k) want += fa[i * 16 + k] * fb[k * 16 + j];
      EXPECT_EQ(d[i * 16 + j], want) << i << ", " << j;
    }
  }
}

// Block 0 writes its static shared array; every block reads its own.
__global__ void StaticSharedPerBlock(float* out) {
  GDN_SHARED(float, s, [32]);
  if (blockIdx.x == 0) s[threadIdx.x] = 1.f + threadIdx.x;
  __syncthreads();
  out[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x];
}

TEST(EmuTest, StaticSharedMemoryStartsAsNaNInEveryBlock) {
  std::vector<float> out(2 * 32, 0.f);
  ASSERT_EQ(GDN_LAUNCH(StaticSharedPerBlock, 2, 32, 0, nullptr, out.data()),
            cudaSuccess);
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(out[l], 1.f + l) << l;
    // Block 1 never wrote: not block 0's value.
    EXPECT_TRUE(std::isnan(out[32 + l])) << l;
  }
}

// Thread 1 reads what thread 0 wrote, the barrier between them missing.
__global__ void MissingBarrier(float* out) {
  GDN_DYNAMIC_SHARED(float, s);
  if (threadIdx.x == 0) s[0] = 1.f;
  if (threadIdx.x == 1) out[blockIdx.x] = s[0];
}

TEST(EmuTest, OddBlocksRunTheirThreadsInReverse) {
  std::vector<float> out(2, 0.f);
  ASSERT_EQ(GDN_LAUNCH(MissingBarrier, 2, 32, 16, nullptr, out.data()),
            cudaSuccess);
  EXPECT_EQ(out[0], 1.f);  // thread 0 ran first: right by luck
  // Thread 1 ran before thread 0: the fresh shared memory's NaN.
  EXPECT_TRUE(std::isnan(out[1]));
}

// Device memory (device_memory.h): out[i] = x[i + offset] for i < n.
__global__ void ShiftedCopy(const float* x, float* out, int n, int offset) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i + offset];
}

// A device buffer of n floats holding 0, 1, ... (the test's own upload).
float* DeviceIota(int n) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
  std::vector<float> h(n);
  std::iota(h.begin(), h.end(), 0.f);
  EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  return static_cast<float*>(p);
}

TEST(EmuDeviceMemoryTest, AllocationsAreAlignedAndStartAsNaN) {
  for (const size_t size : {0, 1, 4, 100, 256, 4096, 5000}) {
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, size), cudaSuccess);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << size;
    if (size >= 4) {
      EXPECT_TRUE(std::isnan(*static_cast<float*>(p))) << size;
    }
    EXPECT_EQ(cudaFree(p), cudaSuccess);
  }
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  int not_device = 0;
  EXPECT_EQ(cudaFree(&not_device), cudaErrorInvalidValue);
}

TEST(EmuDeviceMemoryTest, InBoundsAccessesWork) {
  constexpr int kN = 99;  // 396 bytes: a 4-byte tail
  float* x = DeviceIota(kN);
  std::vector<float> out(kN, -1.f);
  ASSERT_EQ(GDN_LAUNCH(ShiftedCopy, 2, 64, 0, nullptr, x, out.data(), kN, 0),
            cudaSuccess);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(out[i], static_cast<float>(i));
  EXPECT_EQ(cudaFree(x), cudaSuccess);
}

using EmuDeviceMemoryDeathTest = ::testing::Test;

TEST_F(EmuDeviceMemoryDeathTest, ReadPastTheEndIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 100 floats end at the guard page: element 100 lies on it.
  constexpr int kN = 100;
  EXPECT_DEATH(
      {
        float* x = DeviceIota(kN);
        std::vector<float> out(kN);
        GDN_LAUNCH(ShiftedCopy, 2, 64, 0, nullptr, x, out.data(), kN, 1);
      },
      "out-of-bounds device memory access at 0x[0-9a-f]+, 0 bytes past the "
      "end of the 400-byte allocation .*, in a kernel, block \\(1, 0, 0\\) "
      "thread \\(35, 0, 0\\)");
}

TEST_F(EmuDeviceMemoryDeathTest, ReadBeforeTheStartIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  constexpr int kN = 1024;
  EXPECT_DEATH(
      {
        float* x = DeviceIota(kN);
        std::vector<float> out(kN);
        GDN_LAUNCH(ShiftedCopy, 8, 128, 0, nullptr, x, out.data(), kN, -1);
      },
      "out-of-bounds device memory access at 0x[0-9a-f]+, 4 bytes before the "
      "4096-byte allocation .*, in a kernel, block \\(0, 0, 0\\) thread "
      "\\(0, 0, 0\\)");
}

// out[i] = i, for i < n; launched with n past the allocation's end, but not
// past its 16-byte rounding: the write lands in the tail.
__global__ void Fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(i);
}

TEST_F(EmuDeviceMemoryDeathTest, WriteIntoTheRoundingTailIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void* p = nullptr;
        cudaMalloc(&p, 99 * sizeof(float));
        GDN_LAUNCH(Fill, 1, 128, 0, nullptr, static_cast<float*>(p), 100);
      },
      "out-of-bounds device memory write at 0x[0-9a-f]+, 0 bytes past the "
      "end of the 396-byte allocation .*, found after a kernel launch");
}

// Writes element n of its dynamic shared memory (n floats asked for).
__global__ void SharedOverflow(int n) {
  GDN_DYNAMIC_SHARED(float, s);
  if (threadIdx.x == 0) s[n] = 1.f;
}

TEST_F(EmuDeviceMemoryDeathTest, DynamicSharedMemoryOverflowIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 256 floats: element 256 lies on the guard page.
  EXPECT_DEATH(
      GDN_LAUNCH(SharedOverflow, 1, 32, 256 * sizeof(float), nullptr, 256),
      "out-of-bounds dynamic shared memory access at 0x[0-9a-f]+, 0 "
      "bytes past the end of the 1024-byte allocation .*, in a "
      "kernel, block \\(0, 0, 0\\) thread \\(0, 0, 0\\)");
}

// Programmatic dependent launch (device_memory.h): a producer, then a
// consumer launched with the PDL attribute. Produce writes x from src.
__global__ void Produce(const float* src, float* x) {
  x[threadIdx.x] = 2.f * src[threadIdx.x];
}
// out = x + y, reading x after its dependency wait (right) or before it (a
// race), and y, which the producer does not touch, before it; with
// `clobber` it first writes src (which the producer reads) before the wait.
__global__ void Consume(float* src, const float* x, const float* y, float* out,
                        bool early, bool clobber) {
  const int i = threadIdx.x;
  if (clobber) src[i] = 0.f;
  float v = early ? x[i] : 0.f;
  const float w = y[i];
  rollout::gdn::internal::GridDependencyWait();
  if (!early) v = x[i];
  out[i] = v + w;
}

struct PdlBuffers {
  float *src, *x, *y, *out;
  void Free() const {
    for (float* p : {src, x, y, out}) EXPECT_EQ(cudaFree(p), cudaSuccess);
  }
};

// Each of 32 floats; src = 0, 1, ..., y = 100, 101, ...
PdlBuffers MakePdlBuffers() {
  PdlBuffers b;
  b.src = DeviceIota(32);
  b.y = DeviceIota(32);
  std::vector<float> y(32);
  std::iota(y.begin(), y.end(), 100.f);
  EXPECT_EQ(
      cudaMemcpy(b.y, y.data(), 32 * sizeof(float), cudaMemcpyHostToDevice),
      cudaSuccess);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 32 * sizeof(float)), cudaSuccess);
  b.x = static_cast<float*>(p);
  EXPECT_EQ(cudaMalloc(&p, 32 * sizeof(float)), cudaSuccess);
  b.out = static_cast<float*>(p);
  return b;
}

cudaError_t LaunchConsume(const PdlBuffers& b, bool early, bool clobber) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, Consume, b.src, b.x, b.y, b.out, early,
                            clobber);
}

TEST(EmuPdlTest, ReadsAfterTheWaitSeeThePrecedingKernelsWrites) {
  const PdlBuffers b = MakePdlBuffers();
  ASSERT_EQ(GDN_LAUNCH(Produce, 1, 32, 0, nullptr, b.src, b.x), cudaSuccess);
  ASSERT_EQ(LaunchConsume(b, /*early=*/false, /*clobber=*/false), cudaSuccess);
  std::vector<float> out(32);
  ASSERT_EQ(
      cudaMemcpy(out.data(), b.out, 32 * sizeof(float), cudaMemcpyDeviceToHost),
      cudaSuccess);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], 2.f * i + 100.f + i) << i;
  b.Free();
}

// A copy between the two: the consumer follows the copy, which followed the
// producer, so its early read is ordered.
TEST(EmuPdlTest, AHostOrderedCopyBetweenOrdersTheReads) {
  const PdlBuffers b = MakePdlBuffers();
  ASSERT_EQ(GDN_LAUNCH(Produce, 1, 32, 0, nullptr, b.src, b.x), cudaSuccess);
  ASSERT_EQ(cudaMemset(b.out, 0, 32 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(LaunchConsume(b, /*early=*/true, /*clobber=*/false), cudaSuccess);
  b.Free();
}

using EmuPdlDeathTest = ::testing::Test;

TEST_F(EmuPdlDeathTest, AReadBeforeTheWaitOfWhatThePrecedingKernelWrites) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        const PdlBuffers b = MakePdlBuffers();
        GDN_LAUNCH(Produce, 1, 32, 0, nullptr, b.src, b.x);
        LaunchConsume(b, /*early=*/true, /*clobber=*/false);
      },
      "read of device memory at 0x[0-9a-f]+ \\(byte 0 of the 128-byte "
      "allocation at 0x[0-9a-f]+\\) before GridDependencyWait, in a "
      "kernel, block \\(0, 0, 0\\) thread \\(0, 0, 0\\), which the "
      "preceding kernel writes");
}

TEST_F(EmuPdlDeathTest, AWriteBeforeTheWaitOfWhatThePrecedingKernelReads) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        const PdlBuffers b = MakePdlBuffers();
        GDN_LAUNCH(Produce, 1, 32, 0, nullptr, b.src, b.x);
        LaunchConsume(b, /*early=*/false, /*clobber=*/true);
      },
      "write of device memory .* before GridDependencyWait, in a kernel, "
      "block \\(0, 0, 0\\) thread \\(0, 0, 0\\), which the preceding "
      "kernel reads");
}

}  // namespace
