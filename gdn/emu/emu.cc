#include "gdn/emu/emu.h"

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gdn/emu/device_memory.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace gdn_emu {
namespace {

namespace ctx = boost::context;

constexpr int kWarpSize = 32;
constexpr int kMaxThreads = 1024;
constexpr size_t kDefaultDynamicSmem = 48 * 1024;
constexpr size_t kMaxDynamicSmem = 227 * 1024;  // sm_90 opt-in limit
constexpr size_t kFiberStack = 256 * 1024;

// Where a fiber waits.
enum class Wait { kNone, kWarp, kBlock, kDependency };

struct CopyOp {
  void* dst;
  const void* src;
  int bytes;
  int group;  // index of the commit group it belongs to
};

struct Thread {
  uint3 tid;
  int lane = 0, warp = 0;
  int parity = 0;  // which half of the warp's exchange buffer is next
  bool done = false;
  Wait wait = Wait::kNone;
  std::vector<CopyOp> copies;  // issued, not yet retired
  int committed = 0;           // commit groups closed so far
  ctx::fiber self;             // resumed by the scheduler
  ctx::fiber back;             // the scheduler, resumed to yield
};

constexpr int kGatherBytes = 32;

struct WarpState {
  int live = 0, arrived = 0;
  uint64_t gen = 0;
  // Exchange buffers of shuffles and gathers, alternating by the lanes'
  // common parity: a lane reuses a half only after another warp barrier,
  // which every lane reaches after its read of that half.
  uint64_t xchg[2][kWarpSize] = {};
  unsigned char gather[2][kWarpSize][kGatherBytes] = {};
};

// Thrown through a fiber's stack to end it when the launch fails.
struct Abort {};

struct Block {
  std::vector<std::unique_ptr<Thread>> threads;
  std::vector<WarpState> warps;
  int live = 0, arrived = 0;
  uint64_t gen = 0;
  bool progress = false;
  bool failed = false;
  // A block of a PDL launch before the preceding kernel completes (its
  // threads' GridDependencyWait holds them until then).
  bool prologue = false;
  std::string failure;
};

// The launch in progress (one at a time: the emulation is single-threaded).
Block* g_block = nullptr;
Thread* g_thread = nullptr;
// The launch's dynamic shared memory (SharedAlloc: guarded).
unsigned char* g_smem = nullptr;
size_t g_smem_bytes = 0;
cudaError_t g_last_error = cudaSuccess;
// Blocks run so far (all launches), and for each static shared array the
// block that last refreshed it (FreshShared).
uint64_t g_block_serial = 0;
std::map<void*, uint64_t>& FreshTable() {
  static auto* t = new std::map<void*, uint64_t>;
  return *t;
}
std::map<const void*, int>& MaxSmemTable() {
  static auto* t = new std::map<const void*, int>;
  return *t;
}

Thread& Self() {
  if (g_thread == nullptr) {
    std::fprintf(stderr, "gdn_emu: device function called outside a launch\n");
    std::abort();
  }
  return *g_thread;
}

// Back to the scheduler; returns when resumed. A failed launch unwinds the
// fiber from here.
void Yield() {
  Thread& t = Self();
  t.back = std::move(t.back).resume();
  if (g_block->failed) throw Abort{};
}

// Waits until the barrier generation `*gen` moves on.
void WaitFor(const uint64_t* gen, Wait kind) {
  const uint64_t g = *gen;
  Thread& t = Self();
  t.wait = kind;
  while (*gen == g) Yield();
  t.wait = Wait::kNone;
}

void ArriveWarp() {
  WarpState& w = g_block->warps[Self().warp];
  if (++w.arrived == w.live) {
    w.arrived = 0;
    ++w.gen;
    g_block->progress = true;
    return;
  }
  WaitFor(&w.gen, Wait::kWarp);
}

void ArriveBlock() {
  Block& b = *g_block;
  if (++b.arrived == b.live) {
    b.arrived = 0;
    ++b.gen;
    b.progress = true;
    return;
  }
  WaitFor(&b.gen, Wait::kBlock);
}

// A thread that ended leaves the barriers' counts; a barrier it completes
// opens.
void Retire(Thread& t) {
  t.done = true;
  Block& b = *g_block;
  WarpState& w = b.warps[t.warp];
  --w.live;
  if (w.live > 0 && w.arrived == w.live) {
    w.arrived = 0;
    ++w.gen;
  }
  --b.live;
  if (b.live > 0 && b.arrived == b.live) {
    b.arrived = 0;
    ++b.gen;
  }
  b.progress = true;
}

std::string DescribeWaits(const Block& b) {
  std::string s;
  for (size_t w = 0; w < b.warps.size(); ++w) {
    int at_warp = 0, at_block = 0, at_dep = 0, done = 0;
    for (int l = 0; l < kWarpSize; ++l) {
      const size_t i = w * kWarpSize + l;
      if (i >= b.threads.size()) break;
      const Thread& t = *b.threads[i];
      if (t.done) {
        ++done;
      } else if (t.wait == Wait::kWarp) {
        ++at_warp;
      } else if (t.wait == Wait::kBlock) {
        ++at_block;
      } else if (t.wait == Wait::kDependency) {
        ++at_dep;
      }
    }
    s += " warp " + std::to_string(w) + ": " + std::to_string(at_warp) +
         " at a shuffle/warp barrier, " + std::to_string(at_block) +
         " at __syncthreads, " + std::to_string(at_dep) +
         " at GridDependencyWait, " + std::to_string(done) + " exited;";
  }
  return s;
}

// Runs one block to its end (or failure).
bool RunBlock(Block& b, const std::function<void()>& body,
              ctx::pooled_fixedsize_stack& stacks, bool pdl) {
  const int n = static_cast<int>(blockDim.x * blockDim.y * blockDim.z);
  b.warps.assign((n + kWarpSize - 1) / kWarpSize, WarpState());
  b.live = n;
  for (int i = 0; i < n; ++i) {
    auto t = std::make_unique<Thread>();
    t->tid.x = i % blockDim.x;
    t->tid.y = (i / blockDim.x) % blockDim.y;
    t->tid.z = i / (blockDim.x * blockDim.y);
    t->lane = i % kWarpSize;
    t->warp = i / kWarpSize;
    ++b.warps[t->warp].live;
    Thread* raw = t.get();
    t->self = ctx::fiber(std::allocator_arg, stacks,
                         [raw, &body](ctx::fiber&& sched) {
                           raw->back = std::move(sched);
                           try {
                             body();
                           } catch (const Abort&) {
                           }
                           return std::move(raw->back);
                         });
    b.threads.push_back(std::move(t));
  }
  if (pdl) {
    b.prologue = true;
    BeginPrologue();
  }
  // The preceding kernel completes: its memory becomes this block's too.
  auto end_prologue = [&b] {
    if (!b.prologue) return;
    b.prologue = false;
    b.progress = true;
    EndPrologue();
  };
  // Round robin until every thread ended; a round in which no thread could
  // go on is a deadlock, unless threads wait at GridDependencyWait: then the
  // preceding kernel completes (as late as it can). Odd blocks go round in
  // reverse: a fiber runs until it blocks, so between two barriers every write
  // of an earlier thread lands before a later thread reads, and a missing
  // barrier shows only where a thread reads what a later one writes. Both
  // orders put every such pair both ways.
  const bool reverse = (blockIdx.x + blockIdx.y + blockIdx.z) % 2 == 1;
  for (;;) {
    bool any = false;
    b.progress = false;
    for (int k = 0; k < n; ++k) {
      auto& t = b.threads[reverse ? n - 1 - k : k];
      if (t->done) continue;
      any = true;
      g_thread = t.get();
      threadIdx = t->tid;
      t->self = std::move(t->self).resume();
      if (!t->self) Retire(*t);  // the fiber returned
      g_thread = nullptr;
      if (b.failed) break;
    }
    if (!any) {
      end_prologue();
      return true;
    }
    if (b.failed) break;
    if (!b.progress && b.prologue) {
      for (const auto& t : b.threads) {
        if (!t->done && t->wait == Wait::kDependency) {
          end_prologue();
          break;
        }
      }
    }
    if (!b.progress) {
      b.failed = true;
      b.failure = "deadlock:" + DescribeWaits(b);
      break;
    }
  }
  end_prologue();
  // Unwind the fibers still suspended (they see `failed` and throw Abort).
  for (auto& t : b.threads) {
    while (t->self) {
      g_thread = t.get();
      threadIdx = t->tid;
      t->self = std::move(t->self).resume();
    }
  }
  g_thread = nullptr;
  return false;
}

}  // namespace

int LaneId() { return Self().lane; }

bool InKernel() { return g_thread != nullptr; }

void SyncThreads() { ArriveBlock(); }
void SyncWarp() { ArriveWarp(); }

uint64_t ShuffleBits(uint64_t bits, int src) {
  Thread& t = Self();
  WarpState& w = g_block->warps[t.warp];
  const int p = t.parity;
  t.parity ^= 1;
  w.xchg[p][t.lane] = bits;
  ArriveWarp();
  return w.xchg[p][src & (kWarpSize - 1)];
}

void WarpAllGather(const void* mine, int bytes, void* all) {
  if (bytes > kGatherBytes) Fail("WarpAllGather of more than 32 bytes");
  Thread& t = Self();
  WarpState& w = g_block->warps[t.warp];
  const int p = t.parity;
  t.parity ^= 1;
  std::memcpy(w.gather[p][t.lane], mine, bytes);
  ArriveWarp();
  for (int l = 0; l < kWarpSize; ++l) {
    std::memcpy(static_cast<unsigned char*>(all) + l * bytes, w.gather[p][l],
                bytes);
  }
}

void* DynamicShared() { return g_smem; }

void FreshShared(void* array, size_t bytes) {
  uint64_t& last = FreshTable()[array];
  if (last == g_block_serial) return;
  last = g_block_serial;
  std::memset(array, 0xff, bytes);
}

void CpAsync(void* smem, const void* gmem, int bytes) {
  Thread& t = Self();
  // The source is read now, as far as ordering goes (the copy is in flight
  // from here): an access the PDL check sees at the issue.
  unsigned char probe[16];
  std::memcpy(probe, gmem, std::min(bytes, 16));
  asm volatile("" : : "r"(probe) : "memory");
  t.copies.push_back({smem, gmem, bytes, t.committed});
  std::memset(smem, 0xff, bytes);
}

void CpAsyncCommit() { ++Self().committed; }

void GridDependencyWait() {
  if (!g_block->prologue) return;
  Thread& t = Self();
  t.wait = Wait::kDependency;
  while (g_block->prologue) Yield();
  t.wait = Wait::kNone;
}

void CpAsyncWaitGroup(int pending) {
  Thread& t = Self();
  const int retire_below = t.committed - pending;
  std::vector<CopyOp> keep;
  for (const CopyOp& c : t.copies) {
    if (c.group < retire_below) {
      std::memcpy(c.dst, c.src, c.bytes);
    } else {
      keep.push_back(c);
    }
  }
  t.copies.swap(keep);
}

void Fail(const char* what) {
  g_block->failed = true;
  g_block->failure = what;
  throw Abort{};
}

bool WantsPdl(const cudaLaunchConfig_t& config) {
  for (unsigned i = 0; i < config.numAttrs; ++i) {
    const cudaLaunchAttribute& a = config.attrs[i];
    if (a.id == cudaLaunchAttributeProgrammaticStreamSerialization &&
        a.val.programmaticStreamSerializationAllowed != 0) {
      return true;
    }
  }
  return false;
}

void SetMaxDynamicShared(const void* kernel_id, int bytes) {
  MaxSmemTable()[kernel_id] = bytes;
}

cudaError_t LastError(bool clear) {
  const cudaError_t e = g_last_error;
  if (clear) g_last_error = cudaSuccess;
  return e;
}

cudaError_t RunGrid(dim3 grid, dim3 block, size_t dynamic_smem, bool pdl,
                    const void* kernel_id, const std::function<void()>& body) {
  auto fail = [](cudaError_t e, const std::string& why) {
    std::fprintf(stderr, "gdn_emu: launch failed: %s\n", why.c_str());
    if (g_last_error == cudaSuccess) g_last_error = e;
    return e;
  };
  if (g_block != nullptr) {
    return fail(cudaErrorLaunchFailure, "a launch inside a kernel");
  }
  const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  if (threads == 0 || threads > kMaxThreads || grid.x == 0 || grid.y == 0 ||
      grid.z == 0) {
    return fail(cudaErrorInvalidConfiguration,
                "block of " + std::to_string(threads) + " threads");
  }
  size_t limit = kDefaultDynamicSmem;
  auto it = MaxSmemTable().find(kernel_id);
  if (it != MaxSmemTable().end()) limit = it->second;
  limit = std::min(limit, kMaxDynamicSmem);
  if (dynamic_smem > limit) {
    return fail(cudaErrorInvalidValue,
                std::to_string(dynamic_smem) +
                    " B of dynamic shared memory; the kernel may use " +
                    std::to_string(limit) +
                    " (48 KB unless cudaFuncSetAttribute raised it; 227 KB "
                    "at most)");
  }
  static ctx::pooled_fixedsize_stack* stacks =
      new ctx::pooled_fixedsize_stack(kFiberStack);
  gridDim = grid;
  blockDim = block;
  g_smem = static_cast<unsigned char*>(SharedAlloc(dynamic_smem));
  g_smem_bytes = dynamic_smem;
  if (g_smem == nullptr) {
    return fail(cudaErrorMemoryAllocation, "no host memory for shared memory");
  }
  Block b;
  g_block = &b;
  BeginKernel(pdl);
  // The launch's end, either way: device memory open again, the shared
  // memory freed, every pad checked.
  auto end_launch = [](const char* what) {
    g_block = nullptr;
    EndKernel();
    SharedFree(g_smem);
    g_smem = nullptr;
    CheckDevicePads(what);
  };
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = uint3{x, y, z};
        std::memset(g_smem, 0xff, g_smem_bytes);
        ++g_block_serial;  // static shared arrays refresh (FreshShared)
        b = Block();
        if (!RunBlock(b, body, *stacks, pdl)) {
          end_launch("a failed kernel launch");
          return fail(cudaErrorLaunchFailure,
                      "block (" + std::to_string(x) + ", " + std::to_string(y) +
                          ", " + std::to_string(z) + "): " + b.failure);
        }
      }
    }
  }
  end_launch("a kernel launch");
  return cudaSuccess;
}

}  // namespace gdn_emu
