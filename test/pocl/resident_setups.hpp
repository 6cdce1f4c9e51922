// test/pocl/resident_setups.hpp — the runtimes the resident-array suites run each case on: the
// suite's devices zero-copy, the last one driven as discrete, and that with the poison check.
#pragma once

#include <sinew/sinew.hpp>

#include <string>
#include <vector>

namespace sinew::testing {

struct ResidentSetup {
  std::string name;
  RuntimeOptions options;
};

inline std::vector<ResidentSetup> resident_setups() {
  const std::size_t count = Runtime().devices().size();
  return {{"zero_copy", {}},
          {"discrete", RuntimeOptions{.discrete = std::to_string(count - 1)}},
          {"discrete poison check", RuntimeOptions{.discrete = std::to_string(count - 1), .poison_check = true}}};
}

// The poison check runs each request first on host copies of what it writes (brought home from
// the devices): bytes moved and a failing run's effect on an array are counted without it.
inline bool checked(const Runtime& rt) { return *rt.options().poison_check; }

}  // namespace sinew::testing
