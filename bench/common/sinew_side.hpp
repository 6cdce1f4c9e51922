// bench/common/sinew_side.hpp — Sinew's side of every benchmark, through the public API and the
// samples' registry only: which runtime devices play the CPU and the GPU(s), static splits as
// Configs, Jobs that run a prepared sample (its data pageable, or pinned), runs planned by the
// knowledge base, and the sweep of static splits (the "oracle").
//
// Everything runs through Runtime::execute with a RunOptions, so that an oracle point and
// Sinew's own plan differ only in the plan.
#pragma once

#include "harness.hpp"

#include "common/sample.hpp"

#include <map>
#include <memory>
#include <optional>

namespace bench {

// The runtime's devices by role: a GPU is any discrete device (a real GPU, or a CPU device driven
// as one on machines without a GPU), a CPU any other.
struct Roles {
  std::vector<std::size_t> cpus, gpus;  // runtime device indices; real GPUs before stand-ins
  bool stand_in = false;                // a "GPU" is a CPU device
  std::vector<unsigned> overlaps{1};    // the first GPU's overlap levels
  std::size_t devices = 0;

  static Roles of(const sinew::Runtime& rt);
  bool hybrid() const { return !cpus.empty() && !gpus.empty(); }
  // The CPU and the GPU of a two-device comparison. With --zero-copy-stand-in and no GPU, the
  // second CPU device stands in (not discrete: overlap has no effect).
  struct Pair {
    std::size_t cpu = 0, gpu = 0;
    bool has_cpu = false, has_gpu = false, two = false, gpu_discrete = false;
  };
  Pair pair() const;
  std::string describe(const sinew::Runtime& rt) const;  // "1 CPU (cpu:0 ...) + 1 GPU (gpu:0 ...)"
};

// A runtime whose devices are driven the same way by every program: without a GPU and with two
// CPU devices, the second is driven as a discrete device (the GPU code paths run), unless
// $SINEW_DISCRETE, options.discrete or `zero_copy_stand_in` says otherwise.
std::unique_ptr<sinew::Runtime> make_runtime(bool zero_copy_stand_in, sinew::RuntimeOptions options = {});

// `cpu_share` spread evenly over the CPUs, the rest over the GPUs by `gpu_weights` (empty:
// evenly). Normalised so that equal plans compare equal: no CPU work -> fission "none", no GPU
// work -> overlap 1.
sinew::Config make_plan(const Roles& r, double cpu_share, const std::vector<double>& gpu_weights = {},
                        const std::string& fission = "none", unsigned overlap = 1);
sinew::RunOptions with_config(const sinew::Config& c);
sinew::RunOptions on_device(std::size_t device);
// Device `device` of `devices` alone: at its best known level where `overlap` is 0 (on_device),
// else as a given plan at that overlap level (the benches' --sinew-overlap N).
sinew::RunOptions on_device_at(std::size_t device, std::size_t devices, unsigned overlap);

// A plan's shares by role.
struct SplitShares {
  double cpu = 0, gpu = 0;
  std::vector<double> per_gpu;
  std::vector<double> gpu_weights() const;  // the GPUs' shares relative to each other
};
SplitShares shares_of(const sinew::Config& c, const Roles& r);
std::string join_shares(const std::vector<double>& v);  // "0.500/0.500"
std::vector<double> parse_shares(const std::string& s);
// The spec's level of parallelism: partitions at once (device, sub-device, queue with work).
std::size_t parallelism(const sinew::Report& r);

// Pinned copies of a sample's arrays, for samples that keep their data in std::vectors: bound
// instead of them (the user's data "already pinned"); copying in and back is untimed.
class PinnedCopies {
 public:
  explicit PinnedCopies(sinew::Runtime& rt) : rt_(rt) {}
  std::vector<sinew::Binding> wrap(std::vector<sinew::Binding> b);
  void restore() const;  // the written arrays back into the sample's, for its check

 private:
  sinew::Runtime& rt_;
  std::vector<sinew::PinnedVector<unsigned char>> pinned_;
  struct Back {
    void* to;
    const void* from;
    std::size_t bytes;
  };
  std::vector<Back> back_;
};

// Runs of a prepared sample: bindings() (which restores its inputs) untimed, then
// rt.execute(tree, bindings, options) timed; returns Report::wall_ms; checked by the sample.
// `last` receives each run's Report.
Job sinew_job(sinew::Runtime& rt, sinew::samples::Sample& s, sinew::RunOptions options, sinew::Report* last = nullptr,
              PinnedCopies* pinned = nullptr);
std::string check_of(sinew::samples::Sample& s);  // "OK" or the first mismatch

// One run planned by rt's knowledge base (`train`: RunOptions::train), then the timed runs
// reusing its plan with the online balancer off, so that they measure that plan.
struct Planned {
  sinew::Report first, last;
  Stats m;
};
Planned time_planned(sinew::Runtime& rt, sinew::samples::Sample& s, bool train, const Timing& t,
                     PinnedCopies* pinned = nullptr);

// Removes a knowledge-base file and its journals.
void remove_kb(const fs::path& path);
// Unsets SINEW_* variables that would change what a program measures behind its back.
void clear_overrides(const std::string& program, std::initializer_list<const char*> variables);

// ----- the sweep of static splits (the oracle) -----------------------------------------------

struct SweepSpec {
  std::vector<double> shares;  // CPU shares, ascending
  std::vector<unsigned> overlaps{1};
  std::string fission = "none";
  std::map<unsigned, std::vector<double>> gpu_weights;  // per overlap level (missing: even)
  double prune = 3;  // the rest of a level is skipped (but for the CPUs alone, share 1) once a
                     // point is slower than prune x the best so far and slower than the one before
};
struct SweepPoint {
  double cpu_share = 0;
  unsigned overlap = 1;
  sinew::Config config;
  Stats m;
  std::string note;  // "same plan as ...", "skipped: ...", "untimed runs only: ..."
  bool skipped = false;
};
// 0, step, 2 step, ..., 1, plus `extra`, sorted.
std::vector<double> sweep_shares(double step, const std::vector<double>& extra = {});
// Each (overlap, share) point in order: `measure(point, give_up_ms)` times it (or returns what a
// resumed CSV holds); a point with the plan of an earlier one reuses its result, and one past
// the pruning point is skipped: both are handed to `record`. `stop` is asked between points.
// `best_ms`: the best time known beforehand, for pruning.
std::vector<SweepPoint> sweep_splits(const Roles& r, const SweepSpec& spec, double best_ms,
                                     const std::function<Stats(const SweepPoint&, double give_up_ms)>& measure,
                                     const std::function<void(const SweepPoint&)>& record,
                                     const std::function<bool()>& stop);
const SweepPoint* best_point(const std::vector<SweepPoint>& points);

}  // namespace bench
