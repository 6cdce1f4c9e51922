// decompose/decompose.cpp — granularity, and the split of a plan's units as its schedule policy
// makes it (decompose/schedule_policy.hpp); the texts its messages share.
#include "decompose/decompose.hpp"

#include "decompose/schedule_policy.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

std::size_t granularity(const NodeImpl& root, const Analysis& an, const std::vector<DeviceInfo>& devices) {
  GranuleRules rules;
  visit(root, [&](const NodeImpl& n) { n.constrain(rules, devices); });
  std::size_t both = std::lcm(rules.hard, rules.soft);
  return an.units % both == 0 ? both : rules.hard;
}

std::size_t plan_granularity(const NodeImpl& root, std::size_t granule, const Config& config) {
  visit(root, [&](const NodeImpl& n) { granule = std::lcm(granule, n.plan_granule(config)); });
  return granule;
}

std::string size_text(std::uint64_t bytes) {
  std::ostringstream s;
  const char* units[] = {"KB", "MB", "GB", "TB"};
  int u = -1;
  double v = static_cast<double>(bytes);
  while (u < 3 && v >= 1024) {
    v /= 1024;
    ++u;
  }
  if (u < 0) return std::to_string(bytes) + " bytes";
  s << std::fixed << std::setprecision(1) << v << " " << units[u] << " (" << bytes << " bytes)";
  return s.str();
}

std::string memory_text(const DeviceInfo& info) {
  std::string s = info.memory_cap && info.memory_cap < info.global_memory
                      ? "its memory cap of " + size_text(info.memory()) +
                            " (RuntimeOptions::memory_cap, $SINEW_MEMORY_CAP; the device has " +
                            size_text(info.global_memory) + ")"
                      : "its memory of " + size_text(info.memory());
  if (info.largest_allocation() < info.memory())
    s += " or its largest allocation of " + size_text(info.largest_allocation());
  return s;
}

const ScheduleTuning& checked_tuning(const ScheduleTuning& tuning) {
  auto require = [](bool ok, const char* name, double value, const char* range) {
    if (ok) return;
    std::ostringstream v;
    v << value;
    throw_error(errc::invalid_argument,
                std::string("RuntimeOptions::schedule_tuning.") + name + " is " + v.str() + ", not " + range,
                {.argument = std::string("schedule_tuning.") + name, .fix = std::string("give it ") + range});
  };
  const auto& d = tuning.dynamic;
  const auto& s = tuning.streaming;
  require(d.divisor >= 1, "dynamic.divisor", d.divisor, "a number of at least 1");
  require(d.least_chunk_parts >= 1, "dynamic.least_chunk_parts", static_cast<double>(d.least_chunk_parts),
          "a whole number of at least 1");
  require(d.negligible >= 0 && d.negligible < 1, "dynamic.negligible", d.negligible, "a fraction in [0, 1)");
  require(d.slow_share >= 1, "dynamic.slow_share", d.slow_share, "a number of at least 1");
  require(d.slow_margin >= 1, "dynamic.slow_margin", d.slow_margin, "a number of at least 1");
  require(d.probe_interval >= 1, "dynamic.probe_interval", d.probe_interval, "a whole number of at least 1");
  require(d.slowdown > 1, "dynamic.slowdown", d.slowdown, "a number above 1");
  const auto& w = tuning.steal;
  require(w.least_range_parts >= 1, "steal.least_range_parts", static_cast<double>(w.least_range_parts),
          "a whole number of at least 1");
  require(w.piece_fraction > 0 && w.piece_fraction <= 1, "steal.piece_fraction", w.piece_fraction,
          "a fraction in (0, 1]");
  require(w.first_piece_fraction > 0 && w.first_piece_fraction <= 1, "steal.first_piece_fraction",
          w.first_piece_fraction, "a fraction in (0, 1]");
  require(w.leave_out_part >= 0 && w.leave_out_part < 1, "steal.leave_out_part", w.leave_out_part,
          "a fraction in [0, 1)");
  require(w.leave_out_runs >= 1, "steal.leave_out_runs", static_cast<double>(w.leave_out_runs),
          "a whole number of at least 1");
  require(w.leave_out_interval >= w.leave_out_runs, "steal.leave_out_interval",
          static_cast<double>(w.leave_out_interval), "a whole number of at least steal.leave_out_runs");
  require(s.min_chunk_bytes >= 1, "streaming.min_chunk_bytes", static_cast<double>(s.min_chunk_bytes),
          "a whole number of at least 1");
  require(s.max_chunk_bytes >= s.min_chunk_bytes, "streaming.max_chunk_bytes", static_cast<double>(s.max_chunk_bytes),
          "at least streaming.min_chunk_bytes");
  return tuning;
}

std::string device_text(const DeviceInfo& info) { return info.id() + " (" + info.name + ")"; }

Config fit_memory(const Config& config, std::size_t total, std::size_t granule, const std::vector<DeviceInfo>& devices,
                  const Streaming& streaming) {
  return schedule_policy_of(config).fit_memory(config, total, granule, devices, streaming);
}

Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                        const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  config.check(devices);
  return schedule_policy_of(config).decompose(total, std::max<std::size_t>(1, granule), config, devices, streaming);
}

std::string Decomposition::explain(const std::vector<DeviceInfo>& devices) const {
  return policy ? policy->explain(*this, devices) : schedule_policy_of(config).explain(*this, devices);
}

}  // namespace sinew::detail
