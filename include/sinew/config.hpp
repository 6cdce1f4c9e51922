// sinew/config.hpp — a plan (Config): where a run's work goes, and where a plan came from.
//
// A Config is a plain value: a share of the work per runtime device, the CPU fission
// configuration and the GPU overlap level. It knows devices only through DeviceInfo, so every
// module (the knowledge base included) can hold one without knowing OpenCL.
#pragma once

#include <sinew/device.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinew {

/// Where a run's plan came from (Report::provenance; a stored entry's KbEntry::provenance is one
/// of trained, derived, balanced, manual).
enum class Provenance {
  manual,          ///< given with the run: RunOptions::config, RunOptions::plan or RunOptions::device
  default_plan,    ///< the runtime's plan: RuntimeOptions::config ($SINEW_CONFIG)
  knowledge_base,  ///< a plan the knowledge base had stored, used as it is (Report::kb_entry)
  trained,         ///< trained for this tree and input by this request, and stored
  derived,         ///< derived from the nearest stored input by this request, and stored
  balanced,        ///< moved by the online balancer (stored once it settles)
};
/// The one spelling of each value, in reports, on the command line and in the knowledge base:
/// the enumerator's name ("knowledge_base", "default_plan", ...).
std::string_view to_string(Provenance p) noexcept;
/// The Provenance to_string() spells `text`; nullopt for any other text.
std::optional<Provenance> provenance_from_string(std::string_view text) noexcept;

/// Plan items beyond the split and the platforms' configuration: knobs that a schedule policy or a
/// node kind owns (the dynamic schedule's `min_chunk`, divide and conquer's `crossover` and
/// `upper`), by name, each value as its text. Every item is registered by its owner, which checks
/// its values (Config::set, Config::parse, Config::check).
using PlanItems = std::map<std::string, std::string, std::less<>>;

/// Shares must add up to 1 within this.
inline constexpr double kShareTolerance = 1e-6;

/// A plan: where the work runs. `shares` has one entry per runtime device (see
/// Runtime::devices()), summing to 1; a zero share leaves that device idle.
struct Config {
  std::vector<double> shares;    ///< one per runtime device, in Runtime::devices() order, summing to 1
  std::string fission = "none";  ///< CPU fission configuration name (see `sinew devices`)
  unsigned overlap = 1;          ///< GPU queues (partitions) per GPU, 1..16
  /// How the units reach the devices' queues: a registered schedule policy's name. "static": each
  /// device gets one contiguous share before the run (streamed in chunks on discrete devices).
  /// "dynamic": the units wait in one queue and each device queue takes the next chunk when it is
  /// ready, the shares weighing each device's chunk sizes; only for trees whose partitions never
  /// meet mid-run (docs/ARCHITECTURE.md, "Dynamic schedule").
  std::string schedule = "static";
  /// The plan items of the schedule policy and of the tree's node kinds (see PlanItems):
  /// divide and conquer's crossover=3 (the levels below it split by the shares, the levels from
  /// it up on one device) and upper=1 (that device, a runtime index; unset: the one with the
  /// largest share); a kernel marked whole_range()'s whole=1 (the device it runs on, a runtime
  /// index; unset: the one with the largest share); the dynamic schedule's min_chunk=4096 (the
  /// least units of a chunk). Items of
  /// node kinds a tree does not have are ignored by it.
  PlanItems items;

  /// The value of item `name`, if the plan sets it.
  std::optional<std::string> item(std::string_view name) const;
  /// Sets item `name` to `value`; throws sinew::Error(errc::invalid_argument) naming the item
  /// when no owner registered it or the value is not one it accepts.
  Config& set(std::string_view name, const std::string& value);

  /// "{fission=none, overlap=1, shares=[0.6, 0.4]}" (with the schedule and items when set).
  std::string str() const;
  /// The summed share of each device kind ("cpu", "gpu", ...), for reports.
  std::map<std::string, double> kind_shares(const std::vector<DeviceInfo>& devices) const;
  /// Every field equal.
  friend bool operator==(const Config&, const Config&) = default;

  /// Throws sinew::Error(errc::invalid_argument) before any device work when this plan does not
  /// fit `devices`: not one share per device, a negative or non-finite share, shares that do not
  /// add up to 1 (within kShareTolerance; the message gives the shares and their sum), an overlap
  /// outside 1..16, a fission configuration that a CPU device does not offer, a schedule no
  /// policy registered, or an item that its owner refuses (an unknown one, a bad value, an item of
  /// another schedule policy than the plan's: min_chunk with the static schedule). `where` names the
  /// plan in the message ("RunOptions::config", "knowledge-base entry #12", ...).
  void check(const std::vector<DeviceInfo>& devices, const std::string& where = "config") const;
  /// The same rules without the devices at hand (a stored or imported plan): `device_count` shares,
  /// and a fission configuration name a CPU can offer (none, L1 to L4, numa).
  void check(std::size_t device_count, const std::string& where = "config") const;

  /// Everything on one device.
  static Config single(std::size_t device, std::size_t device_count);

  /// Parses a plan, SkePU-style: comma-separated items, each
  ///   cpu=0.6 / gpu=0.4 / accelerator=x  the share of a device kind, split evenly among its devices
  ///   cpu:0=0.3 / gpu:1=0.2 / 2=0.1       the share of one device (id or runtime index)
  ///   fission=L2 / overlap=3              the platforms' configuration
  ///   schedule=dynamic                    chunks dealt out while the run goes (see `schedule`)
  ///   crossover=3 / min_chunk=4096 / ...  the registered plan items (see PlanItems)
  /// Kinds or devices not named share what is left evenly (a kind gets it when no device of it is
  /// named); when every device is named, the shares are fractions that add up to 1, or ratios in
  /// whole numbers ("0=3,1=1" is 0.75 and 0.25): fractions that add up to something else are an
  /// error. A name that is neither an item nor a device is an error naming the nearest item.
  /// Throws sinew::Error(errc::invalid_argument) naming the bad item; the result's shares add up
  /// to 1.
  static Config parse(const std::string& spec, const std::vector<DeviceInfo>& devices);
};

}  // namespace sinew
