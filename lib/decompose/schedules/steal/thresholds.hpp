// decompose/schedules/steal/thresholds.hpp — the steal schedule's size thresholds, plan items it
// registers (Tascell's th1/th2): least_range, the least units a queue takes (a piece of its own
// range, a stolen range), and most_range, the most it takes at once. Each is a whole number of
// units for every device ("least_range=4096") or device:units items joined by '/' for some
// ("least_range=1:8192/0:64", "most_range=0:2048"): a GPU that should take no range smaller than
// its fixed cost pays for, a CPU queue that should hold no range larger than a thief would want.
#pragma once

#include <sinew/config.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

struct RangeThreshold {
  std::optional<std::size_t> every;  // the plain number: every device's
  std::vector<std::size_t> device;   // per runtime device (0: none), over the devices the plan names
};

// The least_range item training sets (docs/decisions/141): per device with a fixed cost, the units
// whose work takes as long as that cost, in whole granules (so that no range a device takes spends
// more than half its time on its fixed cost: launches, transfers' latencies, the host's wait);
// "" where no device's cost gives more than one granule. `costs`: per runtime device, fixed ms
// and ms per unit (nothing: not known, or a device the plan gives no share). No most_range: a
// fixed cost bounds a range from below only.
std::string least_range_for_fixed_costs(const std::vector<std::optional<std::pair<double, double>>>& costs,
                                        std::size_t granule);

// Plan item `name` (least_range or most_range) of `plan`; nothing set: no threshold. Checked by
// Config::parse and Config::check already (its registered row).
RangeThreshold range_threshold(const Config& plan, const char* name);
// What `text` is, as the item's rows check it: "" when it reads.
std::string threshold_accepts(const std::string& text);

}  // namespace sinew::detail
