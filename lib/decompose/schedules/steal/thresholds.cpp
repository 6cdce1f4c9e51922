// decompose/schedules/steal/thresholds.cpp — the steal schedule's plan items least_range and
// most_range (see thresholds.hpp).
#include "decompose/schedules/steal/thresholds.hpp"

#include "platform/plan_items.hpp"

#include <algorithm>
#include <cmath>

namespace sinew::detail {
namespace {

// `text` read as a threshold; nothing where it does not read.
std::optional<RangeThreshold> read(const std::string& text) {
  RangeThreshold t;
  if (const auto whole = whole_number(text)) {
    t.every = static_cast<std::size_t>(*whole);
    return t;
  }
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('/', at), text.size());
    const std::string item = text.substr(at, end - at);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) return std::nullopt;
    const auto device = whole_number(item.substr(0, colon));
    const auto units = whole_number(item.substr(colon + 1));
    if (!device || !units || *device > 4096) return std::nullopt;
    if (t.device.size() <= *device) t.device.resize(*device + 1, 0);
    t.device[*device] = static_cast<std::size_t>(*units);
    at = end + 1;
  }
  return t;
}

std::string fits(const std::string& text, std::size_t devices) {
  const auto t = read(text);
  return !t || t->device.size() <= devices
             ? ""
             : "device " + std::to_string(t->device.size() - 1) + " of " + text + " is not one of the " +
                   std::to_string(devices) + " devices";
}

const PlanItemRegistrar kLeastRangeItem{PlanItem{.name = "least_range",
                                                 .owner = "the steal schedule",
                                                 .schedule = "steal",
                                                 .accepts = threshold_accepts,
                                                 .fits = fits}};
const PlanItemRegistrar kMostRangeItem{PlanItem{.name = "most_range",
                                                .owner = "the steal schedule",
                                                .schedule = "steal",
                                                .accepts = threshold_accepts,
                                                .fits = fits}};

}  // namespace

std::string threshold_accepts(const std::string& text) {
  return read(text) ? "" : "a whole number of units, or device:units items joined by '/' (1:8192/0:64)";
}

std::string least_range_for_fixed_costs(const std::vector<std::optional<std::pair<double, double>>>& costs,
                                        std::size_t granule) {
  granule = std::max<std::size_t>(1, granule);
  std::string items;
  for (std::size_t d = 0; d < costs.size(); ++d) {
    if (!costs[d]) continue;
    const auto [fixed_ms, ms_per_unit] = *costs[d];
    if (!(fixed_ms > 0) || !(ms_per_unit > 0)) continue;
    const double units = std::ceil(fixed_ms / ms_per_unit / static_cast<double>(granule)) * static_cast<double>(granule);
    // One granule is the schedule's own floor. A fit whose time hardly grows with the work (a
    // cost that is all fixed) says nothing of a range's size: no item either.
    constexpr double kBeyondAnyTree = 1e15;  // units
    if (!(units > static_cast<double>(granule)) || units > kBeyondAnyTree) continue;
    if (!items.empty()) items += '/';
    items += std::to_string(d);
    items += ':';
    items += std::to_string(static_cast<std::size_t>(units));
  }
  return items;
}

RangeThreshold range_threshold(const Config& plan, const char* name) {
  const auto it = plan.items.find(name);
  if (it == plan.items.end()) return {};
  return read(it->second).value_or(RangeThreshold{});
}

}  // namespace sinew::detail
