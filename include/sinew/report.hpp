// sinew/report.hpp — what a run did: its plan and where it came from, which units ran where,
// each device's time, the values it produced, and what the online balancer made of it.
#pragma once

#include <sinew/config.hpp>
#include <sinew/tree.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinew {

/// A rebalance: the run `execution` (counted per tree and input in this runtime) left lbt at
/// `lbt`, so the plan changed from `before` to `after` for the following runs.
struct BalanceEvent {
  std::size_t execution = 0;            ///< the run that triggered it
  int level = 1;                        ///< 1: shares moved; 2: distribution retrained
  Config before;                        ///< the plan before the move
  Config after;                         ///< the plan after it
  std::vector<double> device_ms;        ///< the times that sized the move (per runtime device)
  double deviation = 0;                 ///< the deviation between the devices' times in that run
  double lbt = 0;                       ///< the load-balancing threshold it crossed
};

/// A leaf's profiled device time on one partition (profiled runs only, RunOptions::profile).
struct KernelTiming {
  std::string node;         ///< tree node path
  std::size_t partition = 0;  ///< PartitionReport::index
  std::size_t launches = 0; ///< times the leaf ran on this partition (loop iterations)
  double ms = 0;            ///< summed profiling time of those launches
};

/// A range of units one queue took from another queue's range during a run (schedule=steal):
/// the units the victim had not started. Devices are runtime indices; `thief_queue` and
/// `victim_queue` a discrete device's queue or a CPU's sub-device (0 otherwise).
struct Steal {
  std::size_t thief = 0;         ///< the device that took the range
  std::size_t victim = 0;        ///< the device whose range it was
  unsigned thief_queue = 0;      ///< the thief's queue or sub-device
  unsigned victim_queue = 0;     ///< the victim's queue or sub-device
  std::size_t first = 0;         ///< the range's first unit
  std::size_t units = 0;         ///< its length in units
};

/// One exchange of halo units (sinew::halo) between a tree's partitions, before `reader` read
/// vector `vector` in loop step `iteration` (0 outside loops).
struct HaloExchange {
  std::string vector;             ///< the vector's name
  std::string reader;             ///< the node path of the leaf that reads the halo
  std::size_t iteration = 0;      ///< the loop step (0 outside loops)
  std::uint64_t bytes = 0;        ///< copied from other partitions' slices into halos
  std::uint64_t host_bytes = 0;   ///< of those, through the host (partitions in different contexts)
  std::uint64_t boundary_bytes = 0;  ///< written beyond the vector's edges (clamp, zero, constant)
};

/// One level of a divide-and-conquer node (sinew::divide_and_conquer): where it ran, how long
/// (host time from enqueueing it to its queue's end, the slowest device's) and the bytes moved
/// for it between the host and the devices (gathering to the crossover device, scattering back).
struct LevelReport {
  std::string node;                  ///< tree node path
  std::size_t level = 0;             ///< 0: the leaves
  std::size_t subproblem = 0;        ///< elements of each subproblem it leaves solved
  std::size_t subproblems = 0;       ///< how many
  std::vector<std::size_t> devices;  ///< runtime device indices
  double ms = 0;                     ///< host time of the level (the slowest device's)
  std::uint64_t bytes = 0;           ///< moved between the host and the devices for it
};

/// A leaf marked `whole_range()` in a tree whose other leaves ran split (Kernel::whole_range): the
/// device it ran on as one partition, and what moved to and from it. Empty where the run was one
/// partition of every unit on that device already.
struct WholeLeafRun {
  std::string node;                  ///< tree node path
  std::size_t device = 0;            ///< runtime device index
  std::size_t launches = 0;          ///< times it ran (loop iterations)
  std::uint64_t gathered_bytes = 0;  ///< copied from the partitions' slices into its whole vectors
  std::uint64_t scattered_bytes = 0; ///< copied from its whole vectors back into the slices
  std::uint64_t host_bytes = 0;      ///< of both, through the host (partitions in other contexts)
};

/// What ended a request's training (Report::training_end).
enum class TrainingEnd {
  none,        ///< the request measured no plan before it ran
  completed,   ///< the trainer measured every plan it meant to
  executions,  ///< its executions ran out (TrainingSettings::max_executions, a check's or level 2's few)
  time,        ///< its time budget ran out (TrainingSettings::time_budget_s)
};
/// The one spelling of each value ("none", "completed", "executions", "time").
std::string_view to_string(TrainingEnd end) noexcept;

/// Training with a model (the divide-and-conquer trainer, from the HPU paper): the plan the model
/// chose from the measured devices before the search around it, the time it predicted for that plan
/// and the time measured for it. Training keeps the fastest measured plan, which may differ.
struct ModelChoice {
  Config config;            ///< the plan the model chose
  double predicted_ms = 0;  ///< its predicted time
  double measured_ms = 0;   ///< its measured time
};

/// Copies of a run's data that the executor made on its own (uploads, downloads, replica
/// re-synchronisation, halo units, values read back, a `whole_range()` leaf's gather and
/// scatter), not the tree's `copy` leaves: how many
/// commands and how many bytes. Report::copies counts a whole run, Report::loop_copies those made
/// while a loop's body ran (divide by Report::iterations for a loop's cost per iteration).
struct CopyCount {
  std::size_t count = 0;    ///< copy commands
  std::uint64_t bytes = 0;  ///< bytes they moved
};
/// The executor's own copies of a run, by where they moved data (see CopyCount).
struct Copies {
  CopyCount to_device;  ///< host memory -> a discrete device's memory
  CopyCount to_host;    ///< a discrete device's memory -> host memory
  CopyCount host;       ///< within host memory: what zero-copy (CPU) devices write, read or copy
  CopyCount device;     ///< within a discrete device's memory (a replica refreshed from slices, a whole leaf's slices)
  CopyCount values;     ///< reduction values read back (a map_reduce's or a scan's per partition)
  /// Copies through or within host memory: to_device, to_host and host (values apart).
  std::size_t host_copies() const { return to_device.count + to_host.count + host.count; }
  /// Their bytes.
  std::uint64_t host_bytes() const { return to_device.bytes + to_host.bytes + host.bytes; }
};

/// One partition of a run: a device (or sub-device, or queue) and the units it ran.
struct PartitionReport {
  std::size_t index = 0;    ///< its position in Report::partitions
  std::size_t device = 0;   ///< runtime device index
  std::string device_name;  ///< DeviceInfo::name
  unsigned sub_device = 0;  ///< fission sub-device (0 without fission)
  unsigned queue = 0;       ///< overlap queue
  std::size_t first = 0;    ///< first granule/element, in units of the partitioned dimension
  std::size_t units = 0;    ///< how many units it ran
  /// Profiled runs only (RunOptions::profile), else 0:
  double ms = 0;            ///< busy time: first command start to last command end
  double kernel_ms = 0;     ///< sum of kernel profiling times
  double transfer_ms = 0;   ///< sum of transfer profiling times
};

/// What one run did: the plan, where it came from, each partition, the copies and the times.
/// Runtime::run's future and Runtime::execute return it.
struct Report {
  std::string tree;                   ///< the tree's name (Node::name, else its kernels: "map(saxpy)")
  double wall_ms = 0;                 ///< the run's host time, from the request to its results
  Config config;                      ///< the plan that ran
  Provenance provenance = Provenance::manual;  ///< where the plan came from
  std::size_t iterations = 0;         ///< loop iterations run (outermost loops summed)
  std::vector<PartitionReport> partitions;  ///< every partition, in decomposition order
  bool profiled = false;              ///< the queues were profiled: partitions' times and `kernels`
  /// The run went on the prepared state (queues, kernel objects, the memory check) that the run of
  /// the same tree before it left: the same plan, the same bindings, unprofiled, a tree of kernels,
  /// pipelines and maps (docs/decisions/168 has the rules). Its results and copies are those of a
  /// freshly prepared run; the resident arrays are placed anew for every run.
  bool prepared_again = false;
  /// Per runtime device: host time from the start of the execution until the device's last queue
  /// finished its work (uploads, kernels, downloads), in ms; 0 for a device that had no share.
  /// What the trainer and the balancer compare.
  std::vector<double> device_ms;
  /// Per runtime device: the bytes of device memory the run allocated there (slices, halo buffers,
  /// replicas, scratch; not a zero-copy device's host memory, nor a reduction's few partial
  /// values per partition). They
  /// all live until the run ends, so this is also its peak: within DeviceInfo::memory(), also where
  /// a share larger than that was dragged through (RuntimeOptions::memory_cap).
  std::vector<std::uint64_t> device_bytes;
  std::vector<KernelTiming> kernels;  ///< per leaf and partition (profiled runs only)
  std::map<std::string, Value> results;  ///< map_reduce outputs by result name
  /// Halo exchanges, in the order they ran: one per read of a halo whose vector the tree wrote
  /// since (a loop exchanges once per iteration). None on one partition beyond boundary copies.
  std::vector<HaloExchange> exchanges;
  /// The executor's own copies (see Copies): all of the run, and those made inside loop bodies.
  Copies copies;       ///< the executor's copies of the whole run
  Copies loop_copies;  ///< of those, the ones made inside loop bodies
  /// Threads each staged copy between pageable host memory and a discrete device's pinned ring
  /// was split over, the queue's own included (RuntimeOptions::copy_threads: by default the
  /// host's hardware threads shared among the staging queues); 1 where the run staged nothing (direct transfers,
  /// pinned memory, no discrete device). A copy shorter than two 256 KB pieces takes one.
  unsigned copy_threads = 1;
  std::string decomposition;             ///< which units ran where (Decomposition::explain)
  std::vector<LevelReport> levels;       ///< divide-and-conquer levels, by node and level
  std::vector<WholeLeafRun> whole_leaves;  ///< leaves run whole beside split ones, by node
  /// A dynamic schedule's run (Config::schedule): per runtime device, how many chunks its queues
  /// took and how many units those held (empty for the static schedule). `partitions` lists the
  /// chunks themselves, in the order they were taken.
  std::vector<std::size_t> chunks;       ///< per device: chunks taken (dynamic schedule)
  std::vector<std::size_t> chunk_units;  ///< per device: units those chunks held
  /// A work-stealing schedule's run (schedule=steal): the ranges one device's queue took from
  /// another's, in the order they were taken (empty where nothing was stolen, and for the other
  /// schedules).
  std::vector<Steal> steals;
  /// Planned by the knowledge base: the entry used (0 otherwise), the entry it was derived from,
  /// and what training cost when this request trained.
  std::int64_t kb_entry = 0;
  std::int64_t derived_from = 0;        ///< the entry kb_entry was derived from (0: none)
  std::size_t training_executions = 0;  ///< runs training made (0: this request did not train)
  double training_seconds = 0;          ///< what training took
  /// What ended that training, and its time budget in seconds (TrainingSettings::time_budget_s,
  /// grown with the fastest plan measured); TrainingEnd::none and 0 where the request trained not.
  /// A run pinned to a device that the knowledge base had no run of counts its screening as training.
  TrainingEnd training_end = TrainingEnd::none;
  double training_budget_seconds = 0;   ///< see training_end
  /// Of training_seconds, what its runs spent building or loading programs, and what each plan's
  /// first run took beyond its second (a driver that compiles a kernel at its first launch of a
  /// work-group shape, as PoCL's CPU device does, compiles inside that run): the time budget's
  /// clock leaves it out (a training takes its budget plus its program builds).
  double training_build_seconds = 0;
  /// The executor's copies in that training's timed runs, summed (see Copies). Training runs a
  /// tree bound to resident arrays on resident scratch copies, each plan's first run untimed, so
  /// a timed run moves only what its plan's runs move between runs (docs/guide/resident-data.md).
  Copies training_copies;
  std::optional<ModelChoice> model_choice;  ///< when this request trained with a model
  /// The online balancer, for runs it watched (see BalancerSettings): this run's number among the
  /// runs of its tree and input in this runtime (0: not watched), the deviation between its
  /// active devices' times, lbt after it, and the rebalance it triggered (applied from the next
  /// run on), if any.
  std::size_t execution = 0;
  double deviation = 0;                 ///< between the active devices' times
  double lbt = 0;                       ///< the load-balancing threshold after this run
  std::optional<BalanceEvent> balance;  ///< the rebalance this run triggered, if any

  /// The value a map_reduce (or another node with a Result) gave `r` in this run; throws
  /// std::out_of_range when the tree has no such result.
  template <class T>
  T value(const Result<T>& r) const { return results.at(r.name()).template as<T>(); }
  /// A readable summary: tree, plan, partitions and the time of each node.
  std::string str() const;
};

}  // namespace sinew
