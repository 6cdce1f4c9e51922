// platform/device.hpp — live OpenCL devices: discovery, probing, fission, queues.
#pragma once

#include "platform/cl.hpp"
#include "platform/program_cache.hpp"

#include <sinew/device.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sinew::detail {

// A set of sub-devices of one CPU device for one fission configuration, in their own context.
struct FissionSet {
  FissionConfig config;
  std::vector<cl::Device> devices;  // one per group; the root device itself for "none"
  cl::Context context;
};

class Device {
 public:
  Device(DeviceInfo info, cl::Platform platform, cl::Device device);

  const DeviceInfo& info() const { return info_; }
  const cl::Device& device() const { return device_; }
  // The device's context: its own from discovery (where its probes ran), or the one it shares
  // with the other discrete devices of its platform (share_context).
  const cl::Context& context() const { return context_; }
  // From now on the device's buffers, queues and programs live in `context`, which holds it and
  // other devices of its platform. Called before any of them is made.
  void share_context(cl::Context context) { context_ = std::move(context); }
  const cl::Platform& platform() const { return platform_; }
  bool is_cpu() const { return info_.kind == DeviceKind::cpu; }

  // The sub-devices of a fission configuration, created on first use and kept.
  // Throws sinew::Error(errc::invalid_argument) for a name this device does not offer.
  const FissionSet& fission(const std::string& name);

  // An in-order queue in `context` for `device`, with profiling when `profile`.
  static cl::CommandQueue make_queue(const cl::Context& context, const cl::Device& device, bool profile = false);

  DeviceInfo& mutable_info() { return info_; }

  // Whether the driver runs this device's commands on the thread that enqueues them (PoCL's
  // "basic" device does): then no other device's work may be enqueued behind them on that
  // thread. Learned from two requests that showed it.
  bool runs_at_enqueue() const { return ran_at_enqueue_.load(std::memory_order_relaxed) >= 2; }
  void note_ran_at_enqueue() { ran_at_enqueue_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DeviceInfo info_;
  cl::Platform platform_;
  cl::Device device_;
  cl::Context context_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<FissionSet>> fissions_;
  std::atomic<int> ran_at_enqueue_{0};
};

// Every device of every platform, in platform order. The preferred work-group multiple is probed
// by building a small kernel (through `cache`). Throws errc::no_device when there is no platform.
// `map_zero_copy` (RuntimeOptions::map_zero_copy) skips the probe of host-pointer aliasing, so
// zero-copy results are always mapped.
std::vector<std::unique_ptr<Device>> discover_devices(ProgramCache& cache, bool map_zero_copy = false);

// Fission configurations for a CPU device with `compute_units` compute units, from the hwloc
// topology of this machine. The first is always "none".
std::vector<FissionConfig> cpu_fission_configs(unsigned compute_units, const std::vector<std::string>& partition_types,
                                               const std::vector<std::string>& affinity_domains);

// Builds fission configurations from a description of the topology: for each level name
// ("L1".."L4", "numa"), the processing units of each object at that level. Exposed for tests.
struct TopologyLevel {
  std::string name;
  std::vector<unsigned> pus_per_object;
};
std::vector<FissionConfig> fission_configs_from_topology(unsigned compute_units, const std::vector<TopologyLevel>& levels,
                                                         const std::vector<std::string>& partition_types,
                                                         const std::vector<std::string>& affinity_domains);

}  // namespace sinew::detail
