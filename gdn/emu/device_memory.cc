#include "gdn/emu/device_memory.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "gdn/emu/emu.h"

namespace gdn_emu {
namespace {

// cudaMalloc aligns to 256 bytes; 16 (the widest access of the kernels: a
// float4, a 16-byte cp.async) keeps the buffer's end within 12 bytes of the
// guard page, so that reads just past the end fault too.
constexpr size_t kAlign = 16;
constexpr unsigned char kPadByte = 0xa5;  // pad and tail pattern
constexpr unsigned char kFreshByte = 0xff;

size_t RoundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Page access of a kernel (access tracking, device_memory.h).
enum Access : uint8_t { kNone = 0, kRead = 1, kWritten = 2 };

// One mapping: [map, map + page) and [map + len - page, map + len) are
// no-access; the buffer ends at the second one. The pages between ("inner")
// are tracked per launch.
struct Region {
  unsigned char* map = nullptr;
  size_t len = 0;
  size_t size = 0;  // as asked
  unsigned char* buffer = nullptr;
  // Device memory (tracked per launch) or a launch's dynamic shared memory
  // (SharedAlloc: only guarded).
  bool device = true;
  const char* kind() const {
    return device ? "device memory" : "dynamic shared memory";
  }
  std::vector<uint8_t> cur;    // [inner pages] this launch's Access
  std::vector<uint8_t> prev;   // the preceding launch's
  std::vector<uint32_t> hits;  // the pages prev marks (prologue changes)
  unsigned char* pad() const { return map + PageSize(); }
  unsigned char* tail() const { return buffer + size; }
  unsigned char* end() const { return map + len - PageSize(); }
  size_t pages() const { return (len - 2 * PageSize()) / PageSize(); }
};

// By buffer start. The fault handler reads it without the lock: the
// emulation runs kernels on one thread, and a fault inside an update of the
// table (which touches no device memory) cannot happen.
std::mutex g_mu;
std::map<uintptr_t, Region>& Regions() {
  static auto* regions = new std::map<uintptr_t, Region>;
  return *regions;
}

struct sigaction g_previous;

// Access tracking (device_memory.h): inside a launch every inner page starts
// no-access, and the fault of its first read (write) records it and opens it
// for reading (and writing). g_prologue: a block of a PDL launch has not yet
// passed its dependency wait, so the preceding launch's pages (g_prev_valid)
// are off limits: written ones entirely, read ones for writing.
bool g_tracking = false;
bool g_prev_valid = false;
bool g_prologue = false;

int ProtOf(uint8_t prev, uint8_t cur) {
  if (g_prologue && prev == kWritten) return PROT_NONE;
  if (cur == kWritten) {
    return g_prologue && prev == kRead ? PROT_READ : PROT_READ | PROT_WRITE;
  }
  return cur == kRead ? PROT_READ : PROT_NONE;
}

// Sets the protection of pages [first, last) of r from their access state
// (runs of equal protection in one call each).
void Protect(const Region& r, size_t first, size_t last) {
  const size_t page = PageSize();
  while (first < last) {
    const uint8_t prev = g_prev_valid ? r.prev[first] : kNone;
    const int prot = ProtOf(prev, r.cur[first]);
    size_t run = first + 1;
    while (run < last &&
           ProtOf(g_prev_valid ? r.prev[run] : kNone, r.cur[run]) == prot) {
      ++run;
    }
    mprotect(r.pad() + first * page, (run - first) * page, prot);
    first = run;
  }
}

// The pages of the preceding launch only (what a prologue's start or end
// changes).
void ProtectHits(const Region& r) {
  for (uint32_t p : r.hits) Protect(r, p, p + 1);
}

// Whether a fault was a write: known on x86-64 (the page fault's error
// code, bit 1). Elsewhere every fault counts as a read that opens its page
// for writing as well (OnTrackedAccess): the check then misses writes, but
// never reports a race that is not one.
#if defined(__x86_64__)
constexpr bool kKnowsWrites = true;
bool IsWrite(void* context) {
  return (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) !=
         0;
}
#else
constexpr bool kKnowsWrites = false;
bool IsWrite(void*) { return false; }
#endif

// Writes the report's where-clause: the kernel thread, if any.
void Where(char* buf, size_t n) {
  if (InKernel()) {
    std::snprintf(buf, n, "in a kernel, block (%u, %u, %u) thread (%u, %u, %u)",
                  blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
                  threadIdx.z);
  } else {
    std::snprintf(buf, n, "on the host (a runtime call or the test)");
  }
}

[[noreturn]] void Report(const char* what) {
  // write(2): the report must come out before abort(), also from a signal
  // handler.
  const ssize_t ignored = write(STDERR_FILENO, what, std::strlen(what));
  (void)ignored;
  std::abort();
}

// Reports an access at `a` outside r's buffer (before its start or past its
// size) and aborts; `what` names the access, `context` where or when.
[[noreturn]] void ReportOutside(const Region& r, const unsigned char* a,
                                const char* what, const char* context) {
  const bool before = a < r.buffer;
  char msg[512];
  std::snprintf(msg, sizeof msg,
                "gdn_emu: out-of-bounds %s %s at %p, %zu bytes %s the "
                "%zu-byte allocation at %p, %s\n",
                r.kind(), what, static_cast<const void*>(a),
                before ? static_cast<size_t>(r.buffer - a)
                       : static_cast<size_t>(a - r.tail()),
                before ? "before" : "past the end of", r.size,
                static_cast<const void*>(r.buffer), context);
  Report(msg);
}

// A tracked access inside a launch: recorded and let through, or reported
// as a race with the preceding launch (a PDL prologue).
void OnTrackedAccess(Region& r, const unsigned char* a, bool write) {
  const size_t p = static_cast<size_t>(a - r.pad()) / PageSize();
  const uint8_t prev = g_prev_valid ? r.prev[p] : kNone;
  if (g_prologue && (prev == kWritten || (prev == kRead && write))) {
    char where[128], msg[640];
    Where(where, sizeof where);
    std::snprintf(
        msg, sizeof msg,
        "gdn_emu: %s of device memory at %p (byte %td of the %zu-byte "
        "allocation at %p) before GridDependencyWait, %s, which the "
        "preceding kernel %s: a race under programmatic dependent launch "
        "(the preceding kernel may still be running)\n",
        write ? "write" : "read", static_cast<const void*>(a), a - r.buffer,
        r.size, static_cast<const void*>(r.buffer), where,
        prev == kWritten ? "writes" : "reads");
    Report(msg);
  }
  uint8_t& cur = r.cur[p];
  if (write) {
    cur = kWritten;
  } else if (cur == kNone) {
    cur = kRead;
  }
  if (kKnowsWrites) {
    Protect(r, p, p + 1);
  } else {
    mprotect(r.pad() + p * PageSize(), PageSize(), PROT_READ | PROT_WRITE);
  }
}

void OnFault(int sig, siginfo_t* info, void* context) {
  const auto* a = static_cast<const unsigned char*>(info->si_addr);
  for (auto& [start, r] : Regions()) {
    if (g_tracking && r.device && a >= r.pad() && a < r.end()) {
      OnTrackedAccess(r, a, IsWrite(context));
      return;
    }
    const bool before = a >= r.map && a < r.pad();
    const bool after = a >= r.end() && a < r.map + r.len;
    if (!before && !after) continue;
    char where[128];
    Where(where, sizeof where);
    ReportOutside(r, a, "access", where);
  }
  // Not a page of ours: the previous disposition takes the fault when the
  // access runs again (a sanitizer's handler, or the default crash).
  sigaction(sig, &g_previous, nullptr);
}

void InstallFaultHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = OnFault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous);
  });
}

// The first byte of [p, end) that is not the pad pattern, or nullptr.
const unsigned char* FirstWritten(const unsigned char* p,
                                  const unsigned char* end) {
  for (; p < end; ++p) {
    if (*p != kPadByte) return p;
  }
  return nullptr;
}

void CheckRegion(const Region& r, const char* after) {
  const unsigned char* w = FirstWritten(r.pad(), r.buffer);
  if (w == nullptr) w = FirstWritten(r.tail(), r.end());
  if (w == nullptr) return;
  char when[160];
  std::snprintf(when, sizeof when, "found after %s", after);
  ReportOutside(r, w, "write", when);
}

}  // namespace

namespace {

void* GuardedAlloc(size_t size, bool device) {
  InstallFaultHandler();
  const size_t page = PageSize();
  const size_t rounded = RoundUp(size == 0 ? 1 : size, kAlign);
  const size_t inner = RoundUp(rounded, page);
  const size_t len = inner + 2 * page;
  void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  Region r;
  r.map = static_cast<unsigned char*>(m);
  r.len = len;
  r.size = size;
  r.device = device;
  if (mprotect(r.pad(), inner, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, len);
    return nullptr;
  }
  r.buffer = r.end() - rounded;
  r.cur.assign(r.pages(), kNone);
  r.prev.assign(r.pages(), kNone);
  r.hits.reserve(r.pages());
  std::memset(r.pad(), kPadByte, r.buffer - r.pad());
  std::memset(r.buffer, kFreshByte, size);
  std::memset(r.tail(), kPadByte, r.end() - r.tail());
  std::lock_guard<std::mutex> lock(g_mu);
  Regions()[reinterpret_cast<uintptr_t>(r.buffer)] = r;
  return r.buffer;
}

bool GuardedFree(void* ptr, bool device, const char* when) {
  Region r;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = Regions().find(reinterpret_cast<uintptr_t>(ptr));
    if (it == Regions().end() || it->second.device != device) return false;
    r = it->second;
    Regions().erase(it);
  }
  CheckRegion(r, when);
  munmap(r.map, r.len);
  return true;
}

}  // namespace

void* DeviceAlloc(size_t size) { return GuardedAlloc(size, /*device=*/true); }

bool DeviceFree(void* ptr) {
  return GuardedFree(ptr, /*device=*/true, "its use (at cudaFree)");
}

void* SharedAlloc(size_t size) { return GuardedAlloc(size, /*device=*/false); }

void SharedFree(void* ptr) {
  GuardedFree(ptr, /*device=*/false, "the kernel launch");
}

void BeginKernel(bool pdl) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!pdl) g_prev_valid = false;  // ordered after the whole preceding launch
  g_tracking = true;
  g_prologue = false;
  for (auto& [start, r] : Regions()) {
    if (!r.device) continue;
    std::fill(r.cur.begin(), r.cur.end(), kNone);
    mprotect(r.pad(), r.end() - r.pad(), PROT_NONE);
  }
}

void BeginPrologue() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_tracking || !g_prev_valid) return;
  g_prologue = true;
  for (auto& [start, r] : Regions()) ProtectHits(r);
}

void EndPrologue() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_prologue) return;
  g_prologue = false;
  for (auto& [start, r] : Regions()) ProtectHits(r);
}

void EndKernel() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_tracking = false;
  g_prologue = false;
  g_prev_valid = true;
  for (auto& [start, r] : Regions()) {
    if (!r.device) continue;
    mprotect(r.pad(), r.end() - r.pad(), PROT_READ | PROT_WRITE);
    r.prev.swap(r.cur);
    r.hits.clear();
    for (size_t p = 0; p < r.prev.size(); ++p) {
      if (r.prev[p] != kNone) r.hits.push_back(static_cast<uint32_t>(p));
    }
  }
}

void HostOrdered() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_prev_valid = false;
}

void CheckDevicePads(const char* after) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& [start, r] : Regions()) CheckRegion(r, after);
}

}  // namespace gdn_emu
