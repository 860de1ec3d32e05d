// A CPU emulator of the CUDA execution model the GDN kernels rely on, for
// running them without a GPU (gdn/emu/README.md): every CUDA thread of a
// block is a fiber (Boost.Context) on the calling OS thread, blocks run one
// after another, and the collective operations are exact:
//   - __syncthreads and warp barriers (every shuffle is one): a fiber waits
//     until every live thread of its block / warp has arrived; a block whose
//     live threads all wait with none able to go on is a deadlock, reported
//     as a failed launch (cudaErrorLaunchFailure) with where each warp waits;
//   - shuffles read the value the source lane passed to the same shuffle;
//   - cp.async copies happen when a wait_group retires their group, and
//     their destinations hold 0xff bytes (NaN) until then, so a read before
//     the wait gets NaN instead of the right value by luck;
//   - shared memory, dynamic and static, starts as 0xff bytes in every block
//     (NaN: a read before the block's own write shows), and a launch
//     that asks for more than 48 KB of it without raising the kernel's
//     cudaFuncAttributeMaxDynamicSharedMemorySize fails as on the GPU (as do
//     more than 227 KB or 1024 threads).
// Device memory and dynamic shared memory (device_memory.h) are guarded: an
// access outside an allocation, a read of never-written bytes and a race of a
// PDL launch with the kernel before it show.
// Not emulated: the memory model's reorderings (a fiber runs until it blocks)
// and timing.
#ifndef ROLLOUT_GDN_EMU_EMU_H_
#define ROLLOUT_GDN_EMU_EMU_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

// The executing thread's coordinates, as in CUDA (valid inside a kernel; the
// scheduler sets threadIdx before it resumes a thread).
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

namespace gdn_emu {

int LaneId();

// Whether a kernel thread is running (threadIdx and blockIdx then say which).
bool InKernel();

// Block and warp barriers.
void SyncThreads();
void SyncWarp();

// One shuffle of 64 bits: every lane passes `bits` and reads the value lane
// `src` passed (src in [0, 32)).
uint64_t ShuffleBits(uint64_t bits, int src);

template <typename T>
T Shuffle(T v, int src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = ShuffleBits(bits, src);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// Every lane passes `bytes` (at most 32) and gets all 32 lanes' in lane
// order (the warp-collective matrix operations gather their fragments so).
void WarpAllGather(const void* mine, int bytes, void* all);

// The block's dynamic shared memory (16-byte aligned).
void* DynamicShared();

// A kernel's static shared array (GDN_SHARED, cuda_emu.h), as its declaration
// runs: filled with 0xff bytes the first time in each block (before any
// thread of the block can write it: each passes the declaration first).
void FreshShared(void* array, size_t bytes);

// cp.async: a copy of `bytes` (4, 8 or 16) into shared memory, completed by
// the wait that retires its group.
void CpAsync(void* smem, const void* gmem, int bytes);
void CpAsyncCommit();
// All but the `pending` most recent committed groups complete.
void CpAsyncWaitGroup(int pending);

// griddepcontrol.wait: in a block of a launch with programmatic dependent
// launch (device_memory.h, access tracking), waits until the preceding kernel
// completes; elsewhere returns at once.
void GridDependencyWait();

// Ends the launch as failed with `what` (a misuse the GPU would not forgive,
// e.g. a partial shuffle mask).
[[noreturn]] void Fail(const char* what);

// Runs `body` as every thread of every block of the grid, after the launch
// checks; `pdl`: launched with programmatic dependent launch (its blocks may
// start before the preceding kernel completes: device_memory.h). The
// launch's error (also kept for cudaGetLastError).
cudaError_t RunGrid(dim3 grid, dim3 block, size_t dynamic_smem, bool pdl,
                    const void* kernel_id, const std::function<void()>& body);

// The largest dynamic shared memory a kernel may use (its
// cudaFuncAttributeMaxDynamicSharedMemorySize; 48 KB unless raised).
void SetMaxDynamicShared(const void* kernel_id, int bytes);

// The last launch error, cleared by the read (cudaGetLastError) or not
// (cudaPeekAtLastError).
cudaError_t LastError(bool clear);

// A kernel launch: Launch(grid, block, smem, kernel)(args...), the
// emulation's spelling of kernel<<<grid, block, smem, stream>>>(args...).
template <typename... P>
struct Launch {
  dim3 grid, block;
  size_t smem;
  void (*kernel)(P...);
  bool pdl = false;
  template <typename... A>
  cudaError_t operator()(A&&... args) const {
    std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
    auto* k = kernel;
    return RunGrid(grid, block, smem, pdl, reinterpret_cast<const void*>(k),
                   [&params, k] { std::apply(k, params); });
  }
};
template <typename... P>
Launch<P...> MakeLaunch(dim3 grid, dim3 block, size_t smem,
                        void (*kernel)(P...), bool pdl = false) {
  return Launch<P...>{grid, block, smem, kernel, pdl};
}

// Whether a launch configuration asks for programmatic dependent launch.
bool WantsPdl(const cudaLaunchConfig_t& config);

// cudaLaunchKernelEx: the grid, block and shared memory of `config`, and its
// programmatic dependent launch attribute (checked: device_memory.h).
template <typename... P, typename... A>
cudaError_t LaunchKernelEx(const cudaLaunchConfig_t* config,
                           void (*kernel)(P...), A&&... args) {
  return MakeLaunch(config->gridDim, config->blockDim, config->dynamicSmemBytes,
                    kernel, WantsPdl(*config))(std::forward<A>(args)...);
}

}  // namespace gdn_emu

#endif  // ROLLOUT_GDN_EMU_EMU_H_
