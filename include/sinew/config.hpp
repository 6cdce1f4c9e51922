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

// Where a run's plan came from (Report::provenance; a stored entry's KbEntry::provenance is one
// of trained, derived, balanced, manual).
enum class Provenance {
  manual,          // given with the run: RunOptions::config, RunOptions::plan or RunOptions::device
  default_plan,    // the runtime's plan: RuntimeOptions::config ($SINEW_CONFIG)
  knowledge_base,  // a plan the knowledge base had stored, used as it is (Report::kb_entry)
  trained,         // trained for this tree and input by this request, and stored
  derived,         // derived from the nearest stored input by this request, and stored
  balanced,        // moved by the online balancer (stored once it settles)
};
// The one spelling of each value, in reports, on the command line and in the knowledge base:
// the enumerator's name ("knowledge_base", "default_plan", ...).
std::string_view to_string(Provenance p) noexcept;
std::optional<Provenance> provenance_from_string(std::string_view text) noexcept;

// The highest divide-and-conquer crossover level a plan may name (2^40 elements in leaves of
// one, fan-out 2).
inline constexpr unsigned kMaxCrossover = 40;
// How a plan deals out the units (Config::schedule). `static_`: each device gets one contiguous
// share before the run (streamed in chunks on discrete devices). `dynamic`: the units wait in one
// queue and each device queue (GPU queue, CPU or CPU sub-device) takes the next chunk when it is
// ready; chunks shrink as the work runs out (guided: what is left / (2 * queues), weighted by the
// shares, never below Config::min_chunk or the granule). Only for trees whose partitions never
// meet mid-run; see docs/ARCHITECTURE.md, "Dynamic schedule".
enum class Schedule { static_, dynamic };
// "static" / "dynamic", in plans, reports and the knowledge base.
std::string_view to_string(Schedule s) noexcept;
std::optional<Schedule> schedule_from_string(std::string_view text) noexcept;

// Shares must add up to 1 within this.
inline constexpr double kShareTolerance = 1e-6;

// A plan: where the work runs. `shares` has one entry per runtime device (see
// Runtime::devices()), summing to 1; a zero share leaves that device idle.
struct Config {
  std::vector<double> shares;
  std::string fission = "none";  // CPU fission configuration name (see `sinew devices`)
  unsigned overlap = 1;          // GPU queues (partitions) per GPU, 1..16
  // Divide-and-conquer trees (sinew::divide_and_conquer): the levels below `crossover` run split
  // over the devices by the shares, the levels from it up on runtime device `upper` (unset: the
  // device with the largest share). Unset crossover: 0, every level on `upper`. Other trees
  // ignore both. Items crossover=3 and upper=1 (a runtime device index) in parse().
  std::optional<unsigned> crossover;
  std::optional<std::size_t> upper;
  // Static shares, or chunks taken as the devices get ready; with `dynamic`, the shares weigh
  // each device's chunk sizes (a trained plan's shares are its devices' relative speeds).
  Schedule schedule = Schedule::static_;
  std::size_t min_chunk = 0;  // dynamic only: the least units of a chunk (0: a 64th of a queue's even share)

  std::string str() const;
  // The summed share of each device kind ("cpu", "gpu", ...), for reports.
  std::map<std::string, double> kind_shares(const std::vector<DeviceInfo>& devices) const;
  friend bool operator==(const Config&, const Config&) = default;

  // Throws sinew::Error(errc::invalid_argument) before any device work when this plan does not
  // fit `devices`: not one share per device, a negative or non-finite share, shares that do not
  // add up to 1 (within kShareTolerance; the message gives the shares and their sum), an overlap
  // outside 1..16, a fission configuration that a CPU device does not offer, or a min_chunk
  // with the static schedule. `where` names the
  // plan in the message ("RunOptions::config", "knowledge-base entry #12", ...).
  void check(const std::vector<DeviceInfo>& devices, const std::string& where = "config") const;
  // The same rules without the devices at hand (a stored or imported plan): `device_count` shares,
  // and a fission configuration name a CPU can offer (none, L1 to L4, numa).
  void check(std::size_t device_count, const std::string& where = "config") const;

  // Everything on one device.
  static Config single(std::size_t device, std::size_t device_count);

  // Parses a plan, SkePU-style: comma-separated items, each
  //   cpu=0.6 / gpu=0.4 / accelerator=x  the share of a device kind, split evenly among its devices
  //   cpu:0=0.3 / gpu:1=0.2 / 2=0.1       the share of one device (id or runtime index)
  //   fission=L2 / overlap=3              the platforms' configuration
  //   crossover=3 / upper=1               divide and conquer: the crossover level, its device
  //   schedule=dynamic / min_chunk=4096   chunks dealt out while the run goes (see Schedule)
  // Kinds or devices not named share what is left evenly (a kind gets it when no device of it is
  // named); when every device is named, the shares may be ratios ("0=3,1=1" is 0.75 and 0.25).
  // Throws sinew::Error(errc::invalid_argument) naming the bad item; the result's shares add up
  // to 1.
  static Config parse(const std::string& spec, const std::vector<DeviceInfo>& devices);
};

}  // namespace sinew
