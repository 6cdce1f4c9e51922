// test/pocl/device_memory_count.hpp — the device memory this process holds, counted where OpenCL
// allocates it: the drag tests' program defines clCreateBuffer itself (device_memory_count.cpp),
// so every buffer Sinew, clFFT or CLBlast creates passes through it. A buffer of device memory (not
// CL_MEM_USE_HOST_PTR, not CL_MEM_ALLOC_HOST_PTR) counts against the root device of its context
// from its creation until OpenCL destroys it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sinew::testing {

// The bytes of device memory held on each OpenCL device (in the order of the first platform's
// devices, as the runtime numbers PoCL's): now, the most at once since the last
// start_device_memory_window(), and what it held as that began (other runtimes' pooled buffers).
struct DeviceMemory {
  std::uint64_t now = 0, most = 0, at_start = 0;
  std::uint64_t most_since_start() const { return most - at_start; }
};
std::vector<DeviceMemory> device_memory();
// Starts counting the most at once afresh, from what each device holds now.
void start_device_memory_window();
// How many buffers were counted since the program began (0: the count is not in effect).
std::size_t counted_buffers();

}  // namespace sinew::testing
