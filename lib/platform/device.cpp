// platform/device.cpp — discovering platforms and devices and what each can do.
#include "platform/device.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace sinew {

const char* to_string(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::gpu: return "gpu";
    case DeviceKind::accelerator: return "accelerator";
  }
  return "?";
}

std::string DeviceInfo::id() const { return std::string(to_string(kind)) + ":" + std::to_string(kind_index); }

std::uint64_t DeviceInfo::memory() const noexcept {
  return memory_cap ? std::min(memory_cap, global_memory) : global_memory;
}

std::uint64_t DeviceInfo::largest_allocation() const noexcept { return std::min(max_alloc, memory()); }

namespace detail {

namespace {

constexpr const char* kProbeSource = R"(
__kernel void sinew_probe(__global float* x) { x[get_global_id(0)] *= 2.0f; }
)";

std::vector<std::string> partition_types(const cl::Device& d) {
  std::vector<std::string> out;
  std::vector<cl_device_partition_property> props;
  try {
    props = d.getInfo<CL_DEVICE_PARTITION_PROPERTIES>();
  } catch (const cl::Error&) {
    return out;
  }
  for (auto p : props) {
    if (p == CL_DEVICE_PARTITION_EQUALLY) out.emplace_back("equally");
    if (p == CL_DEVICE_PARTITION_BY_COUNTS) out.emplace_back("by_counts");
    if (p == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN) out.emplace_back("by_affinity_domain");
  }
  return out;
}

std::vector<std::string> affinity_domains(const cl::Device& d) {
  std::vector<std::string> out;
  cl_device_affinity_domain dom = 0;
  try {
    dom = d.getInfo<CL_DEVICE_PARTITION_AFFINITY_DOMAIN>();
  } catch (const cl::Error&) {
    return out;
  }
  if (dom & CL_DEVICE_AFFINITY_DOMAIN_NUMA) out.push_back("numa");
  if (dom & CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE) out.push_back("l4_cache");
  if (dom & CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE) out.push_back("l3_cache");
  if (dom & CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE) out.push_back("l2_cache");
  if (dom & CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE) out.push_back("l1_cache");
  return out;
}

std::size_t probe_work_group_multiple(const Device& dev, ProgramCache& cache) {
  try {
    auto program = cache.get(dev.context(), {dev.device()}, {kProbeSource, "<probe>"}, "");
    cl::Kernel k(program, "sinew_probe");
    return std::max<std::size_t>(1, k.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(dev.device()));
  } catch (const std::exception&) {
    return 1;  // a device that cannot build the probe still gets listed
  }
}

// Whether buffers made with CL_MEM_USE_HOST_PTR work on the host memory itself: a driver may keep
// a copy instead (for pointers that are not page-aligned, say) and synchronise it only at maps.
// The probe writes the host memory after creating the buffers, then reads the device's results
// from the host memory with no map: a copy between two buffers at odd addresses (the worst case
// for a partition's slice), and the probe kernel doubling 1 MB of floats in place at an address
// 4 bytes past a page. Any failure or difference answers no (maps stay).
bool probe_host_pointer_aliasing(const Device& dev, ProgramCache& cache) {
  try {
    cl::CommandQueue q(dev.context(), dev.device());
    constexpr std::size_t n = 4096;
    std::vector<unsigned char> a(n + 64), b(n + 64);
    unsigned char* src = a.data() + 1;
    unsigned char* dst = b.data() + 1;
    cl::Buffer from(dev.context(), CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, n, src);
    cl::Buffer to(dev.context(), CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, n, dst);
    for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
    q.enqueueCopyBuffer(from, to, 0, 0, n);
    q.finish();
    if (!std::equal(src, src + n, dst)) return false;

    constexpr std::size_t floats = (1u << 18) + 3;  // 1 MB and a little
    std::vector<float> host(floats + 4096 / sizeof(float) + 1);
    const std::size_t page = 4096 / sizeof(float);
    float* x = host.data() + (page - reinterpret_cast<std::uintptr_t>(host.data()) / sizeof(float) % page) % page + 1;
    cl::Buffer buf(dev.context(), CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, floats * sizeof(float), x);
    for (std::size_t i = 0; i < floats; ++i) x[i] = static_cast<float>(i % 1000);
    auto program = cache.get(dev.context(), {dev.device()}, {kProbeSource, "<probe>"}, "");
    cl::Kernel k(program, "sinew_probe");
    k.setArg(0, buf);
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(floats), cl::NullRange);
    q.finish();
    for (std::size_t i = 0; i < floats; ++i)
      if (x[i] != 2.0f * static_cast<float>(i % 1000)) return false;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Device::Device(DeviceInfo info, cl::Platform platform, cl::Device device)
    : info_(std::move(info)), platform_(std::move(platform)), device_(std::move(device)) {
  cl_call({.api_call = "clCreateContext", .device = info_.name}, [&] { context_ = cl::Context(device_); });
}

cl::CommandQueue Device::make_queue(const cl::Context& context, const cl::Device& device, bool profile) {
  return cl_call({.api_call = "clCreateCommandQueue"}, [&] {
    return profile ? cl::CommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE) : cl::CommandQueue(context, device);
  });
}

std::vector<std::unique_ptr<Device>> discover_devices(ProgramCache& cache, bool map_zero_copy) {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {
    platforms.clear();  // the ICD loader reports "no platform" as an error
  }
  if (platforms.empty())
    throw_error(errc::no_device, "no OpenCL platform found",
                {.fix = "install an OpenCL driver; for CPUs: apt-get install pocl-opencl-icd (check with clinfo -l)"});
  std::vector<std::unique_ptr<Device>> out;
  std::size_t counts[3] = {0, 0, 0};
  for (auto& p : platforms) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;  // a platform without devices
    }
    for (auto& d : devices) {
      DeviceInfo info;
      cl_device_type type = d.getInfo<CL_DEVICE_TYPE>();
      info.kind = (type & CL_DEVICE_TYPE_GPU) ? DeviceKind::gpu
                  : (type & CL_DEVICE_TYPE_CPU) ? DeviceKind::cpu
                                                : DeviceKind::accelerator;
      info.index = out.size();
      info.kind_index = counts[static_cast<int>(info.kind)]++;
      info.platform = p.getInfo<CL_PLATFORM_NAME>();
      info.platform_version = p.getInfo<CL_PLATFORM_VERSION>();
      info.name = d.getInfo<CL_DEVICE_NAME>();
      info.vendor = d.getInfo<CL_DEVICE_VENDOR>();
      info.driver_version = d.getInfo<CL_DRIVER_VERSION>();
      info.opencl_version = d.getInfo<CL_DEVICE_VERSION>();
      info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
      info.global_memory = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
      info.local_memory = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
      info.max_alloc = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
      info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
      try {
        info.host_unified_memory = d.getInfo<CL_DEVICE_HOST_UNIFIED_MEMORY>();
      } catch (const cl::Error&) {
        info.host_unified_memory = info.kind == DeviceKind::cpu;
      }
      info.partition_types = partition_types(d);
      info.discrete = info.kind != DeviceKind::cpu;
      if (info.discrete)
        info.overlap_levels = {1, 2, 3, 4};
      else
        info.fission_configs = cpu_fission_configs(info.compute_units, info.partition_types, affinity_domains(d));
      auto dev = std::make_unique<Device>(std::move(info), p, d);
      dev->mutable_info().preferred_work_group_multiple = probe_work_group_multiple(*dev, cache);
      // map_zero_copy keeps the maps whatever the probe would say (for checking that path).
      if (dev->info().host_unified_memory && !map_zero_copy)
        dev->mutable_info().host_pointer_aliased = probe_host_pointer_aliasing(*dev, cache);
      out.push_back(std::move(dev));
    }
  }
  if (out.empty())
    throw_error(errc::no_device, "OpenCL platforms found (" + std::to_string(platforms.size()) + ") but no devices",
                {.fix = "check the drivers with clinfo -l; for CPUs: apt-get install pocl-opencl-icd"});
  return out;
}

}  // namespace detail
}  // namespace sinew
