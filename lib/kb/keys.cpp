// kb/keys.cpp — what a knowledge-base key is made of: the device-set signature, and make_kb_key
// (tree signature, device set, library version).
#include <sinew/device.hpp>
#include <sinew/kb.hpp>
#include <sinew/version.hpp>

namespace sinew {

std::string device_set_signature(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const auto& d : devices) {
    if (!out.empty()) out += "; ";
    out += d.id() + " " + d.name + " (" + d.platform;
    if (!d.platform_version.empty()) out += ", " + d.platform_version;
    out += ", driver " + d.driver_version + ", " + std::to_string(d.compute_units) + " CUs)";
    // GPUs are always discrete; a CPU driven as one (testing) behaves differently.
    if (d.discrete != (d.kind != DeviceKind::cpu)) out += d.discrete ? " discrete" : " unified";
  }
  return out;
}

std::size_t device_count(const std::string& device_set) {
  if (device_set.empty()) return 0;
  std::size_t n = 1;
  for (std::size_t at = device_set.find("; "); at != std::string::npos; at = device_set.find("; ", at + 2)) ++n;
  return n;
}

KbKey make_kb_key(std::string tree, const std::vector<DeviceInfo>& devices) {
  return {std::move(tree), device_set_signature(devices), sinew::version};
}

}  // namespace sinew
