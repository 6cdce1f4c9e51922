// schedule/balancer.cpp — what every online balancer reports of a run: its deviation
// (schedule/balancer.hpp).
#include "schedule/balancer.hpp"

#include <algorithm>

namespace sinew::detail {

double deviation(const Config& c, const std::vector<double>& device_ms) {
  double lo = 0, hi = 0;
  int active = 0;
  for (std::size_t d = 0; d < c.shares.size() && d < device_ms.size(); ++d) {
    if (c.shares[d] <= 0 || device_ms[d] <= 0) continue;
    lo = active ? std::min(lo, device_ms[d]) : device_ms[d];
    hi = active ? std::max(hi, device_ms[d]) : device_ms[d];
    ++active;
  }
  return active < 2 ? 0.0 : 1.0 - lo / hi;
}

}  // namespace sinew::detail
