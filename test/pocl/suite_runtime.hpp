// test/pocl/suite_runtime.hpp — the suites' runtimes: one per mode (zero copy, and the last
// device driven like a GPU) for a whole test binary, so programs are built once per context.
#pragma once

#include <sinew/sinew.hpp>

#include <cstddef>
#include <string>

namespace sinew::testing {

// The devices this suite's PoCL exposes (POCL_DEVICES: 1, 2 or 3).
inline std::size_t device_count() {
  static const std::size_t count = Runtime().devices().size();
  return count;
}

inline Runtime& runtime(bool discrete) {
  static Runtime zero_copy;
  static Runtime emulated(RuntimeOptions{.discrete = std::to_string(device_count() - 1)});
  return discrete ? emulated : zero_copy;
}

}  // namespace sinew::testing
