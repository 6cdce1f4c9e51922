// platform/config.cpp — printing, parsing and checking plans (Config).
#include "platform/error.hpp"
#include "platform/items.hpp"
#include "platform/plan_items.hpp"
#include "platform/settings.hpp"

#include <sinew/config.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

namespace sinew {

namespace detail {
// A plan's text holds each share to 4 significant digits (Config::str), so shares read back from
// it add up to 1 within a few 1e-5; written fractions within this of 1 are fractions (normalised),
// further off an error or ratios.
constexpr double kWrittenShareTolerance = 1e-3;

namespace {
// Never destroyed: a static Runtime's knowledge-base writer stores plans (through these rows)
// while the process's statics are destroyed.
std::vector<PlanItem>& item_rows() {
  static auto* const rows = new std::vector<PlanItem>();
  return *rows;
}
std::vector<std::string>& schedule_rows() {
  static auto* const rows = new std::vector<std::string>{"static"};
  return *rows;
}
}  // namespace

void register_plan_item(const PlanItem& item) {
  if (find_plan_item(item.name)) throw std::logic_error(std::string("plan item '") + item.name + "' registered twice");
  auto& rows = item_rows();
  rows.insert(std::upper_bound(rows.begin(), rows.end(), item,
                               [](const PlanItem& x, const PlanItem& y) { return std::string_view(x.name) < y.name; }),
              item);
}

const std::vector<PlanItem>& plan_items() { return item_rows(); }

const PlanItem* find_plan_item(std::string_view name) {
  for (const auto& item : item_rows())
    if (name == item.name) return &item;
  return nullptr;
}

void register_schedule_name(const std::string& name) {
  if (is_schedule_name(name)) throw std::logic_error("schedule '" + name + "' registered twice");
  schedule_rows().push_back(name);
}

const std::vector<std::string>& schedule_names() { return schedule_rows(); }

bool is_schedule_name(std::string_view name) {
  const auto& names = schedule_rows();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string schedule_spellings() {
  const auto& names = schedule_rows();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("'" + names[i] + "'");
  return out;
}

std::optional<unsigned long long> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), ::isdigit)) return std::nullopt;
  return std::stoull(text);
}

std::optional<unsigned long long> whole_item(const Config& c, std::string_view name) {
  const auto it = c.items.find(name);
  if (it == c.items.end()) return std::nullopt;
  return whole_number(it->second);
}

std::string item_names() {
  std::string out = "fission, overlap, schedule";
  for (const auto& item : item_rows()) out += std::string(", ") + item.name;
  return out;
}

std::string nearest_item(std::string_view name) {
  // The edit distance between two short words (insertions, deletions, substitutions, swaps).
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::vector<std::string> names = {"fission", "overlap", "schedule"};
  for (const auto& item : item_rows()) names.emplace_back(item.name);
  std::string best;
  std::size_t best_distance = 3;  // at most two edits away
  for (const auto& n : names)
    if (const std::size_t dist = distance(name, n); dist < best_distance && dist < n.size() / 2 + 1) {
      best = n;
      best_distance = dist;
    }
  return best;
}

std::vector<std::pair<std::string, std::string>> plan_item_values(const Config& c) {
  std::vector<std::pair<std::string, std::string>> out;
  if (c.schedule != "static") out.emplace_back("schedule", c.schedule);
  for (const auto& [name, value] : c.items) out.emplace_back(name, value);
  return out;
}

}  // namespace detail

std::optional<std::string> Config::item(std::string_view name) const {
  const auto it = items.find(name);
  return it == items.end() ? std::nullopt : std::optional<std::string>(it->second);
}

Config& Config::set(std::string_view name, const std::string& value) {
  const std::string item = std::string(name) + "=" + value;
  const auto* row = detail::find_plan_item(name);
  if (!row)
    detail::throw_error(errc::invalid_argument, "'" + std::string(name) + "' is no plan item",
                        {.argument = "config item '" + item + "'", .fix = "use one of: " + detail::item_names()});
  if (auto accepts = row->accepts(value); !accepts.empty())
    detail::throw_error(errc::invalid_argument, "plan item '" + item + "': " + std::string(name) + " takes " + accepts,
                        {.argument = "config item '" + item + "'", .fix = "give " + std::string(name) + " " + accepts});
  items.insert_or_assign(std::string(name), value);
  return *this;
}

Config Config::single(std::size_t device, std::size_t device_count) {
  Config c;
  c.shares.assign(device_count, 0.0);
  c.shares.at(device) = 1.0;
  return c;
}

namespace detail {
template <class Bad>
void check_items(const Config& c, std::size_t device_count, const Bad& bad) {
  for (const auto& [name, value] : c.items) {
    const auto* row = detail::find_plan_item(name);
    if (!row) bad("'" + name + "' is no plan item", "use one of: " + detail::item_names());
    if (auto accepts = row->accepts(value); !accepts.empty())
      bad(name + " " + value + " is not " + accepts, "give " + name + " " + accepts);
    if (row->fits)
      if (auto why = row->fits(value, device_count); !why.empty()) bad(why, "name a device by its index in Runtime::devices()");
    if (*row->schedule && c.schedule != row->schedule)
      bad(name + " " + value + " is given with the " + c.schedule + " schedule, and it belongs to " + row->owner,
          "add schedule=" + std::string(row->schedule) + ", or leave " + name + " out");
  }
}
}  // namespace detail

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
  static const std::set<std::string> kFissions = {"none", "L1", "L2", "L3", "L4", "numa"};
  if (!kFissions.count(fission))
    bad("'" + fission + "' is no fission configuration", "use none, L1, L2, L3, L4 or numa (see `sinew devices`)");
  if (!detail::is_schedule_name(schedule))
    bad("'" + schedule + "' is no schedule", "use the schedule " + detail::schedule_spellings());
  detail::check_items(*this, device_count, bad);
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

namespace {
// What Config::parse reads of the shares, item by item, before it resolves them.
struct ShareItems {
  std::vector<double> share;                // per device, as named one by one
  std::vector<bool> named;                  // per device: named one by one (or through its kind)
  std::vector<bool> whole;                  // per device named one by one: a whole number (a ratio)
  std::map<std::string, double> kinds;      // cpu=, gpu=, accelerator=
};

using Bad = std::function<void(const std::string& item, const std::string& why)>;

double share_value(const std::string& item, const std::string& value, const Bad& bad) {
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(value, &used);
    if (used != value.size()) throw std::invalid_argument(value);
  } catch (const std::exception&) {
    bad(item, "the share is not a number");
  }
  if (!(v >= 0) || !std::isfinite(v)) bad(item, "a share must be >= 0");
  return v;
}

// A share item: a kind's (cpu=0.6) or a device's by id or index (gpu:0=0.4, 2=0.1).
void read_share(const std::string& item, const std::string& key, const std::string& value,
                const std::vector<DeviceInfo>& devices, ShareItems& s, const Bad& bad) {
  const bool kind = key == "cpu" || key == "gpu" || key == "accelerator";
  std::vector<std::size_t> matches;
  for (const auto& d : devices)
    if (d.id() == key || std::to_string(d.index) == key) matches.push_back(d.index);
  if (!kind && matches.empty()) {
    const std::string near = detail::nearest_item(key);
    bad(item, "'" + key + "' is neither a plan item nor a device of this runtime" +
                  (near.empty() ? std::string() : " (did you mean '" + near + "'?)"));
  }
  const double v = share_value(item, value, bad);
  if (kind) {
    if (v > 1) bad(item, "a kind's share is at most 1");
    s.kinds[key] = v;
    return;
  }
  for (auto i : matches) {
    s.share[i] = v;
    s.named[i] = true;
    s.whole[i] = v == std::floor(v);
  }
}

// The shares the items name: kinds' shares evenly over their devices not named one by one, what
// is left evenly over the devices nothing named, ratios in whole numbers made fractions.
std::vector<double> resolve_shares(const std::string& spec, const std::vector<DeviceInfo>& devices, ShareItems s,
                                   const Bad& bad) {
  double given = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) given += s.share[i];
  const auto by_one = s.named;  // the devices named one by one
  for (const auto& [kind, v] : s.kinds) {
    std::vector<std::size_t> members;
    for (const auto& d : devices)
      if (to_string(d.kind) == kind && !s.named[d.index]) members.push_back(d.index);
    if (members.empty()) bad(kind + "=" + std::to_string(v), "this runtime has no " + kind + " device left to give it");
    for (auto i : members) {
      s.share[i] = v / static_cast<double>(members.size());
      s.named[i] = true;
    }
    given += v;
  }
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (!s.named[i]) rest.push_back(i);
  if (!rest.empty() && given > 1.0 + 1e-9)
    bad(spec, "the shares add up to more than 1, leaving nothing for the devices not named");
  for (auto i : rest) s.share[i] = (1.0 - given) / static_cast<double>(rest.size());
  // With every device named one by one, the shares are fractions that add up to 1 or ratios in
  // whole numbers ("0=3,1=1"). (Kind shares are fractions of the whole: they must add up to 1.)
  if (rest.empty() && s.kinds.empty() && given > 0 && given != 1.0) {
    bool ratios = true;
    for (std::size_t i = 0; i < devices.size(); ++i) ratios = ratios && (!by_one[i] || s.whole[i]);
    if (!ratios && std::abs(given - 1.0) > detail::kWrittenShareTolerance) {
      std::ostringstream sum;
      sum << std::setprecision(10) << given;
      bad(spec, "the shares add up to " + sum.str() +
                    ", not 1: shares are fractions that add up to 1, or ratios in whole numbers such as 0=3,1=1");
    }
    for (double& x : s.share) x /= given;
  }
  return s.share;
}
}  // namespace

Config Config::parse(const std::string& spec, const std::vector<DeviceInfo>& devices) {
  const Bad bad = [&](const std::string& item, const std::string& why) {
    detail::throw_error(errc::invalid_argument, "plan '" + spec + "': " + why,
                        {.argument = "config item '" + item + "'",
                         .fix = "write items like cpu=0.6, gpu:0=0.4, 1=0.2, fission=L2, overlap=3, schedule=dynamic, "
                                "min_chunk=4096 (see `sinew devices`)"});
  };
  Config c;
  ShareItems shares{std::vector<double>(devices.size(), 0.0), std::vector<bool>(devices.size(), false),
                    std::vector<bool>(devices.size(), false), {}};
  std::set<std::string> seen;
  for (const std::string& item : detail::split_items(spec)) {
    auto eq = item.find('=');
    if (eq == std::string::npos) bad(item, "an item without '='");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    std::transform(key.begin(), key.end(), key.begin(), ::tolower);
    if (!seen.insert(key).second) bad(item, "'" + key + "' is named twice");
    if (key == "fission") {
      c.fission = value;
    } else if (key == "overlap") {
      try {
        c.overlap = static_cast<unsigned>(detail::rule::overlap.read(value, "overlap"));
      } catch (const Error&) {
        bad(item, "overlap is not a whole number from 1 to 16");
      }
    } else if (key == "schedule") {
      if (!detail::is_schedule_name(value)) bad(item, "schedule takes " + detail::schedule_spellings());
      c.schedule = value;
    } else if (const auto* plan_item = detail::find_plan_item(key)) {
      if (auto accepts = plan_item->accepts(value); !accepts.empty()) bad(item, key + " takes " + accepts);
      c.items.insert_or_assign(key, value);
    } else {
      read_share(item, key, value, devices, shares, bad);
    }
  }
  c.shares = resolve_shares(spec, devices, std::move(shares), bad);
  // Shares, overlap and items now; a fission configuration when a run uses a CPU device (decompose()).
  Config unfissioned = c;
  unfissioned.fission = "none";
  unfissioned.check(devices, "plan '" + spec + "'");
  return c;
}

}  // namespace sinew
