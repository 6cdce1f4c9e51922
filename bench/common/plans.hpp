// bench/common/plans.hpp — plans the benchmark programs build and measure themselves: which
// runtime devices play the CPU and the GPU(s), static CPU/GPU splits as Configs, the sweep of
// static splits (the "oracle"), shares balanced between several GPUs, and runs planned by the
// knowledge base (trained or derived) timed like any other variant.
//
// Everything runs through the ordinary execution path, Runtime::run with a RunOptions::config or
// a knowledge-base plan, so that an oracle point and Sinew's own plan differ only in the plan.
#pragma once

#include "bench_common.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sinew_bench {

// The runtime's devices by role. A GPU is any discrete device (a real GPU, or a CPU device driven
// as one on machines without a GPU); a CPU is any other device (zero-copy, fission).
struct Roles {
  std::vector<std::size_t> cpus, gpus;  // runtime device indices
  bool stand_in = false;                // a "GPU" is a CPU device driven as discrete
  std::vector<unsigned> overlaps{1};    // overlap levels of the first GPU
  std::vector<std::string> fissions{"none"};  // fission configurations of the first CPU
  std::size_t devices = 0;              // runtime devices in all

  static Roles of(const sinew::Runtime& rt);
  bool hybrid() const { return !cpus.empty() && !gpus.empty(); }
  // "1 CPU (cpu:0 ...) + 2 GPUs (gpu:0 ..., gpu:1 ...)".
  std::string describe(const sinew::Runtime& rt) const;
};

// A static split: `cpu_share` of the work spread evenly over the CPUs, the rest over the GPUs in
// proportion to `gpu_weights` (empty: evenly); `fission` for the CPUs, `overlap` for the GPUs.
// Normalised so that equal plans compare equal: no CPU work -> fission "none", no GPU work ->
// overlap 1.
sinew::Config make_plan(const Roles& r, double cpu_share, const std::vector<double>& gpu_weights,
                        const std::string& fission, unsigned overlap);
sinew::RunOptions with_config(const sinew::Config& c);

// A plan's shares summed by role.
struct SplitShares {
  double cpu = 0, gpu = 0;
  std::vector<double> per_gpu;  // each GPU's share of the whole work
  // The GPUs' shares relative to each other (summing to 1); empty without GPU work.
  std::vector<double> gpu_weights() const;
};
SplitShares shares_of(const sinew::Config& c, const Roles& r);
// "0.5/0.5" and back (GPU shares or weights).
std::string join_shares(const std::vector<double>& v);
std::vector<double> parse_shares(const std::string& s);

// The spec's "level of parallelism": partitions that ran concurrently (distinct device,
// sub-device and overlap queue with work).
std::size_t parallelism(const sinew::Report& r);

// Weights between several GPUs such that they finish together, found by measuring: start even,
// then move work in proportion to each GPU's measured rate (Report::device_ms) for up to `rounds`
// runs, stopping when their times are within 5%. One GPU: {1}. Throws what a run throws.
std::vector<double> balance_gpus(sinew::Runtime& rt, const Roles& r, sinew::samples::Sample& s, unsigned overlap,
                                 unsigned rounds = 3);

// ----- runs planned by the knowledge base ----------------------------------------------------

struct PlannedTiming {
  sinew::Report first;   // the run that planned: trained (with its cost) or derived
  sinew::Report last;    // the last timed run
  Measurement m;         // the timed runs after it (the plan it stored, reused)
};
// Runs the sample once planned by rt's knowledge base (`train`: RunOptions::train, so it trains
// even when it knows the input), then times `repeat` runs that reuse the stored plan (KB hits)
// with the online balancer off, so that they measure that plan. Errors land in m.check.
PlannedTiming time_planned(sinew::Runtime& rt, sinew::samples::Sample& s, bool train, unsigned warmup,
                           unsigned repeat, double budget_ms, PinnedCopies* pinned = nullptr);

// ----- the sweep of static splits (the oracle) -----------------------------------------------

struct SweepSpec {
  std::vector<double> shares;                       // CPU shares, ascending, 0..1
  std::vector<unsigned> overlaps{1};
  std::string fission = "none";
  std::map<unsigned, std::vector<double>> gpu_weights;  // per overlap level (missing: even)
  double prune = 3;         // skip the rest of an overlap level's sweep (but for the CPUs alone,
                            // share 1) once a point is slower than prune x the best so far and
                            // slower than the point before it
  unsigned warmup = 1, repeat = 5;
  double budget_ms = 0;     // time_sinew's budget
};

struct SweepPoint {
  double cpu_share = 0;
  unsigned overlap = 1;
  sinew::Config config;
  Measurement m;
  std::string note;         // "" | "warm-up only (...)" | "same plan as ..." | "skipped: ..."
  bool skipped = false;     // not measured (pruned): m has no time
};

// The steps of a sweep: 0, step, 2 step, ..., 1 (and 1 itself), plus `extra` shares.
std::vector<double> sweep_shares(double step, const std::vector<double>& extra = {});

// Measures every (overlap, share) point of `spec` in that order, each through
// RunOptions::config. Before measuring a point it asks `known` (a point measured earlier: resumed
// rows, or another variant with the same plan); otherwise it is measured (or reused when an
// earlier point of this sweep had the same normalised plan) and handed to `done`. Points beyond
// the pruning rule are handed to `done` as skipped. `stop` is asked between points; when it says
// true the sweep returns what it has. `best_ms`: the best time known before the sweep (e.g. the
// devices alone), for pruning.
using KnownPoint = std::function<std::optional<SweepPoint>(double cpu_share, unsigned overlap)>;
std::vector<SweepPoint> sweep_splits(sinew::Runtime& rt, const Roles& r, sinew::samples::Sample& s,
                                     const SweepSpec& spec, double best_ms, const KnownPoint& known,
                                     const std::function<void(const SweepPoint&)>& done,
                                     const std::function<bool()>& stop, PinnedCopies* pinned = nullptr);
// The fastest measured point, or null.
const SweepPoint* best_point(const std::vector<SweepPoint>& points);

// "35%" for a share.
std::string pct(double share);

}  // namespace sinew_bench
