// sinew/runtime.hpp — running trees: the Runtime, bindings, plans (Config) and Reports.
//
// A Runtime owns every OpenCL object Sinew creates (contexts, queues, program cache); create one
// per process and keep it alive while requests run. `run` and `execute` are thread-safe: several
// requests may be in flight at once; `run` returns a std::future, and an error raised while a
// request runs reaches the caller through that future (`execute` throws it). Host memory bound to
// a request must stay valid, and must not be touched by the caller, until the request is done.
#pragma once

#include <sinew/device.hpp>
#include <sinew/tree.hpp>

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <string>
#include <vector>

namespace sinew {

namespace detail {
// A block of page-locked host memory (see Runtime::pinned).
struct PinnedBlock {
  virtual ~PinnedBlock() = default;
  void* data = nullptr;
  std::size_t bytes = 0;
};
}  // namespace detail

// Host memory that the runtime's GPUs read and write at full DMA speed (page-locked, "pinned").
// Behaves like a fixed-size std::vector; bind it like one. Owns its memory; it may outlive the
// Runtime that made it. Not thread-safe beyond what a plain array is.
template <class T>
class PinnedVector {
 public:
  PinnedVector() = default;
  explicit PinnedVector(std::shared_ptr<detail::PinnedBlock> block)
      : block_(std::move(block)), size_(block_->bytes / sizeof(T)) {}
  T* data() { return static_cast<T*>(block_->data); }
  const T* data() const { return static_cast<const T*>(block_->data); }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  operator std::span<T>() { return {data(), size_}; }
  operator std::span<const T>() const { return {data(), size_}; }

 private:
  std::shared_ptr<detail::PinnedBlock> block_;
  std::size_t size_ = 0;
};

// Host memory bound to a vector or a result for one request.
struct Binding {
  std::shared_ptr<detail::VectorState> vector;
  std::shared_ptr<detail::ResultState> result;
  void* data = nullptr;
  std::size_t elements = 0;
  ElementType type;
  bool read_only = false;

  template <class T>
  Binding(const Vector<T>& v, std::vector<T>& host) : Binding(v, std::span<T>(host)) {}
  template <class T>
  Binding(const Vector<T>& v, PinnedVector<T>& host) : Binding(v, std::span<T>(host)) {}
  template <class T>
  Binding(const Vector<T>& v, const std::vector<T>& host) : Binding(v, std::span<const T>(host)) {}
  template <class T>
  Binding(const Vector<T>& v, std::span<T> host)
      : vector(state_of(v)), data(host.data()), elements(host.size()), type(element_type<T>()) {}
  template <class T>
  Binding(const Vector<T>& v, std::span<const T> host)
      : vector(state_of(v)), data(const_cast<T*>(host.data())), elements(host.size()),
        type(element_type<T>()), read_only(true) {}
  template <class T>
  Binding(const Result<T>& r, T* host) : result(state_of(r)), data(host), elements(1), type(element_type<T>()) {}

 private:
  static std::shared_ptr<detail::VectorState> state_of(const VectorRef& v);
  static std::shared_ptr<detail::ResultState> state_of(const ResultRef& r);
};

// A plan: where the work runs. `shares` has one entry per runtime device (see
// Runtime::devices()), summing to 1; a zero share leaves that device idle.
struct Config {
  std::vector<double> shares;
  std::string fission = "none";  // CPU fission configuration name
  unsigned overlap = 1;          // GPU queues (partitions) per GPU
  std::string str() const;
  // The summed share of each device kind ("cpu", "gpu", ...), for reports.
  std::map<std::string, double> kind_shares(const std::vector<DeviceInfo>& devices) const;
  friend bool operator==(const Config&, const Config&) = default;

  // Parses a plan, SkePU-style: comma-separated items, each
  //   cpu=0.6 / gpu=0.4 / accelerator=x  the share of a device kind, split evenly among its devices
  //   cpu:0=0.3 / gpu:1=0.2 / 2=0.1       the share of one device (id or runtime index)
  //   fission=L2 / overlap=3              the platforms' configuration
  // Kinds or devices not named share what is left evenly (a kind gets it when no device of it is
  // named). Throws sinew::Error(errc::invalid_argument) naming the bad item.
  static Config parse(const std::string& spec, const std::vector<DeviceInfo>& devices);
};

// How training searches (the spec's precision value and quality factor, and its strategy).
struct TrainingSettings {
  std::string strategy = "even_split";  // "even_split" (50/50) or "cpu_assisted"
  double precision = 0.05;              // device times within this fraction are balanced
  unsigned quality = 3;                 // executions per measured point (their median counts)
  bool exhaustive = false;              // every fission x overlap combination, as in the spec
  std::size_t max_executions = 40;      // at most this many runs per training
  // A plan derived for unseen inputs is checked with at most this many runs (on scratch copies):
  // its GPU overlap and CPU fission screened at the derived distribution, one rebalancing step,
  // each device alone; the fastest is stored. 0: derived plans are used as derived, unmeasured
  // (the spec's derivation). $SINEW_DERIVE_EXECUTIONS overrides.
  std::size_t derive_executions = 12;
};

// The online two-level balancer (the spec's controller and "Adjust work distribution"). After every
// run it watches, the deviation between the active devices' times, dev = 1 - fastest/slowest, is
// judged on the element-wise median of the last `window` runs of the plan: unbalanced when the
// fastest device finished before `balanced_within` of the slowest's time.
// lbt(n) = unbalanced(n) * weight + lbt(n-1) * (1 - weight); when lbt reaches `trigger`,
// level 1 moves work between device kinds (and between devices of one kind) in proportion to
// their measured rates (median of the last `window` runs), over the following runs until they
// are balanced; when `level1_steps` moves have not balanced them (and did not go back and forth:
// moves that reverse have bracketed the balance, and the rest is noise), level 2 retrains the
// distribution within the current fission/overlap configuration (at most `level2_executions`
// runs, on scratch copies). Balanced plans are stored in the knowledge base (provenance
// "balanced"), so the next process starts from them.
struct BalancerSettings {
  bool enabled = true;                  // $SINEW_BALANCE=0 turns it off
  double balanced_within = 0.88;        // $SINEW_BALANCE_WITHIN
  double weight = 0.5;                  // w; $SINEW_BALANCE_WEIGHT
  double trigger = 0.85;                // "lbt ~ 1": three judged runs in a row at w = 0.5
  unsigned level1_steps = 4;
  unsigned window = 3;
  std::size_t level2_executions = 16;
};

// A rebalance: the run `execution` (counted per tree and input in this runtime) left lbt at
// `lbt`, so the plan changed from `before` to `after` for the following runs.
struct BalanceEvent {
  std::size_t execution = 0;
  int level = 1;                        // 1: shares moved; 2: distribution retrained
  Config before, after;
  std::vector<double> device_ms;        // the times that sized the move (per runtime device)
  double deviation = 0;
  double lbt = 0;
};

struct RunOptions {
  // Run on this runtime device alone (an index into Runtime::devices()).
  std::optional<std::size_t> device;
  // Run with this plan (overrides `device`).
  std::optional<Config> config;
  // Or a plan in Config::parse syntax, e.g. "cpu=0.6,overlap=2" (used when `config` is empty).
  std::string plan;
  // With none of the above, the knowledge base plans the run; `train` retrains even when it
  // already knows this tree and input.
  bool train = false;
  // The online balancer: empty means on for plans from the knowledge base (when
  // BalancerSettings::enabled) and off for plans given here; true also adapts a given plan
  // (`config`/`plan`), which is then only the starting point (nothing is stored for it).
  std::optional<bool> balance;
  // Device-side timing: the run's queues profile every command, so the Report has each
  // partition's busy, kernel and transfer times and each kernel's (`partitions[i].ms`,
  // `kernels`). Empty: on when $SINEW_PROFILE=1, else off (profiling costs time: about 9% of a
  // 50M-float saxpy split on the H100; Report::device_ms, which the scheduler uses, is host-timed
  // and always there). A trace being written ($SINEW_TRACE) profiles whatever this says.
  std::optional<bool> profile;
};

struct KernelTiming {
  std::string node;         // tree node path
  std::size_t partition = 0;
  std::size_t launches = 0; // times the leaf ran on this partition (loop iterations)
  double ms = 0;            // summed profiling time of those launches
};

struct PartitionReport {
  std::size_t index = 0;
  std::size_t device = 0;   // runtime device index
  std::string device_name;
  unsigned sub_device = 0;  // fission sub-device (0 without fission)
  unsigned queue = 0;       // overlap queue
  std::size_t first = 0;    // first granule/element, in units of the partitioned dimension
  std::size_t units = 0;
  // Profiled runs only (RunOptions::profile), else 0:
  double ms = 0;            // busy time: first command start to last command end
  double kernel_ms = 0;     // sum of kernel profiling times
  double transfer_ms = 0;   // sum of transfer profiling times
};

struct Report {
  double wall_ms = 0;
  Config config;
  std::string provenance = "manual";  // manual | default | trained | derived | balanced
  std::size_t iterations = 0;         // loop iterations run (outermost loops summed)
  std::vector<PartitionReport> partitions;
  bool profiled = false;              // the queues were profiled: partitions' times and `kernels`
  // Per runtime device: host time from the start of the execution until the device's last queue
  // finished its work (uploads, kernels, downloads), in ms; 0 for a device that had no share.
  // What the trainer and the balancer compare.
  std::vector<double> device_ms;
  std::vector<KernelTiming> kernels;
  std::map<std::string, Value> results;  // map_reduce outputs by result name
  std::string decomposition;             // which units ran where (Decomposition::explain)
  // Planned by the knowledge base: the entry used (0 otherwise), the entry it was derived from,
  // and what training cost when this request trained.
  std::int64_t kb_entry = 0;
  std::int64_t derived_from = 0;
  std::size_t training_executions = 0;
  double training_seconds = 0;
  // The online balancer, for runs it watched (see BalancerSettings): this run's number among the
  // runs of its tree and input in this runtime (0: not watched), the deviation between its
  // active devices' times, lbt after it, and the rebalance it triggered (applied from the next
  // run on), if any.
  std::size_t execution = 0;
  double deviation = 0;
  double lbt = 0;
  std::optional<BalanceEvent> balance;

  template <class T>
  T value(const Result<T>& r) const { return results.at(r.name()).template as<T>(); }
  // A readable summary: config, partitions and the time of each node.
  std::string str() const;
};

struct RuntimeOptions {
  // Devices to use: "all", "cpu", "gpu", "gpu:0,cpu", ... Empty: $SINEW_DEVICES, else "all".
  std::string devices;
  // Directory of the on-disk program cache. Empty: $XDG_CACHE_HOME/sinew or ~/.cache/sinew.
  std::string cache_dir;
  // Set false to keep compiled programs in memory only.
  bool disk_cache = true;
  // The plan for runs that name neither a device nor a config (Config::parse syntax, e.g.
  // "cpu=0.6,overlap=2"). Empty: $SINEW_CONFIG; if that is empty too, the default device alone.
  std::string config;
  // Devices to drive as discrete GPUs (selection syntax, e.g. "cpu:1"): explicit transfers and
  // overlap queues instead of zero copy and fission. A testing aid for CPU-only machines.
  // Empty: $SINEW_DISCRETE.
  std::string discrete;
  // Streamable trees reach discrete devices in chunks of about this many MB (summed over the
  // partitioned vectors), dealt round-robin to the overlap queues. 0: $SINEW_CHUNK_MB, else an
  // eighth of the device's data, within 16-64 MB.
  double chunk_mb = 0;

  // The knowledge base plans runs that name no device, config or plan. Its file: empty means
  // $SINEW_KB, else ${XDG_DATA_HOME:-~/.local/share}/sinew/kb.sqlite; ":memory:" keeps nothing.
  std::string kb_path;
  // Train even for trees and inputs the knowledge base knows ($SINEW_TRAIN=1).
  bool force_training = false;
  // For inputs it has no entry for, of a tree it knows: "derive" a plan from the nearest entries
  // (the spec's option b, the default) or "train" (option a). Empty: $SINEW_UNSEEN, else derive.
  std::string unseen;
  // "nearest" (the spec's nearest neighbour) or "idw" (inverse-distance weighting). Empty:
  // $SINEW_INTERPOLATOR, else nearest.
  std::string interpolator;
  // Training search settings; $SINEW_STRATEGY, $SINEW_PRECISION, $SINEW_QUALITY override them.
  TrainingSettings training;
  // Training progress (one line per measured point) on stderr; $SINEW_QUIET=1 silences it.
  bool progress = true;
  // The online balancer's settings.
  BalancerSettings balancer;
};

namespace detail {
class RuntimeImpl;
}

class Runtime {
 public:
  Runtime();
  explicit Runtime(RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const std::vector<DeviceInfo>& devices() const;
  // The device a single-device run uses by default: the first GPU, else the first device.
  std::size_t default_device() const;

  // Validates the tree and bindings (throwing sinew::Error before any device work), then runs it
  // asynchronously, on a thread of the runtime's.
  std::future<Report> run(const Node& tree, std::vector<Binding> bindings, RunOptions options = {});
  // The same request on the calling thread: returns (or throws) when it is done. What
  // run(...).get() does without handing the request to another thread and back, which costs a
  // few tens of microseconds: for loops that run small trees one after another.
  Report execute(const Node& tree, std::vector<Binding> bindings, RunOptions options = {});

  // `count` elements of page-locked host memory, zero-initialised. Data bound from it moves to
  // and from GPUs without a staging copy (about 55 GB/s instead of 8-15 GB/s on a PCIe 5 H100).
  // Without a discrete device it is ordinary page-aligned memory.
  template <class T>
  PinnedVector<T> pinned(std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>, "pinned memory holds trivially copyable elements");
    return PinnedVector<T>(allocate_pinned(count * sizeof(T)));
  }

  detail::RuntimeImpl& impl() { return *impl_; }

 private:
  std::shared_ptr<detail::PinnedBlock> allocate_pinned(std::size_t bytes);
  std::unique_ptr<detail::RuntimeImpl> impl_;
};

// Parses a device selection ("all", "cpu", "gpu:0,cpu:1") against the given devices and returns
// the chosen indices in the order given. Throws sinew::Error(errc::no_device) naming what exists.
std::vector<std::size_t> select_devices(const std::vector<DeviceInfo>& devices, const std::string& spec);

}  // namespace sinew
