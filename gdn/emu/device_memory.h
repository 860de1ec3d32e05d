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

// A launch's dynamic shared memory, guarded the same way (an access past the
// size the launch asked for faults and is reported), but not tracked: the
// emulator fills it with 0xff before every block. Freed after the launch
// (checking its pad and tail).
void* SharedAlloc(size_t size);
void SharedFree(void* ptr);

// Checks every live allocation's pad and tail; `after` names what just ran
// (for the report). Aborts with a report on the first one written.
void CheckDevicePads(const char* after);

// Access tracking, for the check of programmatic dependent launch (PDL). A
// kernel launched with PDL (cudaLaunchAttributeProgrammaticStreamSerialization)
// may start while the kernel before it in the stream still runs, and sees
// that kernel's memory only after its GridDependencyWait (griddepcontrol.wait).
// So until then it must not read what that kernel writes, nor write what it
// reads or writes. The emulation records, page by page, what each launch read
// and wrote (every page starts no-access inside a launch; the first access of
// each faults and is recorded), and runs each block of a PDL launch with the
// preceding launch's pages off limits until the block's threads all wait at
// GridDependencyWait (or are done or blocked): the latest point at which the
// preceding kernel may complete. An access to them before that is reported
// (which access, allocation, block and thread) and the process aborts.
// Granularity: 4 KB pages, so two buffers never share one (each allocation
// has its own pages), but a kernel's accesses to one part of a buffer and the
// next kernel's to another part of the same page count as the same memory.
void BeginKernel(bool pdl);  // a launch starts (pdl: with the attribute)
void BeginPrologue();        // a block of a PDL launch starts
void EndPrologue();          // its threads wait at GridDependencyWait
void EndKernel();            // the launch ended
// A copy, set or synchronisation: the next launch follows it, not a kernel.
void HostOrdered();

}  // namespace gdn_emu

#endif  // ROLLOUT_GDN_EMU_DEVICE_MEMORY_H_
