#include "gdn/emu/device_memory.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

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

// One mapping: [map, map + page) and [map + len - page, map + len) are
// no-access; the buffer ends at the second one.
struct Region {
  unsigned char* map = nullptr;
  size_t len = 0;
  size_t size = 0;  // as asked
  unsigned char* buffer = nullptr;
  unsigned char* pad() const { return map + PageSize(); }
  unsigned char* tail() const { return buffer + size; }
  unsigned char* end() const { return map + len - PageSize(); }
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

void OnFault(int sig, siginfo_t* info, void* context) {
  const auto* a = static_cast<const unsigned char*>(info->si_addr);
  for (const auto& [start, r] : Regions()) {
    const bool before = a >= r.map && a < r.pad();
    const bool after = a >= r.end() && a < r.map + r.len;
    if (!before && !after) continue;
    char where[128], msg[512];
    Where(where, sizeof where);
    std::snprintf(
        msg, sizeof msg,
        "gdn_emu: out-of-bounds device memory access at %p, %zu bytes %s the "
        "%zu-byte allocation at %p, %s\n",
        static_cast<const void*>(a),
        before ? static_cast<size_t>(r.buffer - a)
               : static_cast<size_t>(a - r.tail()),
        before ? "before" : "past the end of", r.size,
        static_cast<const void*>(r.buffer), where);
    Report(msg);
  }
  // Not a guard page of ours: the previous disposition takes the fault when
  // the access runs again (a sanitizer's handler, or the default crash).
  sigaction(sig, &g_previous, nullptr);
  (void)context;
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
  const bool before = w != nullptr;
  if (!before) w = FirstWritten(r.tail(), r.end());
  if (w == nullptr) return;
  char msg[512];
  std::snprintf(msg, sizeof msg,
                "gdn_emu: out-of-bounds device memory write at %p, %zu bytes "
                "%s the %zu-byte allocation at %p, found after %s\n",
                static_cast<const void*>(w),
                before ? static_cast<size_t>(r.buffer - w)
                       : static_cast<size_t>(w - r.tail()),
                before ? "before" : "past the end of", r.size,
                static_cast<const void*>(r.buffer), after);
  Report(msg);
}

}  // namespace

void* DeviceAlloc(size_t size) {
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
  if (mprotect(r.pad(), inner, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, len);
    return nullptr;
  }
  r.buffer = r.end() - rounded;
  std::memset(r.pad(), kPadByte, r.buffer - r.pad());
  std::memset(r.buffer, kFreshByte, size);
  std::memset(r.tail(), kPadByte, r.end() - r.tail());
  std::lock_guard<std::mutex> lock(g_mu);
  Regions()[reinterpret_cast<uintptr_t>(r.buffer)] = r;
  return r.buffer;
}

bool DeviceFree(void* ptr) {
  Region r;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = Regions().find(reinterpret_cast<uintptr_t>(ptr));
    if (it == Regions().end()) return false;
    r = it->second;
    Regions().erase(it);
  }
  CheckRegion(r, "its use (at cudaFree)");
  munmap(r.map, r.len);
  return true;
}

void CheckDevicePads(const char* after) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& [start, r] : Regions()) CheckRegion(r, after);
}

}  // namespace gdn_emu
