// bench/common/bench_common.cpp — flags, Sinew timing, device choice and result tables.
#include "bench_common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace sinew_bench {

namespace {

std::string pad(const std::string& s, std::size_t w, bool right = true) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

bool same_share(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) < 1e-9; }

bool is_sweep(const std::string& variant) { return variant == kSplit || variant == kSplitPinned; }

}  // namespace

// ----- flags ---------------------------------------------------------------------------------

const char* const kCommonFlagsHelp =
    "  --repeat N          timed runs per variant; the median is reported, with the min, max\n"
    "                      and interquartile range (IQR) of the runs (default 7, --quick 3)\n"
    "  --warmup N          untimed runs first (default 1; program builds happen before)\n"
    "  --quick             small sizes, coarse sweep, 3 runs: checks that everything runs\n"
    "  --out DIR           write DIR/<program>.csv (every row, ratio and speedup, appended as\n"
    "                      measured) and DIR/<program>.md (default bench-results/<UTC time>)\n"
    "  --overlaps a,b      Sinew GPU overlap levels tried GPU-only (default 1,2,4); the best\n"
    "                      is used for the splits\n"
    "  --queues N          hand-written GPU pipelines: in-order queues (default 3)\n"
    "  --chunk-mb N        hand-written GPU pipelines: MB per vector per chunk (default 8)\n"
    "  --no-sinew, --no-handwritten   run one side only\n"
    "  --no-pinned-splits  skip the split sweeps with the user's data in pinned memory\n"
    "  --ab N              bench_saxpy: N interleaved rounds of hand-written vs Sinew (CPU alone,\n"
    "                      GPU alone and 60% CPU with the data pinned), one run each per round\n"
    "                      (default 15; 0: off)\n"
    "  --ab-only           bench_saxpy: only the interleaved rounds (no single-device rows, no\n"
    "                      sweeps)\n"
    "  --zero-copy-stand-in  without a GPU, let Sinew run its stand-in as a CPU (zero-copy)\n"
    "                      instead of driving it as a discrete device\n"
    "  --verbose           print the Report of every Sinew variant's last run\n"
    "  --help\n"
    "Devices: the hand-written side takes the first CPU and the first GPU device of any platform;\n"
    "Sinew takes the first CPU and the first GPU of its runtime ($SINEW_DEVICES applies). Without a\n"
    "GPU a second CPU device stands in for it (POCL_DEVICES=\"pthread pthread\"), and the output\n"
    "says so; Sinew then drives it as a discrete device (RuntimeOptions::discrete) so that both\n"
    "sides run their GPU code paths. Numbers from a stand-in only show that the paths run.\n";

std::size_t parse_count(const std::string& s) {
  if (s.empty()) throw std::invalid_argument("empty count");
  std::size_t pos = 0;
  const double v = std::stod(s, &pos);
  double mult = 1;
  std::string suffix = s.substr(pos);
  if (suffix == "K" || suffix == "k") mult = 1e3;
  else if (suffix == "M" || suffix == "m") mult = 1e6;
  else if (suffix == "G" || suffix == "g") mult = 1e9;
  else if (!suffix.empty()) throw std::invalid_argument("bad count '" + s + "' (use e.g. 4096, 64K, 10M)");
  if (!(v > 0)) throw std::invalid_argument("bad count '" + s + "'");
  return static_cast<std::size_t>(std::llround(v * mult));
}

std::string count_label(std::size_t n) {
  if (n >= 1000000 && n % 1000000 == 0) return std::to_string(n / 1000000) + "M";
  return std::to_string(n);
}

Flags parse_flags(int argc, char** argv, const std::string& usage, bool saxpy_program) {
  Flags f;
  f.program = std::filesystem::path(argv[0]).filename().string();
  for (int i = 0; i < argc; ++i) {
    if (i) f.command += ' ';
    f.command += argv[i];
  }
  const char* lenient_env = std::getenv("SINEW_BENCH_LENIENT");
  const bool lenient = lenient_env && std::string(lenient_env) == "1";  // set by scripts/bench
  bool repeat_set = false, step_set = false, pinned_step_set = false, overlaps_set = false;
  auto die = [&](const std::string& msg) {
    std::cerr << f.program << ": " << msg << "\n\n" << usage;
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    auto uint_of = [&](const std::string& s) -> unsigned {
      try {
        std::size_t pos = 0;
        const long v = std::stol(s, &pos);
        if (pos != s.size() || v < 0) throw std::invalid_argument(s);
        return static_cast<unsigned>(v);
      } catch (const std::exception&) {
        die(a + ": not a number: '" + s + "'");
      }
      return 0;
    };
    auto counts_of = [&](const std::string& s) {
      std::vector<std::size_t> out;
      try {
        for (auto& item : split_list(s)) out.push_back(parse_count(item));
      } catch (const std::exception& e) {
        die(a + ": " + e.what());
      }
      if (out.empty()) die(a + ": empty list");
      return out;
    };
    auto note_other = [&](bool ours) {
      if (!ours) std::cerr << f.program << ": note: " << a << " is for the other benchmark program; ignored\n";
      return ours;
    };
    try {
      if (a == "--help" || a == "-h") {
        std::cout << usage;
        std::exit(0);
      } else if (a == "--quick") {
        f.quick = true;
      } else if (a == "--repeat") {
        f.repeat = std::max(1u, uint_of(take()));
        repeat_set = true;
      } else if (a == "--warmup") {
        f.warmup = uint_of(take());
      } else if (a == "--out") {
        f.out = take();
      } else if (a == "--csv") {
        die("--csv was replaced by --out DIR (writes DIR/" + f.program + ".csv and .md)");
      } else if (a == "--overlaps") {
        f.overlaps.clear();
        for (auto& s : split_list(take())) f.overlaps.push_back(std::clamp(uint_of(s), 1u, 16u));
        if (f.overlaps.empty()) die("--overlaps: empty list");
        overlaps_set = true;
      } else if (a == "--queues") {
        f.queues = std::max(1u, uint_of(take()));
      } else if (a == "--chunk-mb") {
        f.chunk_bytes = static_cast<std::size_t>(std::max(1u, uint_of(take()))) << 20;
      } else if (a == "--verbose") {
        f.verbose = true;
      } else if (a == "--no-sinew") {
        f.sinew = false;
      } else if (a == "--no-handwritten") {
        f.handwritten = false;
      } else if (a == "--zero-copy-stand-in") {
        f.zero_copy_stand_in = true;
      } else if (a == "--sizes") {
        auto v = take();
        if (note_other(saxpy_program)) f.sizes = counts_of(v);
      } else if (a == "--step") {
        auto v = take();
        if (note_other(saxpy_program)) {
          f.step = std::stod(v);
          if (!(f.step > 0 && f.step <= 1)) die("--step must be in (0, 1]");
          step_set = true;
        }
      } else if (a == "--sides") {
        auto v = take();
        if (note_other(!saxpy_program)) f.sides = counts_of(v);
      } else if (a == "--bodies") {
        auto v = take();
        if (note_other(!saxpy_program)) f.bodies = counts_of(v);
      } else if (a == "--nbody-steps") {
        auto v = take();
        if (note_other(!saxpy_program)) f.nbody_steps = std::max(1u, uint_of(v));
      } else if (a == "--pinned-step") {
        auto v = take();
        if (note_other(saxpy_program)) {
          f.pinned_step = std::stod(v);
          if (!(f.pinned_step > 0 && f.pinned_step <= 1)) die("--pinned-step must be in (0, 1]");
          pinned_step_set = true;
        }
      } else if (a == "--shares" || a == "--pinned-shares") {
        auto v = take();
        if (note_other(!saxpy_program)) {
          auto& list = a == "--shares" ? f.shares : f.pinned_shares;
          list.clear();
          for (auto& s : split_list(v)) {
            const double x = std::stod(s);
            if (!(x >= 0 && x <= 1)) die(a + ": each share is in [0, 1], not " + s);
            list.push_back(x);
          }
          if (list.empty()) die(a + ": empty list");
        }
      } else if (a == "--ab") {
        auto v = take();
        if (note_other(saxpy_program)) f.ab_rounds = static_cast<unsigned>(std::stoul(v));
      } else if (a == "--ab-only") {
        if (note_other(saxpy_program)) f.ab_only = true;
      } else if (a == "--no-pinned-splits") {
        f.pinned_splits = false;
      } else if (lenient) {
        // scripts/bench passes one set of flags to every program: another program's flag.
        std::string skipped = a;
        if (!has_value && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) skipped += " " + std::string(argv[++i]);
        std::cerr << f.program << ": note: '" << skipped << "' is not a flag of this program; ignored\n";
      } else {
        die("unknown flag '" + a + "'");
      }
    } catch (const std::invalid_argument&) {
      die(a + ": bad value");
    }
  }
  if (f.out.empty()) f.out = (std::filesystem::path("bench-results") / utc_stamp()).string();
  {
    std::error_code ec;
    std::filesystem::create_directories(f.out, ec);
    if (ec || !std::filesystem::is_directory(f.out)) die("--out: cannot create directory " + f.out + ": " + ec.message());
  }
  if (f.quick) {
    if (!repeat_set) f.repeat = 3;
    if (!step_set) f.step = 0.1;
    if (!pinned_step_set) f.pinned_step = 0.2;
    if (!overlaps_set) f.overlaps = {1, 2};
    if (f.sizes.empty()) f.sizes = {1000000};
    if (f.sides.empty()) f.sides = {512};
    if (f.bodies.empty()) f.bodies = {2048};
  }
  if (f.sizes.empty()) f.sizes = {10000000, 50000000, 100000000};
  if (f.sides.empty()) f.sides = {4096};
  if (f.bodies.empty()) f.bodies = {32768};
  if (f.shares.empty()) f.shares = {0.0, 0.1, 0.3, 0.5, 1.0};
  // With the image pinned the GPU is far faster than the CPU on the filter pipeline, so the
  // shares that can pay are small ones.
  if (f.pinned_shares.empty()) f.pinned_shares = {0.0, 0.02, 0.05, 0.1, 0.3, 0.5, 1.0};
  return f;
}

// ----- Sinew -----------------------------------------------------------------------------------

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

Measurement summarize(const std::vector<double>& runs_ms) {
  Measurement m;
  if (runs_ms.empty()) return m;
  m.median_ms = median(runs_ms);
  m.min_ms = *std::min_element(runs_ms.begin(), runs_ms.end());
  m.max_ms = *std::max_element(runs_ms.begin(), runs_ms.end());
  m.iqr_ms = handwritten::quantile(runs_ms, 0.75) - handwritten::quantile(runs_ms, 0.25);
  m.runs = static_cast<unsigned>(runs_ms.size());
  return m;
}

Measurement time_calls(const std::function<void()>& body, unsigned warmup, unsigned repeat,
                       const std::function<void()>& reset) {
  for (unsigned i = 0; i < warmup; ++i) {
    if (reset) reset();
    body();
  }
  std::vector<double> runs;
  runs.reserve(std::max(1u, repeat));
  for (unsigned i = 0; i < std::max(1u, repeat); ++i) {
    if (reset) reset();
    const auto t0 = std::chrono::steady_clock::now();
    body();
    runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return summarize(runs);
}

unsigned runs_within(unsigned repeat, double one_run_ms, double budget_ms) {
  repeat = std::max(1u, repeat);
  if (!(budget_ms > 0) || !(one_run_ms > 0) || one_run_ms * repeat <= budget_ms) return repeat;
  return std::clamp(static_cast<unsigned>(budget_ms / one_run_ms), 1u, repeat);
}

SinewDevices pick_devices(const sinew::Runtime& rt) {
  const auto& devs = rt.devices();
  if (devs.empty()) throw std::runtime_error("the Sinew runtime has no devices");
  SinewDevices d;
  std::vector<std::size_t> cpus, gpus, discrete_cpus;
  for (const auto& info : devs) {
    if (info.kind == sinew::DeviceKind::cpu) (info.discrete ? discrete_cpus : cpus).push_back(info.index);
    else if (info.discrete) gpus.push_back(info.index);
  }
  d.has_cpu = !cpus.empty();
  if (d.has_cpu) d.cpu = cpus[0];
  if (!gpus.empty()) {
    d.gpu = gpus[0];
    d.has_gpu = true;
  } else if (!discrete_cpus.empty()) {
    d.gpu = discrete_cpus[0];
    d.has_gpu = d.gpu_stand_in = true;
  } else if (cpus.size() > 1) {
    d.gpu = cpus[1];
    d.has_gpu = d.gpu_stand_in = true;
  }
  if (!d.has_cpu) d.cpu = d.gpu;
  if (!d.has_gpu) d.gpu = d.cpu;
  d.two = d.has_cpu && d.has_gpu && d.cpu != d.gpu;
  d.gpu_discrete = d.has_gpu && devs.at(d.gpu).discrete;
  return d;
}

std::unique_ptr<sinew::Runtime> make_runtime(bool zero_copy_stand_in, sinew::RuntimeOptions options) {
  const char* env = std::getenv("SINEW_DISCRETE");
  if (zero_copy_stand_in || (env && *env) || (options.discrete && !options.discrete->empty()))
    return std::make_unique<sinew::Runtime>(std::move(options));
  // Which device stands in for a GPU depends only on the devices: decided once per program.
  static std::optional<std::string> stand_in;
  if (!stand_in) {
    sinew::RuntimeOptions probe;
    probe.devices = options.devices;
    sinew::Runtime rt(probe);
    std::vector<std::string> cpus;
    bool other = false;  // a GPU (or accelerator) is there: nothing to emulate
    for (const auto& d : rt.devices()) {
      if (d.kind != sinew::DeviceKind::cpu) other = true;
      else cpus.push_back(d.id());
    }
    stand_in = !other && cpus.size() >= 2 ? cpus[1] : std::string();
  }
  options.discrete = *stand_in;
  return std::make_unique<sinew::Runtime>(std::move(options));
}

std::string SinewDevices::describe(const sinew::Runtime& rt) const {
  const auto& devs = rt.devices();
  auto one = [&](std::size_t i) {
    const auto& x = devs.at(i);
    return x.id() + " = #" + std::to_string(i) + " " + x.name + " (" + x.platform + ", driver " + x.driver_version +
           ", " + std::to_string(x.compute_units) + " CUs" + (x.discrete ? ", discrete" : ", zero-copy") + ")";
  };
  std::string s = "cpu " + (has_cpu ? one(cpu) : std::string("none")) + "; gpu " + (has_gpu ? one(gpu) : std::string("none"));
  if (gpu_stand_in)
    s += devs.at(gpu).discrete ? " [stand-in for a GPU: a CPU device driven as discrete (RuntimeOptions::discrete)]"
                               : " [stand-in for a GPU: a CPU device, zero-copy; overlap has no effect]";
  if (!two) s += " [no CPU+GPU pair: splits are skipped]";
  return s;
}

sinew::RunOptions on_device(std::size_t device) {
  sinew::RunOptions o;
  o.device = device;
  return o;
}

sinew::RunOptions split(const sinew::Runtime& rt, const SinewDevices& d, double cpu_share, unsigned overlap) {
  sinew::Config cfg;
  cfg.shares.assign(rt.devices().size(), 0.0);
  cfg.shares.at(d.cpu) = cpu_share;
  cfg.shares.at(d.gpu) += 1.0 - cpu_share;
  cfg.overlap = overlap;
  cfg.fission = "none";
  sinew::RunOptions o;
  o.config = cfg;
  return o;
}

std::vector<sinew::Binding> PinnedCopies::wrap(std::vector<sinew::Binding> b) {
  back_.clear();
  if (pinned_.size() < b.size()) pinned_.resize(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!b[i].vector) continue;
    const std::size_t bytes = b[i].elements * b[i].type.size;
    if (pinned_[i].size() != bytes) {
      pinned_[i] = {};  // free the old block first
      pinned_[i] = rt_.pinned<unsigned char>(bytes);
    }
    std::memcpy(pinned_[i].data(), b[i].data, bytes);
    if (!b[i].read_only) back_.push_back({b[i].data, pinned_[i].data(), bytes});
    b[i].data = pinned_[i].data();
  }
  return b;
}

void PinnedCopies::restore() const {
  for (const auto& x : back_) std::memcpy(x.to, x.from, x.bytes);
}

Measurement time_sinew(sinew::Runtime& rt, sinew::samples::Sample& s, const sinew::RunOptions& options, unsigned warmup,
                       unsigned repeat, sinew::Report* last, PinnedCopies* pinned, double budget_ms, double give_up_ms) {
  Measurement m;
  // The bindings of one run (untimed work: inputs restored, copied into pinned memory).
  auto prepare = [&] { return pinned ? pinned->wrap(s.bindings()) : s.bindings(); };
  // Results back into the sample's arrays so that check() judges them (untimed).
  auto restore = [&] {
    if (pinned) pinned->restore();
  };
  try {
    double warm_ms = 0;
    sinew::Report rep;
    for (unsigned i = 0; i < std::max(1u, warmup); ++i) {
      auto b = prepare();
      const auto t0 = std::chrono::steady_clock::now();
      rep = rt.execute(s.tree(), std::move(b), options);
      warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    restore();
    if (auto c = s.check(); !c.ok) {
      m.check = "MISMATCH after warm-up: " + c.message;
      return m;
    }
    if (give_up_ms > 0 && warm_ms > give_up_ms) {
      // A first run can be slow for reasons of its own (buffers of a new size, a driver's first
      // use): one more run decides.
      auto b = prepare();
      const auto t0 = std::chrono::steady_clock::now();
      rep = rt.execute(s.tree(), std::move(b), options);
      warm_ms = std::min(warm_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    if (give_up_ms > 0 && warm_ms > give_up_ms) {
      restore();
      if (auto c = s.check(); !c.ok) {
        m.check = "MISMATCH: " + c.message;
        return m;
      }
      m = summarize({warm_ms});
      m.runs = 0;
      m.exec_median_ms = rep.wall_ms;
      if (last) *last = rep;
      return m;
    }
    repeat = runs_within(repeat, warm_ms, budget_ms);
    std::vector<double> wall, exec;
    for (unsigned i = 0; i < std::max(1u, repeat); ++i) {
      auto b = prepare();
      const auto t0 = std::chrono::steady_clock::now();
      rep = rt.execute(s.tree(), std::move(b), options);
      wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      exec.push_back(rep.wall_ms);
    }
    restore();
    m = summarize(wall);
    if (auto c = s.check(); !c.ok) m.check = "MISMATCH: " + c.message;
    m.exec_median_ms = median(exec);
    if (last) *last = rep;
  } catch (const std::exception& e) {
    m.check = std::string("ERROR: ") + e.what();
  }
  return m;
}

namespace {
std::string progress_label(const Row& r) {
  std::string s = "  [" + fmt("%6.1f", seconds_since_start()) + " s] " + r.benchmark + " " + count_label(r.size) + " " +
                  r.impl + " " + r.variant;
  if (!std::isnan(r.cpu_share)) s += " cpu " + fmt("%.2f", r.cpu_share);
  if (r.overlap) s += " ovl " + std::to_string(r.overlap);
  return s + ": " + fmt("%.3f", r.m.median_ms) + " ms " + r.m.check;
}
}  // namespace

void run_sinew_variants(Results& res, const Flags& f, sinew::Runtime& rt, const SinewDevices& sd,
                        sinew::samples::Sample& s, const std::string& benchmark, std::size_t size, double bytes,
                        const std::vector<double>& shares, sinew::samples::Sample* pinned_sample,
                        const std::vector<double>& pinned_shares) {
  PinnedCopies copies(rt);  // for the pinned variants when there is no pinned_sample
  auto run = [&](const std::string& variant, double share, unsigned overlap, const sinew::RunOptions& opts,
                 bool pinned_user = false) {
    sinew::Report rep;
    sinew::samples::Sample& sample = pinned_user && pinned_sample ? *pinned_sample : s;
    PinnedCopies* pinned = pinned_user && !pinned_sample ? &copies : nullptr;
    Row r{benchmark, size,    "sinew", variant, share, overlap, bytes,
          time_sinew(rt, sample, opts, f.warmup, f.repeat, &rep, pinned)};
    std::cerr << progress_label(r) << "\n";
    if (f.verbose && r.m.ok()) std::cout << "sinew " << variant << ": " << rep.str();
    res.add(std::move(r));
  };
  if (sd.has_cpu) run("cpu", kNaN, 0, on_device(sd.cpu));
  if (sd.has_gpu)
    for (unsigned ov : f.overlaps) {
      if (!sd.gpu_discrete && ov != 1) continue;  // overlap queues exist on discrete devices only
      run("gpu", kNaN, ov, ov == 1 ? on_device(sd.gpu) : split(rt, sd, 0.0, ov));
    }
  unsigned best_overlap = 1;
  if (const Row* g = res.best(benchmark, size, "sinew", "gpu")) best_overlap = g->overlap;
  if (sd.has_gpu)
    run("gpu-pinned-user", kNaN, best_overlap, best_overlap == 1 ? on_device(sd.gpu) : split(rt, sd, 0.0, best_overlap),
        /*pinned_user=*/true);
  if (sd.two) {
    for (double share : shares) run(kSplit, share, best_overlap, split(rt, sd, share, best_overlap));
    for (double share : pinned_shares)
      run(kSplitPinned, share, best_overlap, split(rt, sd, share, best_overlap), /*pinned_user=*/true);
  }
}

void add_handwritten(Results& res, Row r, const std::function<double(handwritten::Stats*)>& fn) {
  r.impl = "handwritten";
  try {
    handwritten::Stats st;
    r.m.median_ms = fn(&st);
    r.m.min_ms = st.min_ms;
    r.m.max_ms = st.max_ms;
    r.m.iqr_ms = st.iqr_ms;
  } catch (const std::exception& e) {
    r.m.check = std::string("ERROR: ") + e.what();
  }
  std::cerr << progress_label(r) << "\n";
  res.add(std::move(r));
}

// ----- results -------------------------------------------------------------------------------

std::vector<std::string> Results::csv_columns() {
  return {"kind",   "program", "benchmark", "size",   "impl",   "variant",       "cpu_share", "overlap", "median_ms",
          "min_ms", "max_ms",  "iqr_ms",    "gb_per_s", "sinew_exec_ms", "ratio", "rows",      "check"};
}

void Results::log(const CsvLog::Row& row) {
  if (!log_) return;
  CsvLog::Row r = row;
  r["program"] = program_;
  log_->append(r);
}

void Results::add(Row r) {
  log({{"kind", "time"},
       {"benchmark", r.benchmark},
       {"size", std::to_string(r.size)},
       {"impl", r.impl},
       {"variant", r.variant},
       {"cpu_share", num(r.cpu_share)},
       {"overlap", r.overlap ? std::to_string(r.overlap) : ""},
       {"median_ms", num(r.m.median_ms)},
       {"min_ms", num(r.m.min_ms)},
       {"max_ms", num(r.m.max_ms)},
       {"iqr_ms", num(r.m.iqr_ms)},
       {"gb_per_s", num(r.gbps())},
       {"sinew_exec_ms", num(r.m.exec_median_ms)},
       {"check", r.m.check}});
  rows_.push_back(std::move(r));
}

void Results::add(Ratio r) {
  log({{"kind", "ratio"},
       {"benchmark", r.benchmark},
       {"size", std::to_string(r.size)},
       {"impl", "sinew/handwritten"},
       {"variant", r.what},
       {"median_ms", num(r.sinew_ms)},
       {"ratio", num(r.value())},
       {"rows", "sinew: " + r.sinew + "; handwritten: " + r.handwritten + "; handwritten_ms " + num(r.handwritten_ms)},
       {"check", "OK"}});
  ratios_.push_back(std::move(r));
}

const Row* Results::best(const std::string& benchmark, std::size_t size, const std::string& impl,
                         const std::string& variant, bool interior) const {
  const Row* b = nullptr;
  for (const auto& r : rows_)
    if (r.benchmark == benchmark && r.size == size && r.impl == impl && r.variant == variant && r.m.ok() &&
        (!interior || (r.cpu_share > 1e-9 && r.cpu_share < 1 - 1e-9)) && (!b || r.m.median_ms < b->m.median_ms))
      b = &r;
  return b;
}

const Row* Results::find(const std::string& benchmark, std::size_t size, const std::string& impl,
                         const std::string& variant, double cpu_share) const {
  for (const auto& r : rows_)
    if (r.benchmark == benchmark && r.size == size && r.impl == impl && r.variant == variant &&
        same_share(r.cpu_share, cpu_share))
      return &r;
  return nullptr;
}

namespace {
std::string row_label(const Row* r) {
  std::string s = r->variant;
  if (!std::isnan(r->cpu_share)) s += " cpu " + fmt("%.0f%%", 100 * r->cpu_share);
  if (r->overlap) s += " ovl " + std::to_string(r->overlap);
  return s;
}
}  // namespace

void Results::ratio(const std::string& what, const Row* sinew, const Row* handwritten) {
  if (!sinew || !handwritten || !sinew->m.ok() || !handwritten->m.ok()) return;
  add(Ratio{sinew->benchmark, sinew->size, what, row_label(sinew), row_label(handwritten), sinew->m.median_ms,
            handwritten->m.median_ms});
}

void Results::speedup(const std::string& what, const std::string& benchmark, std::size_t size, const std::string& impl,
                      const std::string& split_variant, const std::vector<const Row*>& singles) {
  const Row* sp = best(benchmark, size, impl, split_variant, /*interior=*/true);
  const Row* single = nullptr;
  for (const Row* r : singles)
    if (r && r->m.ok() && (!single || r->m.median_ms < single->m.median_ms)) single = r;
  if (!sp || !single) return;
  Speedup s{benchmark, size, impl, what, row_label(sp), row_label(single), sp->m.median_ms, single->m.median_ms};
  log({{"kind", "speedup"},
       {"benchmark", s.benchmark},
       {"size", std::to_string(s.size)},
       {"impl", s.impl},
       {"variant", s.what},
       {"median_ms", num(s.split_ms)},
       {"ratio", num(s.value())},
       {"rows", "split: " + s.split + "; single: " + s.single + "; single_ms " + num(s.single_ms)},
       {"check", "OK"}});
  speedups_.push_back(std::move(s));
}

void Results::print_rows(std::ostream& os, const std::string& benchmark, std::size_t size) const {
  os << pad("impl", 12, false) << pad("variant", 18, false) << pad("cpu", 6) << pad("ovl", 4) << pad("median ms", 12)
     << pad("IQR ms", 10) << pad("min ms", 11) << pad("max ms", 11) << pad("GB/s", 8) << pad("exec ms", 11)
     << "  check\n";
  for (const auto& r : rows_) {
    if (r.benchmark != benchmark || r.size != size || is_sweep(r.variant)) continue;
    os << pad(r.impl, 12, false) << pad(r.variant, 18, false)
       << pad(std::isnan(r.cpu_share) ? "-" : fmt("%.0f%%", 100 * r.cpu_share), 6)
       << pad(r.overlap ? std::to_string(r.overlap) : "-", 4) << pad(fmt("%.3f", r.m.median_ms), 12)
       << pad(fmt("%.3f", r.m.iqr_ms), 10) << pad(fmt("%.3f", r.m.min_ms), 11) << pad(fmt("%.3f", r.m.max_ms), 11)
       << pad(fmt("%.2f", r.gbps()), 8) << pad(fmt("%.3f", r.m.exec_median_ms), 11) << "  " << r.m.check << "\n";
  }
}

void Results::print_sweep(std::ostream& os, const std::string& benchmark, std::size_t size,
                          const std::string& variant) const {
  std::set<double> shares;
  bool any_hw = false;
  for (const auto& r : rows_)
    if (r.benchmark == benchmark && r.size == size && r.variant == variant) {
      shares.insert(std::round(r.cpu_share * 1e6) / 1e6);
      any_hw = any_hw || r.impl == "handwritten";
    }
  if (shares.empty()) return;
  const Row* hb = best(benchmark, size, "handwritten", variant);
  const Row* sb = best(benchmark, size, "sinew", variant);
  auto ms = [&](const Row* r, const Row* b) {
    if (!r) return std::string("-");
    if (!r->m.ok()) return std::string("FAIL");
    return fmt("%.3f", r->m.median_ms) + (r == b ? "*" : " ");
  };
  auto iqr = [&](const Row* r) { return r && r->m.ok() ? fmt("%.3f", r->m.iqr_ms) : std::string("-"); };
  auto gbps = [&](const Row* r) { return r && r->m.ok() ? fmt("%.2f", r->gbps()) : std::string("-"); };
  os << (variant == kSplitPinned ? "split sweep, data pinned (" + variant + ")" : "split sweep, data pageable (" + variant + ")")
     << ": cpu = share of the work on the CPU device; * = fastest of its column; IQR = q75 - q25 of the runs\n";
  os << pad("cpu", 6);
  if (any_hw) os << pad("handwritten ms", 16) << pad("IQR", 8) << pad("GB/s", 8);
  os << pad("sinew ms", 12) << pad("IQR", 8) << pad("GB/s", 8);
  if (any_hw) os << pad("sinew/hw", 10);
  os << "\n";
  for (double s : shares) {
    const Row* h = find(benchmark, size, "handwritten", variant, s);
    const Row* w = find(benchmark, size, "sinew", variant, s);
    const bool both = h && w && h->m.ok() && w->m.ok();
    os << pad(fmt("%.0f%%", 100 * s), 6);
    if (any_hw) os << pad(ms(h, hb), 16) << pad(iqr(h), 8) << pad(gbps(h), 8);
    os << pad(ms(w, sb), 12) << pad(iqr(w), 8) << pad(gbps(w), 8);
    if (any_hw) os << pad(both ? fmt("%.2f", w->m.median_ms / h->m.median_ms) : "-", 10);
    os << "\n";
  }
  for (const auto& r : rows_)
    if (r.benchmark == benchmark && r.size == size && r.variant == variant && !r.m.ok())
      os << "  " << r.impl << " " << variant << " " << fmt("%.0f%%", 100 * r.cpu_share) << ": " << r.m.check << "\n";
}

void Results::print_ratios(std::ostream& os) const {
  if (!ratios_.empty()) {
    os << "\nratios sinew / handwritten (median wall times; > 1: Sinew slower):\n";
    os << pad("benchmark", 16, false) << pad("size", 7) << "  " << pad("comparison", 44, false) << pad("ratio", 8)
       << pad("sinew ms", 12) << pad("hw ms", 12) << "  rows (sinew | handwritten)\n";
    for (const auto& r : ratios_)
      os << pad(r.benchmark, 16, false) << pad(count_label(r.size), 7) << "  " << pad(r.what, 44, false)
         << pad(fmt("%.2f", r.value()), 8) << pad(fmt("%.3f", r.sinew_ms), 12) << pad(fmt("%.3f", r.handwritten_ms), 12)
         << "  " << r.sinew << " | " << r.handwritten << "\n";
  }
  if (!speedups_.empty()) {
    os << "\nsplit speedups, each side on its own (the faster device alone / the best split with both devices at\n"
          "work, 0% < cpu < 100%; > 1: the split is faster):\n";
    os << pad("benchmark", 16, false) << pad("size", 7) << "  " << pad("comparison", 44, false) << pad("impl", 12, false)
       << pad("speedup", 8) << pad("split ms", 12) << pad("single ms", 12) << "  rows (split | single device)\n";
    for (const auto& r : speedups_)
      os << pad(r.benchmark, 16, false) << pad(count_label(r.size), 7) << "  " << pad(r.what, 44, false)
         << pad(r.impl, 12, false) << pad(fmt("%.2f", r.value()), 8) << pad(fmt("%.3f", r.split_ms), 12)
         << pad(fmt("%.3f", r.single_ms), 12) << "  " << r.split << " | " << r.single << "\n";
  }
}

bool Results::all_ok() const {
  return std::all_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.m.ok(); });
}

void print_header(std::ostream& os, const Flags& f, const std::string& hw_cpu, const std::string& hw_gpu,
                  bool hw_stand_in, const sinew::Runtime* rt, const SinewDevices* sd) {
  const std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  os << f.program << " — " << when << "; median of " << f.repeat << " run(s) after " << std::max(1u, f.warmup)
     << " warm-up run(s)" << (f.quick ? " (--quick)" : "") << "; pinned split sweeps "
     << (f.pinned_splits ? "on" : "off (--no-pinned-splits)") << "\n";
  if (f.handwritten) {
    os << "handwritten cpu: " << hw_cpu << "\n";
    os << "handwritten gpu: " << hw_gpu << "\n";
    os << "handwritten gpu pipeline: " << f.queues << " queues, " << (f.chunk_bytes >> 20) << " MB chunks per vector\n";
    if (hw_stand_in) os << "NOTE: no GPU found; the 'gpu' rows ran on a CPU device standing in for one.\n";
  }
  if (rt && sd) {
    os << "sinew " << SINEW_VERSION_STRING << " devices: " << sd->describe(*rt) << "\n";
    os << "sinew runtime devices:";
    for (const auto& d : rt->devices()) os << " [" << d.index << "] " << d.id() << " " << d.name;
    os << "\n";
  }
}

// ----- text report ---------------------------------------------------------------------------

struct TeeStream::Buf : std::streambuf {
  std::string text;
  int overflow(int ch) override {
    if (ch == traits_type::eof()) return ch;
    text += static_cast<char>(ch);
    std::cout.put(static_cast<char>(ch));
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    text.append(s, static_cast<std::size_t>(n));
    std::cout.write(s, n);
    return n;
  }
  int sync() override {
    std::cout.flush();
    return 0;
  }
};

TeeStream::TeeStream() : std::ostream(nullptr), buf_(std::make_unique<Buf>()) { rdbuf(buf_.get()); }
TeeStream::~TeeStream() { rdbuf(nullptr); }
std::string TeeStream::text() const { return buf_->text; }

void write_text_report(const Flags& f, const std::string& title, const sinew::Runtime* rt,
                       const std::string& handwritten_devices, const std::string& text) {
  Common c;
  c.program = f.program;
  c.command = f.command;
  c.quick = f.quick;
  std::ostringstream md;
  md << "## " << f.program << ": " << title << "\n\n" << md_run_header(c, rt);
  if (!handwritten_devices.empty()) md << handwritten_devices << "\n";
  md << "Medians of " << f.repeat << " timed run(s) after " << std::max(1u, f.warmup)
     << " warm-up run(s); ratios are Sinew / hand-written (above 1: Sinew slower). Rows and ratios: `" << f.program
     << ".csv`. Columns and variants: docs/BENCHMARKS.md.\n\n```\n"
     << text << (text.empty() || text.back() == '\n' ? "" : "\n") << "```\n";
  write_file(std::filesystem::path(f.out) / (f.program + ".md"), md.str());
  std::cerr << f.program << ": wrote " << (std::filesystem::path(f.out) / (f.program + ".md")).string() << "\n";
}

}  // namespace sinew_bench
