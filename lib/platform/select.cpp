// platform/select.cpp — device selections ("all", "cpu", "gpu:0,cpu:1") against the devices found.
#include "platform/error.hpp"
#include "platform/items.hpp"

#include <sinew/device.hpp>

#include <algorithm>
#include <cctype>

namespace sinew {

std::vector<std::size_t> select_devices(const std::vector<DeviceInfo>& devices, const std::string& spec,
                                        const std::string& where) {
  auto found = [&] {
    std::string s;
    for (const auto& d : devices) s += (s.empty() ? "" : ", ") + d.id() + " (" + d.name + ")";
    return s.empty() ? std::string("none") : s;
  };
  auto fail = [&](const std::string& what) {
    detail::throw_error(errc::no_device, what,
                        {.argument = where + " = '" + spec + "'",
                         .fix = "choose among the devices found: " + found() +
                                "; use all, cpu, gpu, accelerator, kind:N or a global index (no OpenCL CPU device at all: "
                                "apt-get install pocl-opencl-icd; several PoCL devices: POCL_DEVICES=\"pthread pthread\")"});
  };
  std::vector<std::size_t> out;
  auto add = [&](std::size_t i) {
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  };
  for (std::string item : detail::split_items(spec)) {
    std::transform(item.begin(), item.end(), item.begin(), ::tolower);
    if (item == "all") {
      for (const auto& d : devices) add(d.index);
      continue;
    }
    std::string kind = item, index;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      kind = item.substr(0, colon);
      index = item.substr(colon + 1);
    }
    if (!kind.empty() && std::all_of(kind.begin(), kind.end(), ::isdigit) && index.empty()) {
      if (kind.size() > 9 || std::stoul(kind) >= devices.size()) fail("no device with index " + kind);
      const std::size_t i = std::stoul(kind);
      add(i);
      continue;
    }
    if (kind != "cpu" && kind != "gpu" && kind != "accelerator" && kind != "acc")
      fail("'" + item + "' is not a device kind");
    if (kind == "acc") kind = "accelerator";
    if (!index.empty() && (index.size() > 9 || !std::all_of(index.begin(), index.end(), ::isdigit)))
      fail("'" + item + "': bad index");
    bool any = false;
    for (const auto& d : devices) {
      if (to_string(d.kind) != kind) continue;
      if (!index.empty() && d.kind_index != std::stoul(index)) continue;
      add(d.index);
      any = true;
    }
    if (!any) fail("no device matches '" + item + "'");
  }
  if (out.empty()) fail("the selection names no device");
  return out;
}

}  // namespace sinew
