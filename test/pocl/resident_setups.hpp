// test/pocl/resident_setups.hpp — what the resident-array suites share: the runtimes each case
// runs on (the suite's devices zero-copy, the last one driven as discrete, and that with the
// poison check), a plan of shares, and start values.
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

// A static plan of these shares.
inline RunOptions shares_plan(const std::vector<double>& shares) {
  Config c;
  c.shares = shares;
  return RunOptions{.config = c};
}

// Every device the shares give work to is driven as discrete.
inline bool discrete_only(const Runtime& rt, const std::vector<double>& shares) {
  for (std::size_t d = 0; d < shares.size(); ++d)
    if (shares[d] > 0 && !rt.devices()[d].discrete) return false;
  return true;
}

// `n` small whole numbers as floats, different for each seed (exact under the suites' kernels).
inline std::vector<float> start_values(std::size_t n, std::size_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed * 3) % 11);
  return v;
}

}  // namespace sinew::testing
