// Device memory of the CPU emulation (runtime.cc's cudaMalloc / cudaFree),
// laid out so that stray accesses show instead of passing unnoticed:
//
//   [no-access page][pad][buffer: size bytes][tail][no-access page]
//
// (buffer + tail = size rounded up to 16 bytes, ending on the second page's
// boundary: the buffer is 16-byte aligned, as the kernels' widest accesses
// need, where cudaMalloc gives 256, and accesses just past it fault).
//   - A read or write past the tail or before the pad's page faults; the
//     fault is reported (the address, which allocation and how far outside
//     it, the block and thread when inside a kernel) and the process aborts,
//     as compute-sanitizer's memcheck would stop the test.
//   - The pad and the tail hold a pattern that is checked after every launch
//     and at cudaFree: a write into them is reported the same way. (A read of
//     them is not caught: the emulation does not instrument loads.)
//   - The buffer starts as 0xff bytes, NaN as fp32 and bf16, standing for the
//     garbage fresh device memory may hold: a kernel or test that reads what
//     nobody wrote gets NaN, not a lucky zero.
#ifndef ROLLOUT_GDN_EMU_DEVICE_MEMORY_H_
#define ROLLOUT_GDN_EMU_DEVICE_MEMORY_H_

#include <cstddef>

namespace gdn_emu {

// A new allocation of `size` bytes (0 allowed: a unique pointer); nullptr
// when the host cannot map it.
void* DeviceAlloc(size_t size);

// Unmaps an allocation (after checking its pad and tail); false when `ptr` is
// not the start of a live allocation.
bool DeviceFree(void* ptr);

// Checks every live allocation's pad and tail; `after` names what just ran
// (for the report). Aborts with a report on the first one written.
void CheckDevicePads(const char* after);

}  // namespace gdn_emu

#endif  // ROLLOUT_GDN_EMU_DEVICE_MEMORY_H_
