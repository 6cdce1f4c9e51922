// sinew/device.hpp — what Sinew knows about the machine's OpenCL devices.
//
// DeviceInfo is a plain value (copyable, no OpenCL handles); the Runtime owns the live devices.
// The execution platforms of the spec are visible here: a CPU device lists its fission
// configurations (from the hwloc topology) and a GPU its overlap levels, as lists the trainer walks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinew {

/// What an OpenCL device is (CL_DEVICE_TYPE): a CPU, a GPU or another accelerator.
enum class DeviceKind { cpu, gpu, accelerator };
/// "cpu", "gpu" or "accelerator": the spelling in device ids, reports and $SINEW_DEVICES.
const char* to_string(DeviceKind kind) noexcept;

/// One way to split a CPU device into sub-devices ("fission"). `groups` holds the number of
/// compute units of each sub-device; an empty list means no fission (the whole device).
struct FissionConfig {
  std::string name;                 ///< "none", "L1", "L2", "L3", "L4", "numa"
  std::vector<unsigned> groups;     ///< compute units per sub-device
  std::string method;               ///< "affinity_domain", "by_counts", "equally" or "" for none
  std::vector<std::string> same_as; ///< other cache levels that give the very same groups

  /// The whole device, not split.
  bool is_none() const noexcept { return groups.empty(); }
  /// How many sub-devices (partitions) it gives: 1 for none.
  std::size_t sub_devices() const noexcept { return groups.empty() ? 1 : groups.size(); }
  /// Every field equal.
  friend bool operator==(const FissionConfig&, const FissionConfig&) = default;
};

/// One OpenCL device as the runtime sees and drives it (`sinew devices` prints these).
struct DeviceInfo {
  std::size_t index = 0;            ///< position in the runtime's device list
  std::size_t kind_index = 0;       ///< position among devices of the same kind ("gpu:1")
  DeviceKind kind = DeviceKind::cpu;  ///< CPU, GPU or accelerator
  std::string platform;              ///< the OpenCL platform's name
  std::string platform_version;      ///< the platform's version string
  std::string name;                  ///< CL_DEVICE_NAME
  std::string vendor;                ///< CL_DEVICE_VENDOR
  std::string driver_version;        ///< CL_DRIVER_VERSION
  std::string opencl_version;       ///< device's OpenCL version string
  unsigned compute_units = 0;       ///< CL_DEVICE_MAX_COMPUTE_UNITS
  std::uint64_t global_memory = 0;  ///< bytes
  std::uint64_t local_memory = 0;   ///< bytes
  std::uint64_t max_alloc = 0;      ///< bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE
  /// RuntimeOptions::memory_cap for this device, in bytes; 0: none.
  std::uint64_t memory_cap = 0;
  std::size_t max_work_group_size = 0;  ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::size_t preferred_work_group_multiple = 1;  ///< warp / wavefront / SIMD width (probed)
  bool host_unified_memory = false;  ///< CL_DEVICE_HOST_UNIFIED_MEMORY: shares memory with the host
  /// A CL_MEM_USE_HOST_PTR buffer is the host memory itself, at any alignment (probed for
  /// host-unified devices: PoCL's CPU devices). Then a zero-copy slice's results are in the
  /// user's memory once its kernels end, with no map and unmap to wait for.
  bool host_pointer_aliased = false;
  /// Driven as a discrete device: explicit transfers, overlap queues, no fission. True for GPUs
  /// and accelerators; a CPU device gets it only through RuntimeOptions::discrete (for testing
  /// the GPU paths on CPU-only machines).
  bool discrete = false;
  std::vector<std::string> partition_types;       ///< "equally", "by_counts", "by_affinity_domain"
  std::vector<FissionConfig> fission_configs;     ///< non-discrete (CPU) only; first is "none"
  std::vector<unsigned> overlap_levels;           ///< discrete only: 1..4 queues
  /// The kind whose implementation a leaf with per-kind variants (sinew::variants) runs here, where
  /// it is not `kind`: RuntimeOptions::variant_gpu sets gpu (for testing GPU variants on CPU-only
  /// machines). Unset: `kind`.
  std::optional<DeviceKind> variant_kind_override;
  /// The kind a leaf's variant is chosen by: variant_kind_override, else kind.
  DeviceKind variant_kind() const { return variant_kind_override.value_or(kind); }

  /// "cpu:0", "gpu:1": how SINEW_DEVICES names this device.
  std::string id() const;
  /// The device memory Sinew may use: global_memory, or memory_cap where that is less. Every
  /// buffer a run allocates on the device, together, stays within it (streamable trees drag a
  /// larger share through; the planner moves the rest of other trees elsewhere).
  std::uint64_t memory() const noexcept;
  /// The largest single buffer: max_alloc, within memory().
  std::uint64_t largest_allocation() const noexcept;
};

/// Parses a device selection ("all", "cpu", "gpu:0,cpu:1") against the given devices and returns
/// the chosen indices in the order given. Throws sinew::Error(errc::no_device) naming what exists;
/// `where` names the setting in the message.
std::vector<std::size_t> select_devices(const std::vector<DeviceInfo>& devices, const std::string& spec,
                                        const std::string& where = "RuntimeOptions::devices ($SINEW_DEVICES)");

}  // namespace sinew
