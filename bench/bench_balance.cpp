// bench/bench_balance.cpp — the spec's Fig. 4 experiment: Saxpy run over and over while a CPU load
// comes and goes, and how Sinew's online balancer moves the work between the CPU and the GPU.
//
//   bench_balance [--size 50M] [--executions 300] [--load-start 100] [--load-stop 200]
//                 [--threads N] [--plan SPEC | --kb PATH] [--pinned] [--out DIR] [--quick]
//
// First the starting plan (the knowledge base's, trained on first use, or --plan), then the
// oracle: static CPU/GPU splits swept with the load off and on, no balancing; the best median per
// load state is what a scheduler that knew the load would have run. Then the experiment:
// --executions runs with the balancer on, the load generator (tools/load.hpp) started before run
// --load-start and stopped before run --load-stop. Writes DIR/bench_balance.csv (one row per
// execution, appended as measured), DIR/bench_balance_oracle.csv (the sweep), DIR/bench_balance.md
// (shares before / during / after the load, executions to settle, rebalances per level and phase,
// time lost against the oracle) and DIR/bench_balance.png (CPU share and execution time over the
// executions, the spec's Fig. 4). See docs/BENCHMARKS.md.
#include "bench_common.hpp"
#include "load.hpp"
#include "output.hpp"
#include "plans.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace sinew_bench;

namespace {

// ----- flags ---------------------------------------------------------------------------------

struct Settings {
  Common c;
  std::size_t size = 50000000;
  std::size_t executions = 300, load_start = 100, load_stop = 200;
  unsigned threads = 0;        // 0: one per hardware thread
  std::string plan;            // empty: the knowledge base plans
  std::string kb;              // empty: a fresh DIR/bench_balance_kb.sqlite
  bool pinned = false;
  bool balance = true;
};

Settings parse_settings(int argc, char** argv) {
  Settings s;
  bool size_set = false, executions_set = false, start_set = false, stop_set = false, threads_set = false;
  Cli cli(
      "The spec's Fig. 4: Saxpy (y = a*x + y, float, host-resident data) run over and over on the\n"
      "CPU and the GPU together while a CPU load (busy threads solving dense linear systems) is\n"
      "switched on and off: how the online balancer moves the work, how fast it settles, and the\n"
      "time lost against an oracle that knew the load (the best static split, swept beforehand\n"
      "with the load off and on). Needs a CPU and a GPU; without a GPU run it with\n"
      "POCL_DEVICES=\"pthread pthread\": the second PoCL device stands in for the GPU, driven as a\n"
      "discrete device, and since both share the same cores the load slows both alike.\n");
  cli.section("The experiment");
  cli.option("--size", "N", "saxpy elements (default 50M, the spec's; --quick 2M)", [&](const std::string& v) {
    const auto n = cli.to_counts("--size", v);
    if (n.size() != 1) cli.fail("--size", "one size, not a list");
    s.size = n[0];
    size_set = true;
  });
  cli.option("--executions", "N", "runs of the experiment (default 300; --quick 60)", [&](const std::string& v) {
    s.executions = cli.to_unsigned("--executions", v);
    executions_set = true;
  });
  cli.option("--load-start", "N", "the load starts before this run (0-based; default 100; --quick 20)",
             [&](const std::string& v) {
               s.load_start = cli.to_unsigned("--load-start", v);
               start_set = true;
             });
  cli.option("--load-stop", "N", "... and stops before this one (default 200; --quick 40)", [&](const std::string& v) {
    s.load_stop = cli.to_unsigned("--load-stop", v);
    stop_set = true;
  });
  cli.option("--threads", "N", "load threads (default 0: one per hardware thread; --quick 2)",
             [&](const std::string& v) {
               s.threads = cli.to_unsigned("--threads", v);
               if (s.threads > 4096) cli.fail("--threads", "at most 4096");
               threads_set = true;
             });
  cli.option("--plan", "SPEC",
             "start from this plan and balance it (Config::parse syntax: cpu=0.5,\n"
             "cpu:0=0.5,overlap=2, ...); default: the knowledge base plans (trains on\n"
             "first use) and the balancer adapts that plan",
             [&](const std::string& v) {
               if (v.empty()) cli.fail("--plan", "empty plan (write e.g. --plan cpu=0.5)");
               s.plan = v;
             });
  cli.option("--kb", "PATH", "the knowledge base file (default: a fresh DIR/bench_balance_kb.sqlite)",
             [&](const std::string& v) { s.kb = v; });
  cli.flag("--pinned", "keep x and y in Runtime::pinned memory (Sample::use_pinned_memory)", [&] { s.pinned = true; });
  cli.flag("--no-balance", "the control: the same runs with the balancer off", [&] { s.balance = false; });
  add_common(cli, s.c, /*default_repeat=*/3, /*resumable=*/false);
  cli.option("--oracle-repeat", "N", "timed runs per static split of the oracle (default 3; = --repeat)",
             [&](const std::string& v) {
               s.c.repeat = std::max(1u, cli.to_unsigned("--oracle-repeat", v));
               s.c.repeat_set = true;
             });
  cli.parse(argc, argv);
  if (s.c.quick) {
    if (!size_set) s.size = 2000000;
    if (!executions_set) s.executions = 60;
    if (!start_set) s.load_start = 20;
    if (!stop_set) s.load_stop = 40;
    if (!threads_set) s.threads = 2;
  }
  if (s.executions == 0) cli.fail("--executions", "at least 1");
  if (s.load_start > s.load_stop)
    cli.fail("--load-start", std::to_string(s.load_start) + " is after --load-stop " + std::to_string(s.load_stop));
  if (s.load_stop > s.executions)
    cli.fail("--load-stop", std::to_string(s.load_stop) + " is beyond --executions " + std::to_string(s.executions) +
                                " (the load stops before run --load-stop; at most --executions)");
  finish_common(cli, s.c, /*quick_repeat=*/3);
  return s;
}

// ----- helpers -------------------------------------------------------------------------------

std::string stamp() { return "  [" + fmt("%6.1f", seconds_since_start()) + " s] "; }

// What the balancer calls balanced: the fastest active device finished within this fraction of the
// slowest's time; the runtime reads the same variable over the same default.
double balanced_within() {
  double within = sinew::BalancerSettings{}.with_defaults().balanced_within.value();
  if (const char* e = std::getenv("SINEW_BALANCE_WITHIN"); e && *e) within = std::atof(e);
  return within;
}

// 1 - fastest/slowest over the devices with a share: for runs the balancer did not watch
// (--no-balance), which carry no deviation of their own.
double deviation_of(const sinew::Report& r) {
  double lo = 0, hi = 0;
  for (std::size_t i = 0; i < r.device_ms.size() && i < r.config.shares.size(); ++i)
    if (r.config.shares[i] > 0 && r.device_ms[i] > 0) {
      lo = lo > 0 ? std::min(lo, r.device_ms[i]) : r.device_ms[i];
      hi = std::max(hi, r.device_ms[i]);
    }
  return hi > 0 ? 1.0 - lo / hi : 0.0;
}

std::string column_id(const sinew::DeviceInfo& d) {
  std::string id = d.id();
  id.erase(std::remove(id.begin(), id.end(), ':'), id.end());
  return id;  // "cpu0", "gpu0": plain column names, for gnuplot
}

// One run as the experiment times it: the bindings (which restore y) are made before the clock
// starts, as in time_sinew; the clock covers the whole request, a level-2 retraining included.
struct Timed {
  sinew::Report report;
  double wall_ms = 0;
};

Timed run_once(sinew::Runtime& rt, sinew::samples::Sample& s, const sinew::RunOptions& options) {
  auto bindings = s.bindings();
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.report = rt.run(s.tree(), std::move(bindings), options).get();
  t.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

// ----- the starting plan -----------------------------------------------------------------------

struct Start {
  sinew::Config config;
  sinew::RunOptions options;  // what every execution of the experiment runs with
  std::string note;           // for the report
};

// Given (--plan), or planned by the knowledge base (trained on first use) in a run the balancer
// does not watch, so that it sees the experiment's runs only. Throws on a bad --plan.
Start starting_plan(sinew::Runtime& rt, const Roles& roles, sinew::samples::Sample& s, const Settings& st,
                    const std::string& kb) {
  Start start;
  if (!st.plan.empty()) {
    try {
      start.config = sinew::Config::parse(st.plan, rt.devices());
    } catch (const sinew::Error& e) {
      throw std::runtime_error("--plan: " + std::string(e.what()));
    }
    start.options.plan = st.plan;
    start.options.balance = st.balance;
    start.note = "--plan " + st.plan + " = " + start.config.str();
  } else {
    std::cerr << st.c.program << ": planning through the knowledge base " << kb << "\n";
    sinew::RunOptions planning;
    planning.balance = false;
    const Timed t = run_once(rt, s, planning);
    start.config = t.report.config;
    if (!st.balance) start.options.balance = false;  // else unset: on, as for any plan of the knowledge base
    start.note = "the knowledge base (" + kb + "): " + std::string(sinew::to_string(t.report.provenance)) + " " + start.config.str();
    if (t.report.training_executions)
      start.note += ", trained in " + std::to_string(t.report.training_executions) + " executions, " +
                    fmt("%.1f", t.report.training_seconds) + " s";
  }
  const SplitShares shares = shares_of(start.config, roles);
  start.note += " (CPU " + pct(shares.cpu) + ", GPU " + pct(shares.gpu) + ")";
  return start;
}

// ----- the oracle ----------------------------------------------------------------------------

// A static split at one CPU share, timed with the load off and on.
struct OraclePoint {
  double cpu_share = 0;
  Measurement off, on;
  const Measurement& at(bool load) const { return load ? on : off; }
};

struct Oracle {
  std::vector<OraclePoint> points;
  sinew::Config start;  // the experiment's starting plan: the sweep keeps its fission, overlap, GPU weights
  const OraclePoint* best(bool load) const {
    const OraclePoint* b = nullptr;
    for (const auto& p : points)
      if (p.at(load).ok() && !std::isnan(p.at(load).median_ms) && (!b || p.at(load).median_ms < b->at(load).median_ms))
        b = &p;
    return b;
  }
  double best_ms(bool load) const {
    const OraclePoint* b = best(load);
    return b ? b->at(load).median_ms : kNaN;
  }
};

// CPU shares 0, 0.1, ..., 1, the rest on the GPU(s) weighted as in the starting plan, with its
// fission and overlap; no balancing. Load off first, then on.
Oracle sweep_oracle(sinew::Runtime& rt, const Roles& roles, sinew::samples::Sample& s, const sinew::Config& start,
                    const Settings& st, sinew_tools::LoadGenerator& load, const Deadline& deadline) {
  Oracle oracle;
  oracle.start = start;
  const auto weights = shares_of(start, roles).gpu_weights();
  for (int k = 0; k <= 10; ++k) oracle.points.push_back({k / 10.0, {}, {}});
  CsvLog csv(st.c.out / (st.c.program + "_oracle.csv"),
             {"load", "cpu_share", "fission", "overlap", "median_ms", "iqr_ms", "min_ms", "max_ms", "runs", "check"},
             false);
  for (bool on : {false, true}) {
    if (on) load.start(st.threads);
    for (auto& p : oracle.points) {
      if (deadline.check(st.c.program)) break;
      sinew::RunOptions opts = with_config(make_plan(roles, p.cpu_share, weights, start.fission, start.overlap));
      opts.balance = false;
      Measurement& m = on ? p.on : p.off;
      m = time_sinew(rt, s, opts, st.c.warmup, st.c.repeat, nullptr, nullptr, st.c.point_seconds * 1000);
      csv.append({{"load", on ? "on" : "off"},
                  {"cpu_share", num(p.cpu_share)},
                  {"fission", opts.config->fission},
                  {"overlap", std::to_string(opts.config->overlap)},
                  {"median_ms", num(m.median_ms)},
                  {"iqr_ms", num(m.iqr_ms)},
                  {"min_ms", num(m.min_ms)},
                  {"max_ms", num(m.max_ms)},
                  {"runs", std::to_string(m.runs)},
                  {"check", m.check}});
      std::cerr << stamp() << "oracle, load " << (on ? "on " : "off") << " cpu " << pct(p.cpu_share) << ": "
                << fmt("%.3f", m.median_ms) << " ms " << m.check << "\n";
    }
    if (on) load.stop();
  }
  return oracle;
}

// ----- the experiment ------------------------------------------------------------------------

enum Phase { kBefore = 0, kDuring = 1, kAfter = 2 };
const char* const kPhaseNames[] = {"before", "during", "after"};

struct Execution {
  std::size_t n = 0;
  Phase phase = kBefore;
  SplitShares shares, after;  // the plan this run used; the plan for the next run
  double wall_ms = 0;
  double deviation = 0;
  int level = 0;              // the rebalance after this run: 0 none, 1 or 2
};

std::vector<std::string> csv_columns(const std::vector<sinew::DeviceInfo>& devices) {
  std::vector<std::string> c = {"n", "phase", "load", "cpu_share", "gpu_share"};
  for (const auto& d : devices) c.push_back("ms_" + column_id(d));
  for (const char* x : {"wall_ms", "exec_ms", "deviation", "lbt", "balance_level", "cpu_share_after",
                        "gpu_share_after", "oracle_cpu_share", "oracle_ms"})
    c.push_back(x);
  for (const auto& d : devices) c.push_back("share_" + column_id(d));
  for (const char* x : {"fission", "overlap", "provenance"}) c.push_back(x);
  return c;
}

class Experiment {
 public:
  Experiment(sinew::Runtime& rt, const Roles& roles, sinew::samples::Sample& s, const Settings& st, const Oracle& oracle)
      : rt_(rt), roles_(roles), s_(s), st_(st), oracle_(oracle),
        csv_(st.c.csv(), csv_columns(rt.devices()), /*resume=*/false) {}

  // Runs the executions with `options`, switching the load on and off; returns them. Stops
  // early (complete() false) when the deadline passes.
  std::vector<Execution> run(const sinew::RunOptions& options, sinew_tools::LoadGenerator& load,
                             const Deadline& deadline) {
    std::vector<Execution> runs;
    for (std::size_t n = 0; n < st_.executions; ++n) {
      if (deadline.check(st_.c.program)) break;
      if (n == st_.load_start && st_.load_start < st_.load_stop)
        std::cerr << stamp() << "run " << n << ": load on, " << load.start(st_.threads) << " threads\n";
      if (n == st_.load_stop && load.running()) {
        solved_ = load.stop();
        std::cerr << stamp() << "run " << n << ": load off (" << solved_ << " problems solved)\n";
      }
      runs.push_back(record(n, run_once(rt_, s_, options)));
    }
    if (load.running()) solved_ = load.stop();
    return runs;
  }
  std::uint64_t solved() const { return solved_; }

 private:
  Execution record(std::size_t n, const Timed& t) {
    const sinew::Report& r = t.report;
    Execution e;
    e.n = n;
    e.phase = n < st_.load_start ? kBefore : n < st_.load_stop ? kDuring : kAfter;
    e.shares = shares_of(r.config, roles_);
    e.after = r.balance ? shares_of(r.balance->after, roles_) : e.shares;
    e.wall_ms = t.wall_ms;
    e.deviation = r.execution ? r.deviation : deviation_of(r);
    e.level = r.balance ? r.balance->level : 0;

    const bool load = e.phase == kDuring;
    const OraclePoint* best = oracle_.best(load);
    CsvLog::Row row = {{"n", std::to_string(n)},
                       {"phase", kPhaseNames[e.phase]},
                       {"load", load ? "1" : "0"},
                       {"cpu_share", num(e.shares.cpu)},
                       {"gpu_share", num(e.shares.gpu)},
                       {"wall_ms", num(e.wall_ms)},
                       {"exec_ms", num(r.wall_ms)},
                       {"deviation", num(e.deviation)},
                       {"lbt", num(r.lbt)},
                       {"balance_level", std::to_string(e.level)},
                       {"cpu_share_after", num(e.after.cpu)},
                       {"gpu_share_after", num(e.after.gpu)},
                       {"oracle_cpu_share", best ? num(best->cpu_share) : ""},
                       {"oracle_ms", num(oracle_.best_ms(load))},
                       {"fission", r.config.fission},
                       {"overlap", std::to_string(r.config.overlap)},
                       {"provenance", std::string(sinew::to_string(r.provenance))}};
    const auto& devices = rt_.devices();
    for (std::size_t i = 0; i < devices.size(); ++i) {
      row["ms_" + column_id(devices[i])] = num(i < r.device_ms.size() ? r.device_ms[i] : 0.0);
      row["share_" + column_id(devices[i])] = num(i < r.config.shares.size() ? r.config.shares[i] : 0.0);
    }
    csv_.append(row);

    if (e.level || n % 10 == 0 || n + 1 == st_.executions)
      std::cerr << stamp() << "run " << n << (load ? " (load)" : "") << ": cpu " << pct(e.shares.cpu) << " gpu "
                << pct(e.shares.gpu) << ", " << fmt("%.2f", e.wall_ms) << " ms, deviation " << fmt("%.3f", e.deviation)
                << ", lbt " << fmt("%.2f", r.lbt)
                << (e.level ? ", level-" + std::to_string(e.level) + " rebalance -> cpu " + pct(e.after.cpu) : "")
                << "\n";
    if (st_.c.verbose) std::cerr << r.str();
    return e;
  }

  sinew::Runtime& rt_;
  const Roles& roles_;
  sinew::samples::Sample& s_;
  const Settings& st_;
  const Oracle& oracle_;
  CsvLog csv_;
  std::uint64_t solved_ = 0;
};

// ----- the summary ---------------------------------------------------------------------------

constexpr std::size_t kTail = 20;        // runs whose medians describe a phase's end state
constexpr std::size_t kBalancedRun = 5;  // consecutive balanced runs that count as settled

struct PhaseSummary {
  std::size_t first = 0, last = 0;   // runs [first, last)
  SplitShares shares;                // medians over the phase's last kTail runs
  double median_ms = kNaN;           // ditto
  unsigned level1 = 0, level2 = 0;
  double actual_ms = 0, oracle_ms = kNaN;
  std::optional<std::size_t> settle;  // runs from the phase's start to a balanced stretch
  std::size_t size() const { return last - first; }
};

// Runs from `first` to the first of kBalancedRun consecutive runs within the balance bound, inside
// [first, last); empty when there is none.
std::optional<std::size_t> runs_to_settle(const std::vector<Execution>& runs, std::size_t first, std::size_t last,
                                          double within) {
  std::size_t stretch = 0;
  for (std::size_t n = first; n < last; ++n) {
    stretch = 1 - runs[n].deviation >= within ? stretch + 1 : 0;
    if (stretch == kBalancedRun) return n + 1 - kBalancedRun - first;
  }
  return std::nullopt;
}

std::vector<PhaseSummary> summarise(const std::vector<Execution>& runs, const Oracle& oracle, const Settings& st,
                                    double within) {
  const std::size_t bounds[] = {0, st.load_start, st.load_stop, st.executions};
  std::vector<PhaseSummary> out(3);
  for (int p = 0; p < 3; ++p) {
    PhaseSummary& s = out[p];
    s.first = std::min(bounds[p], runs.size());
    s.last = std::min(bounds[p + 1], runs.size());
    if (s.size() == 0) continue;
    std::vector<double> cpu, gpu, ms;
    for (std::size_t n = s.first; n < s.last; ++n) {
      const Execution& e = runs[n];
      s.actual_ms += e.wall_ms;
      s.level1 += e.level == 1;
      s.level2 += e.level == 2;
      if (n + kTail >= s.last) {
        cpu.push_back(e.shares.cpu);
        gpu.push_back(e.shares.gpu);
        ms.push_back(e.wall_ms);
      }
    }
    s.shares.cpu = median(cpu);
    s.shares.gpu = median(gpu);
    s.median_ms = median(ms);
    s.oracle_ms = oracle.best_ms(p == kDuring) * static_cast<double>(s.size());
    s.settle = runs_to_settle(runs, s.first, s.last, within);
  }
  return out;
}

// ----- the report ----------------------------------------------------------------------------

struct Notes {
  std::string plan, load, check = "not run", plot;
  double within = 0;
};

std::string markdown(const Settings& st, const sinew::Runtime& rt, const Roles& roles, const Notes& notes,
                     const Oracle& oracle, const std::vector<PhaseSummary>& phases, std::size_t done) {
  std::ostringstream md;
  md << "## bench_balance: Saxpy under a CPU load step (the spec's Fig. 4)\n\n" << md_run_header(st.c, &rt);
  md << "- roles: " << roles.describe(rt) << "\n";
  md << "- saxpy: " << count_label(st.size) << " floats, data "
     << (st.pinned ? "in Runtime::pinned memory" : "in pageable host memory") << "; " << done << " of "
     << st.executions << " executions run; load before runs " << st.load_start << " to " << st.load_stop << "\n";
  md << "- load: " << notes.load << "\n";
  md << "- starting plan: " << notes.plan << "\n";
  md << "- balancer: " << (st.balance ? "on" : "off (--no-balance)") << "; balanced = 1 - deviation >= "
     << notes.within << " (deviation = 1 - fastest/slowest active device time); settled = " << kBalancedRun
     << " balanced executions in a row\n";
  md << "- result check after the last execution: " << notes.check << "\n";
  if (done < st.executions)
    md << "\n**Stopped early by --max-seconds** after " << done << " executions. The experiment cannot resume "
          "(its state is the balancer's, inside the process): run it again with more time.\n";
  md << "\n";

  md << "### Oracle: static splits, no balancing\n\nMedian ms of " << st.c.repeat << " timed runs after "
     << std::max(1u, st.c.warmup) << " warm-up; fission " << oracle.start.fission << ", overlap "
     << oracle.start.overlap << " (the starting plan's); * = best.\n\n";
  MdTable sweep({"CPU share", "load off ms", "load on ms"});
  const OraclePoint* boff = oracle.best(false);
  const OraclePoint* bon = oracle.best(true);
  auto cell = [](const Measurement& m, bool best) {
    return m.ok() ? fmt("%.3f", m.median_ms) + (best ? " *" : "") : m.check == "OK" ? "-" : m.check;
  };
  for (const auto& p : oracle.points) sweep.add({pct(p.cpu_share), cell(p.off, &p == boff), cell(p.on, &p == bon)});
  md << sweep.str();

  md << "\n### Shares and rebalances per phase\n\nShares and ms: medians of the phase's last " << kTail
     << " executions. Settle: executions from the phase's first (the start, the load switched on, the load "
        "switched off) to the first of "
     << kBalancedRun << " consecutive balanced executions.\n\n";
  MdTable ph({"phase", "executions", "CPU share", "GPU share", "median ms", "oracle split (CPU)", "oracle ms",
              "level-1", "level-2", "executions to settle"});
  for (int p = 0; p < 3; ++p) {
    const PhaseSummary& s = phases[p];
    if (s.size() == 0) continue;
    const OraclePoint* b = oracle.best(p == kDuring);
    ph.add({std::string(kPhaseNames[p]) + " (" + std::to_string(s.first) + "-" + std::to_string(s.last - 1) + ")",
            std::to_string(s.size()), pct(s.shares.cpu), pct(s.shares.gpu), fmt("%.3f", s.median_ms),
            b ? pct(b->cpu_share) : "-", fmt("%.3f", oracle.best_ms(p == kDuring)), std::to_string(s.level1),
            std::to_string(s.level2), s.settle ? std::to_string(*s.settle) : "not within the phase"});
  }
  md << ph.str();

  md << "\n### Time lost against the oracle\n\nlost = (sum of the executions' times - executions x the oracle's "
        "best median) / the latter; the oracle runs the best static split for the phase's load (off before and "
        "after, on during). Level-2 retraining happens inside an execution and counts in its time.\n\n";
  MdTable lost({"phase", "sum ms", "oracle sum ms", "lost"});
  double actual = 0, ideal = 0;
  for (int p = 0; p < 3; ++p) {
    const PhaseSummary& s = phases[p];
    if (s.size() == 0) continue;
    lost.add({kPhaseNames[p], fmt("%.1f", s.actual_ms), fmt("%.1f", s.oracle_ms),
              fmt("%+.1f%%", 100 * (s.actual_ms - s.oracle_ms) / s.oracle_ms)});
    actual += s.actual_ms;
    ideal += s.oracle_ms;
  }
  if (!lost.empty()) lost.add({"total", fmt("%.1f", actual), fmt("%.1f", ideal), fmt("%+.1f%%", 100 * (actual - ideal) / ideal)});
  md << lost.str() << "\n" << notes.plot << "\n";
  return md.str();
}

// Fig. 4: CPU share and execution time over the executions, the load window shaded, the
// rebalances marked at the share they moved to. The gnuplot script names its files relative to
// the output folder, so where the run had no gnuplot (the GPU machine) it draws the plot later:
// `cd DIR && gnuplot bench_balance.png.gp`. Returns a line for the report.
std::string plot(const Settings& st) {
  const fs::path png = st.c.png("");
  const fs::path dir = png.parent_path().empty() ? fs::path(".") : png.parent_path();
  const std::string gp_name = png.filename().string() + ".gp", log_name = png.filename().string() + ".log";
  {
    std::ofstream gp(dir / gp_name, std::ios::trunc);
    const std::string csv = "'" + st.c.csv().filename().string() + "'";
    gp << "# Written by bench_balance: the spec's Fig. 4 from " << st.c.csv().filename().string()
       << " (run it in this folder: gnuplot " << gp_name << ")\n"
       << "set datafile separator ','\n"
       << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1280,640 noenhanced "
          "font 'sans,10' } else { set terminal png size 1280,640 }\n"
       << "set output '" << png.filename().string() << "'\n"
       << "set title 'Saxpy, " << count_label(st.size) << " floats, under a CPU load step: share of the work on the "
       << "CPU and execution time'\n"
       << "set xlabel 'execution'\nset ylabel 'CPU share (%)'\nset y2label 'execution time (ms)'\n"
       << "set xrange [0:" << st.executions << "]\nset yrange [0:100]\nset y2range [0:*]\n"
       << "set ytics nomirror\nset y2tics\nset grid ytics\nset key outside top center horizontal\n";
    if (st.load_start < st.load_stop)
      gp << "set object 1 rect from " << st.load_start << ", graph 0 to " << st.load_stop
         << ", graph 1 behind fillcolor rgb '#f4cccc' fillstyle solid 1.0 noborder\n"
         << "set label 1 'CPU load on' at " << (st.load_start + st.load_stop) / 2.0 << ", graph 0.96 center\n";
    gp << "plot " << csv << " using 'n':(column('cpu_share')*100) with steps lw 2 lc rgb '#1f77b4' "
       << "title 'CPU share', \\\n"
       << "  " << csv << " using 'n':(column('oracle_cpu_share')*100) with steps dt 2 lc rgb '#2ca02c' "
       << "title 'oracle CPU share (best static split)', \\\n"
       << "  " << csv << " using 'n':'wall_ms' axes x1y2 with lines lc rgb '#7f7f7f' title 'execution time (ms)', \\\n"
       << "  " << csv << " using (column('n')+1):(column('balance_level')==1 ? column('cpu_share_after')*100 : NaN) "
       << "with points pt 7 ps 1.3 lc rgb '#ff7f0e' title 'level 1 (L1): share moved', \\\n"
       << "  " << csv << " using (column('n')+1):(column('balance_level')==2 ? column('cpu_share_after')*100 : NaN) "
       << "with points pt 5 ps 1.5 lc rgb '#d62728' title 'level 2 (L2): retrained'\n";
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "No plot: gnuplot not found (apt-get install gnuplot-nox); where it is, `gnuplot " + gp_name +
           "` in this folder draws it.";
  const std::string cmd = "cd '" + dir.string() + "' && gnuplot '" + gp_name + "' 2>'" + log_name + "'";
  if (std::system(cmd.c_str()) != 0 || !fs::exists(png)) {
    std::ifstream l(dir / log_name);
    std::string first;
    std::getline(l, first);
    return "No plot: gnuplot failed on " + gp_name + (first.empty() ? "" : ": " + first);
  }
  std::error_code ec;
  fs::remove(dir / log_name, ec);
  return "Plot: " + png.filename().string() + " (CPU share and execution time per execution; markers: the share "
         "a level-1 or level-2 rebalance moved to, at the first execution that ran it). Script: " + gp_name + ".";
}

}  // namespace

int main(int argc, char** argv) {
  const Settings st = parse_settings(argc, argv);
  const Deadline deadline(st.c.max_seconds);
  try {
    Notes notes;
    notes.within = balanced_within();
    // A fresh knowledge base by default, so that the experiment starts from a plan trained on this
    // machine now and not from what an earlier run (or its balancer) left.
    const std::string kb = st.kb.empty() ? (st.c.out / "bench_balance_kb.sqlite").string() : st.kb;
    if (st.kb.empty())
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(kb + suffix);
    sinew::RuntimeOptions ro;
    ro.kb_path = kb;
    auto rt = make_runtime(/*zero_copy_stand_in=*/false, ro);
    const Roles roles = Roles::of(*rt);
    if (!roles.hybrid()) {
      const std::string why = "needs a CPU and a GPU and found " + roles.describe(*rt) +
                              "; without a GPU run it with POCL_DEVICES=\"pthread pthread\"";
      std::cerr << st.c.program << ": SKIPPED: " << why << "\n";
      CsvLog(st.c.csv(), csv_columns(rt->devices()), false);
      write_file(st.c.md(), "## bench_balance: Saxpy under a CPU load step (the spec's Fig. 4)\n\n" +
                                md_run_header(st.c, rt.get()) + "**Skipped:** " + why + ".\n");
      return 0;
    }
    std::cerr << st.c.program << ": " << roles.describe(*rt) << "\n";

    auto sample = sinew::samples::find("saxpy");
    if (st.pinned && !sample->use_pinned_memory(*rt)) throw std::runtime_error("the saxpy sample cannot use pinned memory");
    sample->prepare(st.size);

    const Start start = starting_plan(*rt, roles, *sample, st, kb);
    notes.plan = start.note;
    std::cerr << st.c.program << ": starting plan " << notes.plan << "\n";

    sinew_tools::LoadGenerator load;
    const unsigned load_threads = st.threads ? st.threads : sinew_tools::LoadGenerator::hardware_threads();
    const Oracle oracle = sweep_oracle(*rt, roles, *sample, start.config, st, load, deadline);

    Experiment experiment(*rt, roles, *sample, st, oracle);
    const auto runs = experiment.run(start.options, load, deadline);
    if (!runs.empty()) {
      const auto c = sample->check();
      notes.check = c.ok ? "OK" : "MISMATCH: " + c.message;
    }
    notes.load = std::to_string(load_threads) + " thread(s) (tools/load.hpp, `sinew load`) solving random " +
                 std::to_string(sinew_tools::LoadGenerator::kOrder) + "x" +
                 std::to_string(sinew_tools::LoadGenerator::kOrder) + " dense linear systems; " +
                 std::to_string(experiment.solved()) + " solved during the experiment's load phase";
    if (!runs.empty()) notes.plot = plot(st);

    const auto phases = summarise(runs, oracle, st, notes.within);
    const std::string md = markdown(st, *rt, roles, notes, oracle, phases, runs.size());
    write_file(st.c.md(), md);
    std::cout << md;
    std::cerr << st.c.program << ": wrote " << st.c.csv().string() << " and " << st.c.md().string() << " ("
              << std::lround(seconds_since_start()) << " s)\n";
    if (runs.size() < st.executions) return kExitStopped;
    return notes.check == "OK" ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << st.c.program << ": " << e.what() << "\n";
    return 2;
  }
}
