// decompose/schedule_policy.hpp — how a plan's units reach the devices' queues: a schedule
// policy, one class per policy under decompose/schedules/ (static: every unit placed before the
// run; dynamic: guided chunks taken as the devices get ready), registered by name
// (decompose/schedules/registry.cpp, one line each). Config::schedule names the plan's policy.
// Adding one: docs/ARCHITECTURE.md, "Adding a schedule policy".
//
// A policy answers for its plans everywhere: which trees it runs (and the error naming the node
// where it refuses one), the decomposition of a plan (partitions placed before the run, and what
// else it needs to cut chunks while the run goes), what a memory-capped device can hold of it,
// how it is explained, each run's cursor (ScheduleRun: the queues that take part, the chunks
// they take), what runs of one plan learn from each other (ScheduleMemory), whether its shares
// are where its units run (the balancer may move them; training and derivation read the devices'
// times against them), and how training measures it beside the static plans (train). The
// executor, the planner, the trainers and the balancer ask the policy; none names one.
//
// Thread safety: policies are immutable and shared by every request; a ScheduleRun is one run's
// (take() and chunk_done() are called from its workers' threads at once); a ScheduleMemory is
// shared by the runs of one plan (the policy locks it).
#pragma once

#include "decompose/decompose.hpp"

#include <sinew/config.hpp>
#include <sinew/device.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail {

// What runs of one plan learn from each other (the dynamic schedule: each device's measured
// rate). Made by the policy (SchedulePolicy::new_memory), owned by whoever keeps the plan's runs
// together (PreparedTree::planned, per plan), handed to each run.
class ScheduleMemory {
 public:
  virtual ~ScheduleMemory() = default;
};

// A range of units a queue runs.
struct Chunk {
  std::size_t first = 0, units = 0;
};

// A range one queue's worker took from another's during a run (a work-stealing schedule): the
// units of the victim's range it had not started, taken by the thief. Queues are indices into
// ScheduleRun::queues().
struct Handover {
  std::size_t thief = 0, victim = 0;
  Chunk range;
};

// One run's schedule as it goes. The queues that take part each get a worker; a worker runs the
// partitions placed on its queue before the run (Decomposition::parts), or, where the policy
// takes chunks, those it cuts for the queue before and while the run goes.
class ScheduleRun {
 public:
  virtual ~ScheduleRun() = default;
  // The queues that take part, as (device, sub_device, queue) in Partition's fields (first and
  // units unused), in that order.
  virtual const std::vector<Partition>& queues() const = 0;
  // Workers take chunks as the run goes (take(), chunk_done()): partitions of many sizes, cut
  // while others run.
  virtual bool takes_chunks() const { return false; }
  // The chunks cut before the run, in order: (queue, chunk), queue an index into queues(). They
  // are prepared and allocated as placed partitions are.
  virtual std::vector<std::pair<std::size_t, Chunk>> chunks_before_run() { return {}; }
  // Every unit was cut before the run: each queue streams its chunks one after another, as a
  // static split's worker does (with pipelined_from_first_chunk(), each chunk's kernel enqueued
  // before the chunk before it is copied out: exec/drive.cpp), and takes no more.
  virtual bool all_cut_before_run() const { return false; }
  // A queue's second chunk is enqueued before its first has ended: two chunks in flight from the
  // start. For a policy whose chunks for a queue come from that queue's own range, where a thief
  // takes only what no queue has enqueued: a wrong guess of the queue's speed costs nothing, and
  // a first chunk cut small so that the next upload overlaps its kernel overlaps nothing when
  // the worker waits for it alone. False: the worker waits for its first chunk alone (its
  // speed is a guess until then, and a slow device given a second chunk would hold the run).
  virtual bool pipelined_from_first_chunk() const { return false; }
  // Queue `queue`'s next chunk; nothing once it takes no more (every unit taken, or the others
  // finish the rest sooner), or nothing for now: a worker with chunks in flight asks again once
  // one has ended, and stops when it gets nothing holding none. From the queue's worker thread,
  // concurrently with the others.
  virtual std::optional<Chunk> take(std::size_t queue) {
    (void)queue;
    return std::nullopt;
  }
  // A chunk of `units` of queue `queue` has finished: `busy_ms` since the queue's first chunk
  // began, `host_ms` its thread's CPU time meanwhile. Concurrently with the others.
  virtual void chunk_done(std::size_t queue, std::size_t units, double busy_ms, double host_ms) {
    (void)queue, (void)units, (void)busy_ms, (void)host_ms;
  }
  // After the run: the ranges queues took from each other's, in the order they were taken
  // (Report::steals); none where the policy hands nothing over.
  virtual std::vector<Handover> handovers() const { return {}; }
  // The run succeeded, `run_ms` after it began (to its last worker's end): what the plan's next
  // run starts from is kept (its ScheduleMemory).
  virtual void finished(double run_ms) { (void)run_ms; }
  // After the run, for the decomposition's "taken:" line: what the schedule did beyond the chunks
  // each device took (devices kept out, probed, queues stopped early), each item ending in ';'.
  virtual std::string taken_notes(const std::vector<DeviceInfo>& devices) const {
    (void)devices;
    return {};
  }
};

// What a training offers a policy that measures its own plans beside the static ones the search
// found (SchedulePolicy::train): the points measured so far and a way to measure more, within the
// training's budget.
class TrainingSession {
 public:
  struct Point {
    Config config;
    double time_ms = 0;
    std::vector<double> device_ms;
  };
  virtual ~TrainingSession() = default;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
  virtual std::vector<Point> points() const = 0;  // every measured point, in order
  virtual Config fastest() const = 0;             // the fastest measured plan
  virtual std::size_t runs_per_point() const = 0;
  // Whether `runs` more executions fit what the training left for this.
  virtual bool affords(std::size_t runs) const = 0;
  // Measures `c` (runs_per_point() runs); its time, or nothing where the budget cannot afford it.
  virtual std::optional<double> measure(const Config& c) = 0;
  // `p`'s shares moved by its devices' times towards finishing together.
  virtual std::vector<double> rebalanced(const Point& p) const = 0;
  // Each device group its even part of the work.
  virtual std::vector<double> even_shares() const = 0;
  // A device's time fitted to what was measured at a plan's platform levels: fixed_ms +
  // ms_per_unit * units, units of the tree's partitioned dimension.
  struct DeviceCost {
    double fixed_ms = 0;
    double ms_per_unit = 0;
  };
  // Device d's cost at `at`'s platform levels (its fission or overlap), fitted to the points
  // measured there; nothing where fewer than two of its shares were measured there, or where the
  // units are not known.
  virtual std::optional<DeviceCost> device_cost(std::size_t d, const Config& at) const {
    (void)d, (void)at;
    return std::nullopt;
  }
};

class SchedulePolicy {
 public:
  virtual ~SchedulePolicy() = default;
  // Its name in plans (Config::schedule) and the knowledge base.
  virtual std::string_view name() const = 0;

  // --- Plans ----------------------------------------------------------------------------------
  // Whether the tree (`an`) can run under this policy.
  virtual bool accepts(const Analysis& an) const {
    (void)an;
    return true;
  }
  // Throws sinew::Error(errc::invalid_argument) naming the node, the argument and the fix where
  // `config`'s tree (`an`) cannot run under this policy (accepts() is false); before any device
  // work. `where` names the plan in the message ("plan", "knowledge-base entry #12: plan").
  virtual void check_tree(const Analysis& an, const Config& config, const std::string& where = "plan") const {
    (void)an, (void)config, (void)where;
  }
  // Splits `total` units by `config` over `devices` (config checked already). Throws
  // errc::invalid_argument where a device cannot hold what the plan gives it.
  virtual Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                                  const std::vector<DeviceInfo>& devices, const Streaming& streaming) const = 0;
  // `config` as memory-capped devices can hold it (fit_memory, decompose.hpp). By default the
  // static rule: shares a device cannot hold of a tree that cannot stream move to devices with room.
  virtual Config fit_memory(const Config& config, std::size_t total, std::size_t granule,
                            const std::vector<DeviceInfo>& devices, const Streaming& streaming) const;
  // Which units run where, for Report::decomposition.
  virtual std::string explain(const Decomposition& dec, const std::vector<DeviceInfo>& devices) const;

  // --- Runs -----------------------------------------------------------------------------------
  // A plan's memory, shared by its runs (null: the policy learns nothing from run to run).
  virtual std::shared_ptr<ScheduleMemory> new_memory() const { return nullptr; }
  // One run of `dec` (decomposed by this policy); `memory`: the plan's (new_memory()), or null.
  virtual std::unique_ptr<ScheduleRun> start_run(const Decomposition& dec, ScheduleMemory* memory) const;

  // --- Around runs ----------------------------------------------------------------------------
  // A plan's shares are where its units run, so each device's time answers to its share: the
  // online balancer may move them between runs, and training and derivation read a device's time
  // against its share. False for a policy whose shares only weigh what it deals out as the run
  // goes (the balancer then reports its runs and never moves them).
  virtual bool places_shares() const { return true; }
  // Measures this policy's plan(s) for a tree it accepts, after a training's search of the
  // static plans, within what the training left for it; the fastest measured plan wins as any.
  // Nothing by default.
  virtual void train(TrainingSession& session) const { (void)session; }
  // Whether train() measures anything (the training keeps runs for it).
  virtual bool trains() const { return false; }
};

// The registered policies: the built-in ones (decompose/schedules/registry.cpp, one line each),
// then those registered with register_schedule_policy(), in that order.
std::vector<const SchedulePolicy*> schedule_policies();
// The policy named `name`, or null.
const SchedulePolicy* find_schedule_policy(std::string_view name);
// The policy named `name`; throws sinew::Error(errc::invalid_argument) naming the registered ones.
const SchedulePolicy& schedule_policy(std::string_view name);
// The policy of `config` (Config::schedule).
const SchedulePolicy& schedule_policy_of(const Config& config);
// Whether `config`'s schedule places its units by its shares (SchedulePolicy::places_shares): its
// devices' times answer to their shares. False for a schedule no policy registered (a plan read
// from a knowledge base written elsewhere).
bool places_shares(const Config& config);
// Registers a policy beside the built-in ones, for the process's life (a test's, a program's
// own), and its name for plans (Config::schedule). Before any plan names it: while static objects
// are made, or before the first Runtime. Throws std::logic_error when its name is registered
// already.
void register_schedule_policy(std::unique_ptr<const SchedulePolicy> policy);

}  // namespace sinew::detail
