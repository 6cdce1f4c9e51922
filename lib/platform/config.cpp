// platform/config.cpp — printing, parsing and checking plans (Config).
#include "platform/error.hpp"
#include "platform/items.hpp"
#include "platform/plan_items.hpp"
#include "platform/settings.hpp"

#include <sinew/config.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

namespace sinew {

std::string_view to_string(Schedule s) noexcept { return s == Schedule::dynamic ? "dynamic" : "static"; }

std::optional<Schedule> schedule_from_string(std::string_view text) noexcept {
  if (text == "static") return Schedule::static_;
  if (text == "dynamic") return Schedule::dynamic;
  return std::nullopt;
}

namespace detail {
namespace {
// A plan item's whole number (digits only, at most 18: it fits 64 bits).
std::optional<unsigned long long> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), ::isdigit)) return std::nullopt;
  return std::stoull(text);
}
}  // namespace

const std::vector<PlanItem>& plan_items() {
  // One row per item (plan_items.hpp). Never destroyed: a static Runtime's knowledge-base writer
  // stores plans (through these rows) while the process's statics are destroyed.
  static const auto* const kItems = new std::vector<PlanItem>{
      // Divide and conquer (sinew::divide_and_conquer): the levels below it run split by the
      // shares, the levels from it up on the `upper` device.
      {"crossover",
       [](const Config& c) { return c.crossover ? std::optional<std::string>(std::to_string(*c.crossover)) : std::nullopt; },
       [](Config& c, const std::string& text) -> std::string {
         const auto level = whole_number(text);
         if (!level || *level > kMaxCrossover) return "a level from 0 to " + std::to_string(kMaxCrossover);
         c.crossover = static_cast<unsigned>(*level);
         return "";
       }},
      {"upper",
       [](const Config& c) { return c.upper ? std::optional<std::string>(std::to_string(*c.upper)) : std::nullopt; },
       [](Config& c, const std::string& text) -> std::string {
         const auto device = whole_number(text);
         if (!device) return "a runtime device index (0, 1, ...)";
         c.upper = static_cast<std::size_t>(*device);
         return "";
       }},
      // The dynamic schedule (Config::schedule): chunks taken while the run goes.
      {"schedule",
       [](const Config& c) -> std::optional<std::string> {
         if (c.schedule == Schedule::static_) return std::nullopt;
         return std::string(to_string(c.schedule));
       },
       [](Config& c, const std::string& text) -> std::string {
         auto s = schedule_from_string(text);
         if (!s) return "'static' or 'dynamic'";
         c.schedule = *s;
         return "";
       }},
      {"min_chunk",
       [](const Config& c) -> std::optional<std::string> {
         if (!c.min_chunk) return std::nullopt;
         return std::to_string(c.min_chunk);
       },
       [](Config& c, const std::string& text) -> std::string {
         const auto units = whole_number(text);
         if (!units) return "a whole number of units";
         c.min_chunk = static_cast<std::size_t>(*units);
         return "";
       }},
  };
  return *kItems;
}

const PlanItem* find_plan_item(const std::string& name) {
  for (const auto& item : plan_items())
    if (name == item.name) return &item;
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> plan_item_values(const Config& c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : plan_items())
    if (auto v = item.get(c)) out.emplace_back(item.name, *v);
  return out;
}

}  // namespace detail

Config Config::single(std::size_t device, std::size_t device_count) {
  Config c;
  c.shares.assign(device_count, 0.0);
  c.shares.at(device) = 1.0;
  return c;
}

void Config::check(std::size_t device_count, const std::string& where) const {
  auto bad = [&](const std::string& what, const std::string& fix) {
    detail::throw_error(errc::invalid_argument, where + " " + str() + ": " + what, {.argument = where, .fix = fix});
  };
  if (shares.size() != device_count)
    bad("has " + std::to_string(shares.size()) + " shares for " + std::to_string(device_count) + " devices",
        "give one share per device of Runtime::devices()");
  double sum = 0;
  for (double s : shares) {
    if (!(s >= 0) || !std::isfinite(s)) bad("a share is negative or not a number", "use shares >= 0 that add up to 1");
    sum += s;
  }
  if (!(std::abs(sum - 1.0) <= kShareTolerance)) {
    std::ostringstream total;
    total << std::setprecision(10) << sum;
    bad("the shares add up to " + total.str() + ", not 1",
        "give shares that add up to 1 (within 1e-6), e.g. divide each by their sum");
  }
  constexpr auto overlaps = detail::rule::overlap;  // what a plan's overlap may be, in text or in code
  if (overlap < overlaps.min || overlap > overlaps.max)
    bad("overlap " + std::to_string(overlap) + " is outside " + std::to_string(overlaps.min) + ".." +
            std::to_string(overlaps.max),
        "use an overlap level such as 1..4");
  if (crossover && *crossover > kMaxCrossover)
    bad("crossover level " + std::to_string(*crossover) + " is beyond " + std::to_string(kMaxCrossover),
        "use a crossover level from 0 (every level on one device) to the tree's levels");
  if (upper && *upper >= device_count)
    bad("upper device " + std::to_string(*upper) + " is not one of the " + std::to_string(device_count) + " devices",
        "name a device by its index in Runtime::devices()");
  static const std::set<std::string> kFissions = {"none", "L1", "L2", "L3", "L4", "numa"};
  if (!kFissions.count(fission))
    bad("'" + fission + "' is no fission configuration", "use none, L1, L2, L3, L4 or numa (see `sinew devices`)");
  if (min_chunk && schedule != Schedule::dynamic)
    bad("min_chunk " + std::to_string(min_chunk) + " is given with the static schedule, which has no chunks to size",
        "add schedule=dynamic, or leave min_chunk out");
}

void Config::check(const std::vector<DeviceInfo>& devices, const std::string& where) const {
  check(devices.size(), where);
  if (fission != "none")
    for (const auto& d : devices) {
      if (d.discrete || d.index >= shares.size() || shares[d.index] <= 0) continue;
      bool offered = false;
      for (const auto& f : d.fission_configs) offered = offered || f.name == fission;
      if (!offered)
        detail::throw_error(errc::invalid_argument,
                            where + " " + str() + ": device " + d.id() + " has no fission configuration '" + fission + "'",
                            {.argument = where, .fix = "see `sinew devices` for the configurations this CPU offers, or use fission=none"});
    }
}

std::string Config::str() const {
  std::ostringstream s;
  s << "{fission=" << fission << ", overlap=" << overlap << ", shares=[";
  for (std::size_t i = 0; i < shares.size(); ++i) s << (i ? ", " : "") << std::setprecision(4) << shares[i];
  s << "]";
  for (const auto& [name, value] : detail::plan_item_values(*this)) s << ", " << name << "=" << value;
  s << "}";
  return s.str();
}

std::map<std::string, double> Config::kind_shares(const std::vector<DeviceInfo>& devices) const {
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < devices.size() && i < shares.size(); ++i) out[to_string(devices[i].kind)] += shares[i];
  return out;
}

Config Config::parse(const std::string& spec, const std::vector<DeviceInfo>& devices) {
  auto bad = [&](const std::string& item, const std::string& why) {
    detail::throw_error(errc::invalid_argument, "plan '" + spec + "': " + why,
                        {.argument = "config item '" + item + "'",
                         .fix = "write items like cpu=0.6, gpu:0=0.4, 1=0.2, fission=L2, overlap=3, schedule=dynamic, "
                                "min_chunk=4096 (see `sinew devices`)"});
  };
  Config c;
  std::vector<double> share(devices.size(), 0.0);
  std::vector<bool> named(devices.size(), false);
  std::map<std::string, double> kinds;
  std::set<std::string> seen;
  for (const std::string& item : detail::split_items(spec)) {
    auto eq = item.find('=');
    if (eq == std::string::npos) bad(item, "an item without '='");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    std::transform(key.begin(), key.end(), key.begin(), ::tolower);
    if (!seen.insert(key).second) bad(item, "'" + key + "' is named twice");
    if (key == "fission") {
      c.fission = value;
      continue;
    }
    if (key == "overlap") {
      try {
        c.overlap = static_cast<unsigned>(detail::rule::overlap.read(value, "overlap"));
      } catch (const Error&) {
        bad(item, "overlap is not a whole number from 1 to 16");
      }
      continue;
    }
    if (const auto* plan_item = detail::find_plan_item(key)) {
      if (auto accepts = plan_item->set(c, value); !accepts.empty()) bad(item, key + " takes " + accepts);
      continue;
    }
    double v = 0;
    try {
      std::size_t used = 0;
      v = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      bad(item, "the share is not a number");
    }
    if (!(v >= 0) || !std::isfinite(v)) bad(item, "a share must be >= 0");
    if (key == "cpu" || key == "gpu" || key == "accelerator") {
      if (v > 1) bad(item, "a kind's share is at most 1");
      kinds[key] = v;
      continue;
    }
    bool found = false;
    for (const auto& d : devices) {
      if (d.id() == key || std::to_string(d.index) == key) {
        share[d.index] = v;
        named[d.index] = true;
        found = true;
      }
    }
    if (!found) bad(item, "no device '" + key + "' in this runtime");
  }
  // Kind shares go evenly to that kind's devices not named one by one.
  double given = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) given += share[i];
  for (const auto& [kind, v] : kinds) {
    std::vector<std::size_t> members;
    for (const auto& d : devices)
      if (to_string(d.kind) == kind && !named[d.index]) members.push_back(d.index);
    if (members.empty()) bad(kind + "=" + std::to_string(v), "this runtime has no " + kind + " device left to give it");
    for (auto i : members) {
      share[i] = v / static_cast<double>(members.size());
      named[i] = true;
    }
    given += v;
  }
  // What is left goes evenly to every device nothing named.
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (!named[i]) rest.push_back(i);
  if (!rest.empty() && given > 1.0 + 1e-9)
    bad(spec, "the shares add up to more than 1, leaving nothing for the devices not named");
  for (auto i : rest) share[i] = (1.0 - given) / static_cast<double>(rest.size());
  // With every device named one by one, the shares may be ratios ("0=3,1=1"): the plan is their
  // fractions. (Kind shares are fractions of the whole: they must add up to 1 themselves.)
  if (rest.empty() && kinds.empty() && given > 0)
    for (double& x : share) x /= given;
  c.shares = share;
  // Shares and overlap now; a fission configuration when a run uses a CPU device (decompose()).
  Config unfissioned = c;
  unfissioned.fission = "none";
  unfissioned.check(devices, "plan '" + spec + "'");
  return c;
}

}  // namespace sinew
