// schedule/prepared.hpp — a tree prepared for the requests whose bindings have one shape, and
// the one entry point through which it runs.
//
// A PreparedTree is made once per (tree, binding shapes): the checked analysis, the granule, the
// node paths, the signature, the label and the knowledge-base features are computed there and
// nowhere else; its decompositions are kept per plan. measure() is how a request, a training
// step and the balancer's level 2 run a tree: decompose (cached) -> execute -> a Report labelled
// with the tree. train_on_copies() is the training search over scratch copies of what the tree
// writes, through measure().
//
// Thread safety: a PreparedTree is immutable but for its decomposition cache and its kept run
// state (each locked); several requests may use one at once.
#pragma once

#include "decompose/decompose.hpp"
#include "decompose/schedule_policy.hpp"
#include "exec/environment.hpp"
#include "exec/exchanger.hpp"
#include "exec/kept_run.hpp"
#include "schedule/train.hpp"
#include "tree/analysis.hpp"

#include <sinew/binding.hpp>
#include <sinew/kb.hpp>
#include <sinew/report.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <string>
#include <tuple>
#include <vector>

namespace sinew::detail {

struct PreparedTree {
  Node tree;              // the handle: keeps the root alive
  Analysis analysis;      // bindings by position: holds for every request of these shapes
  std::size_t granule = 1;
  Streaming streaming;
  std::string signature;  // Node::signature()
  std::string label;      // Node::label(): the name, else "map(saxpy)"
  KbFeatures features;    // input_features(): sizes, marked scalars, host.pinned, residency
  // Every partitioned vector is bound to a resident array a discrete device keeps: after its first
  // run nothing moves, and an overlap level only cuts a device's share over more queues
  // (docs/decisions/178).
  bool all_resident = false;

  // Its plans' overlap levels cost more than their times show, so that of levels measured within
  // the training's precision the lowest is kept: each level runs the same partitions (one queue
  // per discrete device: Streaming::one_queue, docs/decisions/171), or nothing moves that a level
  // could overlap (all_resident, docs/decisions/178).
  bool keeps_lowest_level() const { return streaming.one_queue || all_resident; }

  const NodeImpl& root() const { return *tree.impl(); }
  // Units per granule under `config`: the granule with what the plan's own items ask of the
  // partitions (a divide-and-conquer crossover: whole subproblems below it).
  std::size_t plan_granule(const Config& config) const;
  // The decomposition of the tree's units by `config` (checked: Config::check), with its
  // explanation; made once per plan, not per request (docs/decisions/061).
  std::shared_ptr<const Decomposition> decomposition(const Config& config, const std::vector<DeviceInfo>& devices) const;
  // `config` itself where the devices hold it; else with what exceeds a device's memory moved to
  // devices with room, for a tree that cannot stream (fit_memory); throws naming the device, the
  // vector and the sizes when the devices together cannot hold it.
  Config fitted(const Config& config, const std::vector<DeviceInfo>& devices) const;
  // A plan as its runs share it: its decomposition and what its runs learn from each other under
  // its schedule policy (SchedulePolicy::new_memory; null where the policy learns nothing), made
  // once per plan and kept together (the memory's owner; a run holds it while it goes).
  struct Planned {
    std::shared_ptr<const Decomposition> decomposition;
    std::shared_ptr<ScheduleMemory> schedule_memory;
  };
  Planned planned(const Config& config, const std::vector<DeviceInfo>& devices) const;
  // The prepared state of the tree's last run, for the next identical one (exec/kept_run.hpp:
  // the same plan's decomposition, the same bindings); measure() runs through it.
  mutable KeptRun kept_run;

 private:
  // shares, fission, overlap, schedule, plan items
  using Key = std::tuple<std::vector<double>, std::string, unsigned, std::string, PlanItems>;
  mutable std::mutex mutex_;
  mutable std::map<Key, Planned> plans_;
  // The plan looked up last, with its config: a request asks for its plan several times (its
  // source's check, the fit, the run) and a loop of runs asks for the same one every run; an equal
  // config (Config's ==, every field of the key) finds it without building the key.
  mutable std::optional<std::pair<Config, Planned>> last_;
};

// Checks `tree` against `bindings` (throwing sinew::Error before any device work) and prepares
// it. `pinned_fraction`: the share of the bound bytes in pinned memory, for machines with a
// discrete device (a feature, docs/decisions/062); `chunk_bytes`: RuntimeOptions::chunk_mb;
// `tuning`: RuntimeOptions::schedule_tuning (checked here).
std::shared_ptr<const PreparedTree> prepare_tree(const Node& tree, const std::vector<Binding>& bindings,
                                                 const std::vector<DeviceInfo>& devices,
                                                 std::optional<double> pinned_fraction, std::size_t chunk_bytes,
                                                 const ScheduleTuning& tuning = {});

// Runs the prepared tree once over `bindings` (of its shapes) with `config`; `poison`: see
// execute(). With an `exchanger` the run is one process's part of a larger one: `config` splits
// only the exchanger's units (exec/exchanger.hpp).
Report measure(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings, const Config& config,
               bool profile = false, std::uint8_t poison = 0, Exchanger* exchanger = nullptr);

// measure() under the poison check (RuntimeOptions::poison_check): once on scratch copies of what
// the tree writes, then on `bindings`, with different poison around the discrete devices' slices
// and halos; a written vector or a result that differs is a sinew::Error naming it (and the
// element and partition), since some kernel read outside its slice and halo. The second run's
// report.
Report measure_checked(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings,
                       const Config& config, bool profile, Exchanger* exchanger = nullptr);

// Runs the training search for the prepared tree on scratch copies of every bound vector it
// writes (so the caller's data is untouched; a copy of pinned data is pinned too), each
// measurement passed to `record` (may be empty) as it is taken. A resident array's copy is a
// resident array restored on the devices before every run, and each plan's first timed run is
// preceded by an untimed one that places the arrays in its decomposition: a plan for resident
// data is judged by the moves its own runs make (docs/decisions/149; TrainingResult::timed_copies).
TrainingResult train_on_copies(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings,
                               const TrainingOptions& options, const Progress& progress,
                               const std::optional<Config>& start, const std::function<void(KbRun&)>& record);

// TrainingOptions::moved_pointer_leaves for the prepared tree: a leaf written for the whole range
// moves pointers in its launched source, and the overlap level cuts a discrete device's share into
// one partition per queue (the tree neither streams nor keeps the share on one queue).
bool moved_pointer_leaves(const PreparedTree& p);

// A run's per-partition busy times for the knowledge base: only a profiled run measured them.
std::vector<double> partition_times(const Report& r);
// A run's per-device busy times for the knowledge base (KbRun::device_ms): one per share of the
// plan that ran, else none.
std::vector<double> device_times(const Report& r);

}  // namespace sinew::detail
