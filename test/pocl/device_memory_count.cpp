// test/pocl/device_memory_count.cpp — clCreateBuffer as this program defines it: the OpenCL
// library's, with each buffer of device memory counted against its device until its destructor
// callback (see device_memory_count.hpp). The program exports the symbol (ENABLE_EXPORTS), so the
// libraries it loads (Sinew, clFFT, CLBlast) call this one.
#include "pocl/device_memory_count.hpp"

#include <CL/cl.h>

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace {

struct Counts {
  std::mutex mutex;
  std::map<cl_device_id, sinew::testing::DeviceMemory> by_device;
  std::size_t buffers = 0;
};
Counts& counts() {
  static Counts* c = new Counts;  // never destroyed: callbacks may come as the program exits
  return *c;
}

struct Counted {
  cl_device_id device;
  std::size_t bytes;
};

cl_device_id root_device(cl_context context) {
  cl_device_id device = nullptr;
  if (clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr) != CL_SUCCESS) return nullptr;
  for (cl_device_id parent = nullptr;
       clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, nullptr) == CL_SUCCESS && parent;)
    device = parent;
  return device;
}

void CL_CALLBACK destroyed(cl_mem, void* data) {
  auto* c = static_cast<Counted*>(data);
  {
    std::lock_guard lock(counts().mutex);
    counts().by_device[c->device].now -= c->bytes;
  }
  delete c;
}

}  // namespace

extern "C" CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                                          void* host_ptr, cl_int* errcode_ret) {
  using Create = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, size_t, void*, cl_int*);
  static const auto opencl = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "clCreateBuffer"));
  cl_mem buffer = opencl(context, flags, size, host_ptr, errcode_ret);
  if (!buffer || (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR))) return buffer;
  auto* c = new Counted{root_device(context), size};
  {
    std::lock_guard lock(counts().mutex);
    auto& d = counts().by_device[c->device];
    d.most = std::max(d.most, d.now += size);
    ++counts().buffers;
  }
  if (clSetMemObjectDestructorCallback(buffer, destroyed, c) != CL_SUCCESS) {
    std::lock_guard lock(counts().mutex);
    counts().by_device[c->device].now -= size;  // not followed: not counted
    delete c;
  }
  return buffer;
}

namespace sinew::testing {

std::vector<DeviceMemory> device_memory() {
  cl_platform_id platform = nullptr;
  cl_uint n = 0;
  std::vector<DeviceMemory> out;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS)
    return out;
  std::vector<cl_device_id> ids(n);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr);
  std::lock_guard lock(counts().mutex);
  for (cl_device_id id : ids) out.push_back(counts().by_device[id]);
  return out;
}

void start_device_memory_window() {
  std::lock_guard lock(counts().mutex);
  for (auto& [device, d] : counts().by_device) d.most = d.at_start = d.now;
}

std::size_t counted_buffers() {
  std::lock_guard lock(counts().mutex);
  return counts().buffers;
}

}  // namespace sinew::testing
