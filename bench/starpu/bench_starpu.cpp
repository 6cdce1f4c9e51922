// bench/starpu/bench_starpu.cpp — Sinew against StarPU (dmda scheduler, history-based performance
// models) on saxpy and the filter pipeline, host-resident data, the same CPU and GPU.
//
// StarPU side (starpu_side.cpp): the data registered from host memory, split into --blocks
// blocks with StarPU's data filters, one task per block and stage; native CPU workers run C++
// loops, OpenCL workers run the project's kernels. Its performance models are calibrated by
// repeated executions (counted) before the timed runs. Sinew side: the registry's samples planned
// by the knowledge base in a fresh file (the first run trains; its executions are counted). Both
// compute on the same input arrays and are checked by the samples' C++ references.
//
//   bench_starpu [--sizes 10M,50M,100M] [--sides 4096] [--blocks N] [--out DIR] [--quick]
#include "bench_common.hpp"
#include "common/descriptors.hpp"
#include "starpu_side.hpp"

#include <sinew/sinew.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#ifndef SINEW_SOURCE_DIR
#error "SINEW_SOURCE_DIR must name the Sinew source tree (bench/starpu/bench_starpu.cmake defines it)"
#endif

namespace fs = std::filesystem;
namespace sp = sinew_bench::starpu;
using sinew_bench::count_label;
using sinew_bench::kNaN;
using sinew_bench::seconds_since_start;
using sinew_bench::split_list;

namespace {

const char* const kSummary =
    "Sinew against StarPU (dmda scheduler, history-based performance models) on saxpy (y = a*x + y,\n"
    "float) and the filter pipeline (filters.cl: gaussian_noise -> solarise -> mirror on an RGBA\n"
    "image, by lines), data in host memory. StarPU runs its native CPU workers (C++ loops) and\n"
    "OpenCL GPU workers (the project's kernels); its models are calibrated first (counted). Sinew\n"
    "is planned by its knowledge base in a fresh file (the first run trains; counted). StarPU's\n"
    "files go to DIR/bench_starpu.starpu/<session>/ (STARPU_HOME), Sinew's knowledge base to\n"
    "DIR/bench_starpu.kb.sqlite.\n";

// ----- flags ---------------------------------------------------------------------------------

struct Flags {
  sinew_bench::Common common;
  unsigned max_calibration = 40, blocks = 0;
  std::vector<std::size_t> sizes, sides;
  std::vector<std::string> benchmarks{"saxpy", "filter_pipeline"};
  std::vector<std::string> configs{"dmda", "dmda-cpu", "dmda-gpu", "dmda-opencl-all"};
  std::vector<sp::Memory> memory{sp::Memory::starpu_malloc, sp::Memory::cl_pinned};
  bool stand_in = true, keep_models = false, sinew = true, starpu = true, zero_copy_stand_in = false;
};

Flags parse_flags(int argc, char** argv) {
  Flags f;
  sinew_bench::Cli cli(kSummary);
  cli.section("Problems");
  cli.option("--sizes", "LIST", "saxpy elements (default 10M,50M,100M; --quick 1M; K, M, G = 1000s)",
             [&](const std::string& v) { f.sizes = cli.to_counts("--sizes", v); });
  cli.option("--sides", "LIST", "filter pipeline image sides, even (default 4096, as bench_pipeline;\n--quick 512)",
             [&](const std::string& v) {
               f.sides = cli.to_counts("--sides", v);
               for (auto x : f.sides)
                 if (x < 2 || x % 2) cli.fail("--sides", "an image side must be even and at least 2, not " + std::to_string(x));
             });
  cli.option("--benchmarks", "LIST", "saxpy,filter_pipeline (default both)", [&](const std::string& v) {
    f.benchmarks = split_list(v);
    for (const auto& b : f.benchmarks)
      if (b != "saxpy" && b != "filter_pipeline") cli.fail("--benchmarks", "unknown benchmark '" + b + "' (use saxpy, filter_pipeline)");
  });
  cli.section("StarPU");
  cli.option("--blocks", "N", "blocks (tasks per stage); default 4 x the session's workers",
             [&](const std::string& v) { f.blocks = std::max(1u, cli.to_unsigned("--blocks", v)); });
  cli.option("--configs", "LIST",
             "StarPU sessions, any of dmda (native CPU workers + OpenCL GPU workers),\n"
             "dmda-cpu (CPU workers only), dmda-gpu (OpenCL GPU workers only),\n"
             "dmda-opencl-all (OpenCL workers on every device, the CPU through PoCL,\n"
             "no native CPU workers; needs a GPU). Default: all",
             [&](const std::string& v) {
               f.configs = split_list(v);
               for (const auto& c : f.configs)
                 if (c != "dmda" && c != "dmda-cpu" && c != "dmda-gpu" && c != "dmda-opencl-all")
                   cli.fail("--configs", "unknown session '" + c + "' (use dmda, dmda-cpu, dmda-gpu, dmda-opencl-all)");
             });
  cli.option("--memory", "LIST",
             "StarPU's host memory: starpu_malloc, cl-pinned (default both; cl-pinned\n"
             "only in sessions with an OpenCL worker)",
             [&](const std::string& v) {
               f.memory.clear();
               for (const auto& m : split_list(v)) {
                 if (m == "starpu_malloc") f.memory.push_back(sp::Memory::starpu_malloc);
                 else if (m == "cl-pinned") f.memory.push_back(sp::Memory::cl_pinned);
                 else cli.fail("--memory", "unknown memory '" + m + "' (use starpu_malloc, cl-pinned)");
               }
             });
  cli.flag("--no-stand-in",
           "without an OpenCL GPU, do not let an OpenCL CPU device (PoCL, through\n"
           "STARPU_OPENCL_ON_CPUS=1) stand in for it",
           [&] { f.stand_in = false; });
  cli.option("--max-calibration", "N", "calibration executions at most per problem (default 40)",
             [&](const std::string& v) { f.max_calibration = std::max(1u, cli.to_unsigned("--max-calibration", v)); });
  cli.flag("--keep-models",
           "keep StarPU's performance models and Sinew's knowledge base from an\n"
           "earlier run in the same --out (default: both start empty)",
           [&] { f.keep_models = true; });
  cli.flag("--no-starpu", "Sinew only", [&] { f.starpu = false; });
  cli.section("Sinew");
  cli.flag("--no-sinew", "StarPU only", [&] { f.sinew = false; });
  cli.flag("--zero-copy-stand-in",
           "without a GPU, keep Sinew's second CPU device a CPU (default: driven as\n"
           "a discrete device, as in bench_saxpy)",
           [&] { f.zero_copy_stand_in = true; });
  sinew_bench::add_common(cli, f.common, 7, /*resumable=*/false);
  cli.parse(argc, argv);
  sinew_bench::finish_common(cli, f.common, 3);
  const bool quick = f.common.quick;
  if (f.sizes.empty()) f.sizes = quick ? std::vector<std::size_t>{1000000} : std::vector<std::size_t>{10000000, 50000000, 100000000};
  if (f.sides.empty()) f.sides = {quick ? std::size_t{512} : std::size_t{4096}};
  if (quick) f.max_calibration = std::min(f.max_calibration, 20u);
  if (!f.sinew && !f.starpu) cli.fail("--no-sinew", "with --no-starpu leaves nothing to run");
  return f;
}

// ----- results -------------------------------------------------------------------------------

struct Row {
  std::string benchmark;
  std::size_t size = 0;
  std::string impl;            // "starpu" | "sinew"
  std::string variant;         // StarPU session, or Sinew's plan: "kb", "cpu", "gpu"
  std::string memory;          // starpu_malloc | cl-pinned | pageable | pinned
  std::string workers;         // StarPU: "2 cpu + 1 opencl-gpu"; Sinew: the devices with a share
  unsigned blocks = 0;         // StarPU blocks (0: n/a)
  double setup_runs = kNaN;    // StarPU calibration executions, Sinew training executions
  double setup_s = kNaN;       // their wall time, s
  double bytes = 0;
  sinew_bench::Measurement m;
  std::string detail;          // where the work went / the plan used
  bool ok() const { return m.ok(); }
  double gbps() const { return bytes > 0 && m.median_ms > 0 ? bytes / m.median_ms / 1e6 : kNaN; }
  std::string label() const { return impl + " " + variant + " " + memory; }
};

struct Ratio {
  std::string benchmark;
  std::size_t size = 0;
  std::string what;
  const Row* sinew = nullptr;
  const Row* starpu = nullptr;
  double value() const { return sinew->m.median_ms / starpu->m.median_ms; }
};

std::string fmt(double v, int precision = 3) {
  if (std::isnan(v)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

const std::vector<std::string> kColumns{"kind", "benchmark", "size", "impl", "variant", "memory", "workers",
                                        "blocks", "setup_runs", "setup_s", "median_ms", "iqr_ms", "min_ms",
                                        "max_ms", "runs", "gbps", "check", "ratio", "detail"};

sinew_bench::CsvLog::Row csv_row(const Row& r) {
  using sinew_bench::num;
  return {{"kind", "time"},
          {"benchmark", r.benchmark},
          {"size", std::to_string(r.size)},
          {"impl", r.impl},
          {"variant", r.variant},
          {"memory", r.memory},
          {"workers", r.workers},
          {"blocks", r.blocks ? std::to_string(r.blocks) : ""},
          {"setup_runs", num(r.setup_runs)},
          {"setup_s", num(r.setup_s)},
          {"median_ms", num(r.m.median_ms)},
          {"iqr_ms", num(r.m.iqr_ms)},
          {"min_ms", num(r.m.min_ms)},
          {"max_ms", num(r.m.max_ms)},
          {"runs", std::to_string(r.m.runs)},
          {"gbps", num(r.gbps())},
          {"check", r.m.check},
          {"detail", r.detail}};
}

sinew_bench::CsvLog::Row csv_row(const Ratio& q) {
  using sinew_bench::num;
  return {{"kind", "ratio"},
          {"benchmark", q.benchmark},
          {"size", std::to_string(q.size)},
          {"impl", "sinew/starpu"},
          {"variant", q.what},
          {"median_ms", ""},
          {"check", "OK"},
          {"ratio", num(q.value())},
          {"detail", q.sinew->label() + " " + num(q.sinew->m.median_ms) + " ms | " + q.starpu->label() + " " +
                         num(q.starpu->m.median_ms) + " ms"}};
}

void progress(const Row& r) {
  std::cerr << "  [" << std::fixed << std::setprecision(1) << std::setw(6) << seconds_since_start() << " s] "
            << r.benchmark << " " << count_label(r.size) << " " << r.label() << ": " << fmt(r.m.median_ms) << " ms";
  if (!std::isnan(r.setup_runs))
    std::cerr << " (" << static_cast<long>(r.setup_runs) << (r.impl == "starpu" ? " calibration" : " training") << " runs)";
  std::cerr << " " << r.m.check << "\n";
}

// ----- the problems, on the samples' own data ------------------------------------------------

// One prepared problem: the registry's sample (its input arrays, its reference check); StarPU
// runs it on copies of those arrays in StarPU-side memory.
struct Problem {
  std::string benchmark;
  std::size_t size = 0;
  std::unique_ptr<sinew::samples::Sample> sample;
  sinew::samples::Saxpy* saxpy = nullptr;
  sinew::samples::FilterPipeline* filters = nullptr;
  double bytes() const { return static_cast<double>(sample->bytes()); }
  std::string label() const {
    return benchmark + " " + count_label(size) + (saxpy ? " elements" : " x " + count_label(size) + " pixels");
  }
};

std::unique_ptr<Problem> prepare(const std::string& benchmark, std::size_t size) {
  auto p = std::make_unique<Problem>();
  p->benchmark = benchmark;
  p->size = size;
  if (benchmark == "saxpy") {
    auto s = std::make_unique<sinew::samples::Saxpy>();
    p->saxpy = s.get();
    p->sample = std::move(s);
  } else {
    auto s = std::make_unique<sinew::samples::FilterPipeline>();
    p->filters = s.get();
    p->sample = std::move(s);
  }
  p->sample->prepare(size);
  return p;
}

// The sample's bound arrays after bindings() restored its inputs: saxpy's x (read-only) and y, or
// the filter pipeline's image.
struct Arrays {
  const sinew::Binding* in = nullptr;   // saxpy x
  const sinew::Binding* out = nullptr;  // saxpy y, the image
};
Arrays arrays_of(const std::vector<sinew::Binding>& b) {
  Arrays a;
  for (const auto& x : b) {
    if (!x.vector) continue;
    (x.read_only ? a.in : a.out) = &x;
  }
  if (!a.out) throw std::runtime_error("the sample bound no writable array");
  return a;
}

// ----- StarPU side ---------------------------------------------------------------------------

struct SessionInfo {
  std::string name, workers, scheduler, error;
  std::vector<std::string> worker_lines;
  double init_s = kNaN;
  bool bus_calibrated = false, stand_in = false;
};

// Calibrates StarPU's models for one problem (counted), then times it: each execution starts and
// ends with the data in host memory; restoring the input is not timed.
Row time_starpu(sp::Session& s, Problem& p, sp::Memory kind, const Flags& f, bool stand_in) {
  Row r;
  r.benchmark = p.benchmark;
  r.size = p.size;
  r.impl = "starpu";
  r.variant = s.config().name;
  r.memory = sp::memory_name(kind);
  r.workers = s.worker_summary() + (stand_in ? " [stand-in]" : "");
  r.bytes = p.bytes();
  r.blocks = f.blocks ? f.blocks : 4 * s.workers();
  try {
    std::size_t out_bytes = 0;
    sp::HostBuffer x, y;
    {  // StarPU-side copies of the sample's arrays; x is read-only, copied once
      auto b = p.sample->bindings();
      const Arrays a = arrays_of(b);
      out_bytes = a.out->elements * a.out->type.size;
      y = s.allocate(kind, out_bytes);
      if (a.in) {
        x = s.allocate(kind, a.in->elements * a.in->type.size);
        std::memcpy(x.data(), a.in->data, x.bytes());
      }
    }
    auto reset = [&] {  // untimed: the input restored in the sample, copied into StarPU's memory
      auto b = p.sample->bindings();
      std::memcpy(y.data(), arrays_of(b).out->data, out_bytes);
    };
    using Pass = sp::Session::Pass;
    auto execute = [&](Pass pass) {
      if (p.saxpy)
        return s.saxpy(p.saxpy->params.a, static_cast<const float*>(x.data()), static_cast<float*>(y.data()), p.size,
                       r.blocks, pass);
      const std::size_t width = p.filters->params.side, lines = out_bytes / 4 / width;
      const sp::FilterParams fp{p.filters->params.noise_factor, p.filters->params.threshold, p.filters->params.seed};
      return s.filters(static_cast<std::uint8_t*>(y.data()), width, lines, fp, r.blocks, pass);
    };
    auto verify = [&](const std::string& when) {  // untimed: the result judged by the sample's reference
      auto b = p.sample->bindings();
      std::memcpy(arrays_of(b).out->data, y.data(), out_bytes);
      const auto c = p.sample->check();
      if (!c.ok) throw std::runtime_error("MISMATCH " + when + ": " + c.message);
    };

    // Calibration: dmda forces tasks onto the worker archs whose model has too few measurements
    // for a block size; whole executions are repeated until every model predicts every block
    // (none when the models already do: an earlier problem of the same block size, or
    // --keep-models).
    const auto c0 = std::chrono::steady_clock::now();
    unsigned calibration = 0;
    bool calibrated = execute(Pass::check_only);
    for (; calibration < f.max_calibration && !calibrated; ++calibration) {
      reset();
      calibrated = execute(Pass::execute_and_check);
      if (calibration == 0) verify("after the first execution");
    }
    r.setup_runs = calibration;
    r.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    if (!calibrated) r.detail = "NOT calibrated after " + std::to_string(calibration) + " executions; ";
    double warm_ms = 0;
    for (unsigned i = 0; i < f.common.warmup; ++i) {
      reset();
      const auto t0 = std::chrono::steady_clock::now();
      execute(Pass::execute);
      warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    const unsigned runs = sinew_bench::runs_within(f.common.repeat, warm_ms, f.common.point_seconds * 1000);
    std::vector<double> ms;
    for (unsigned i = 0; i < runs; ++i) {
      reset();
      const auto t0 = std::chrono::steady_clock::now();
      execute(Pass::execute);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    verify("after the timed runs");
    r.m = sinew_bench::summarize(ms);
    r.detail += s.last_placement() + " (last run)";
  } catch (const std::exception& e) {
    r.m.check = std::string(e.what()).rfind("MISMATCH", 0) == 0 ? e.what() : std::string("ERROR: ") + e.what();
  }
  return r;
}

std::string kernels_dir() {
  const char* env = std::getenv("SINEW_SOURCE_DIR");
  return std::string(env && *env ? env : SINEW_SOURCE_DIR) + "/kernels";
}

// ----- Sinew side ----------------------------------------------------------------------------

std::string plan_of(const sinew::Runtime& rt, const sinew::Report& rep) {
  std::string s = rep.provenance + " plan";
  const auto& devs = rt.devices();
  for (std::size_t i = 0; i < rep.config.shares.size() && i < devs.size(); ++i)
    if (rep.config.shares[i] > 0) s += " " + devs[i].id() + "=" + fmt(rep.config.shares[i], 2);
  s += ", fission " + rep.config.fission + ", overlap " + std::to_string(rep.config.overlap);
  return s;
}

std::string devices_with_share(const sinew::Runtime& rt, const sinew::Report& rep) {
  std::string s;
  const auto& devs = rt.devices();
  for (std::size_t i = 0; i < rep.config.shares.size() && i < devs.size(); ++i)
    if (rep.config.shares[i] > 0) s += (s.empty() ? "" : " + ") + devs[i].id();
  return s.empty() ? "?" : s;
}

Row sinew_row(const Problem& p, const std::string& variant, const std::string& memory) {
  Row r;
  r.benchmark = p.benchmark;
  r.size = p.size;
  r.impl = "sinew";
  r.variant = variant;
  r.memory = memory;
  r.bytes = p.bytes();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse_flags(argc, argv);
  const sinew_bench::Common& com = f.common;
  try {
    const fs::path starpu_root = fs::absolute(com.out / "bench_starpu.starpu");
    const std::string kb_path = fs::absolute(com.out / "bench_starpu.kb.sqlite").string();
    if (!f.keep_models) {
      // Both sides start knowing nothing about these problems. StarPU's bus model (a property of
      // the machine, measured at the first starpu_init of a STARPU_HOME) is kept.
      std::error_code ec;
      for (const char* c : {"dmda", "dmda-cpu", "dmda-gpu", "dmda-opencl-all"})
        fs::remove_all(starpu_root / c / ".starpu" / "sampling" / "codelets", ec);
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(kb_path + suffix, ec);
    }
    sinew_bench::CsvLog csv(com.csv(), kColumns, /*resume=*/false);
    sinew_bench::Deadline deadline(com.max_seconds);
    bool stopped = false;
    std::vector<std::unique_ptr<Row>> rows;
    auto add = [&](Row r) {
      progress(r);
      csv.append(csv_row(r));
      rows.push_back(std::make_unique<Row>(std::move(r)));
    };

    // The problems, prepared once each: their arrays are the data of both sides.
    std::vector<std::unique_ptr<Problem>> problems;
    for (const auto& b : f.benchmarks)
      for (std::size_t size : b == "saxpy" ? f.sizes : f.sides) problems.push_back(prepare(b, size));

    // ----- StarPU ----------------------------------------------------------------------------
    // One session (starpu_init .. starpu_shutdown) per worker set, each with its own STARPU_HOME:
    // StarPU recalibrates its bus model whenever the set of devices changes, and the models of
    // one session never leak into another's calibration count.
    const std::vector<sp::OpenclDevice> cl_devices = sp::opencl_devices();
    std::vector<int> cl_gpus, cl_cpus;
    std::vector<std::string> gpus;
    for (const auto& d : cl_devices) {
      (d.cpu ? cl_cpus : cl_gpus).push_back(d.devid);
      if (!d.cpu) gpus.push_back(d.name);
    }
    // Without a GPU, the first OpenCL CPU device (PoCL) stands in for one in the GPU's role.
    const bool stand_in = cl_gpus.empty() && !cl_cpus.empty() && f.stand_in;
    const std::vector<int> gpu_role = stand_in ? std::vector<int>{cl_cpus.front()} : cl_gpus;
    std::vector<int> all_opencl = cl_gpus;
    all_opencl.insert(all_opencl.end(), cl_cpus.begin(), cl_cpus.end());
    std::vector<SessionInfo> sessions;
    if (f.starpu) {
      std::cerr << com.program << ": StarPU " << sp::version() << "; OpenCL GPUs: "
                << (gpus.empty() ? std::string("none") : gpus.front() + (gpus.size() > 1 ? " ..." : "")) << "\n";
      for (const auto& name : f.configs) {
        if ((stopped = stopped || deadline.check(com.program))) break;
        SessionInfo info;
        info.name = name;
        sp::SessionConfig c;
        c.name = name;
        c.home = (starpu_root / name).string();
        c.kernels_dir = kernels_dir();
        c.verbose = com.verbose;
        if (name == "dmda") {
          c.opencl = gpu_role;
          info.stand_in = stand_in;
        } else if (name == "dmda-cpu") {
        } else if (name == "dmda-gpu") {
          c.ncpus = 0;
          c.opencl = gpu_role;
          info.stand_in = stand_in;
          if (gpu_role.empty()) info.error = "skipped: no OpenCL GPU" + std::string(f.stand_in ? "" : ", and --no-stand-in");
        } else {  // dmda-opencl-all: Sinew's arrangement, OpenCL on every device
          c.ncpus = 0;
          c.opencl = all_opencl;
          if (cl_gpus.empty()) info.error = "skipped: no OpenCL GPU (dmda-gpu's stand-in runs the same workers)";
        }
        if (!info.error.empty()) {
          std::cerr << com.program << ": " << name << " " << info.error << "\n";
          sessions.push_back(info);
          continue;
        }
        std::unique_ptr<sp::Session> s;
        try {
          s = std::make_unique<sp::Session>(c);
        } catch (const std::exception& e) {
          info.error = e.what();
          std::cerr << com.program << ": " << name << ": " << e.what() << "\n";
          sessions.push_back(info);
          continue;
        }
        // The OpenCL workers must be the devices asked for (StarPU numbers devices its own way;
        // opencl_devices() mirrors it).
        std::size_t want_cpu = 0;
        for (int id : c.opencl)
          for (const auto& d : cl_devices)
            if (d.devid == id && d.cpu) ++want_cpu;
        if (s->opencl_workers() != c.opencl.size() || s->opencl_cpu_workers() != want_cpu)
          info.error = "warning: asked for " + std::to_string(c.opencl.size()) + " OpenCL workers (" +
                       std::to_string(want_cpu) + " on CPU devices), StarPU started " + s->worker_summary();
        info.workers = s->worker_summary();
        info.worker_lines = s->worker_lines();
        info.scheduler = s->scheduler();
        info.init_s = s->init_seconds();
        info.bus_calibrated = s->bus_calibrated();
        sessions.push_back(info);
        std::cerr << com.program << ": session " << name << ": " << info.workers << ", scheduler " << info.scheduler
                  << ", starpu_init " << fmt(info.init_s, 2) << " s" << (info.bus_calibrated ? " (bus calibrated)" : "")
                  << "\n";
        for (auto& p : problems)
          for (sp::Memory m : f.memory) {
            if (m == sp::Memory::cl_pinned && s->opencl_workers() == 0) continue;
            if ((stopped = stopped || deadline.check(com.program))) break;
            add(time_starpu(*s, *p, m, f, info.stand_in));
          }
      }
    }

    // ----- Sinew -----------------------------------------------------------------------------
    std::unique_ptr<sinew::Runtime> rt;
    std::string sinew_devices;
    if (f.sinew && !stopped) {
      sinew::RuntimeOptions o;
      o.kb_path = kb_path;
      rt = sinew_bench::make_runtime(f.zero_copy_stand_in, o);
      const auto sd = sinew_bench::pick_devices(*rt);
      sinew_devices = sd.describe(*rt);
      const double budget_ms = com.point_seconds * 1000;
      for (auto& p : problems) {
        if ((stopped = deadline.check(com.program))) break;
        // Planned by the knowledge base: the first run of a tree and input it does not know trains.
        Row kb = sinew_row(*p, "kb", "pageable");
        sinew::Report first, last;
        try {
          const auto t0 = std::chrono::steady_clock::now();
          first = rt->run(p->sample->tree(), p->sample->bindings(), {}).get();
          const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (auto c = p->sample->check(); !c.ok) throw std::runtime_error("MISMATCH after training: " + c.message);
          kb.m = sinew_bench::time_sinew(*rt, *p->sample, {}, com.warmup, com.repeat, &last, nullptr, budget_ms);
          kb.setup_runs = static_cast<double>(first.training_executions);
          kb.setup_s = setup_s;
          kb.workers = devices_with_share(*rt, last);
          kb.detail = "first run: " + plan_of(*rt, first) + "; last timed run: " + plan_of(*rt, last);
          if (com.verbose) std::cerr << last.str() << "\n";
        } catch (const std::exception& e) {
          kb.m.check = std::string("ERROR: ") + e.what();
        }
        add(kb);
        {  // the same plans, the user's data in pinned memory
          sinew_bench::PinnedCopies copies(*rt);
          Row r = sinew_row(*p, "kb", "pinned");
          r.m = sinew_bench::time_sinew(*rt, *p->sample, {}, com.warmup, com.repeat, &last, &copies, budget_ms);
          r.workers = devices_with_share(*rt, last);
          r.detail = "last timed run: " + plan_of(*rt, last);
          add(r);
        }
        // Each device alone, for context (as StarPU's dmda-cpu and dmda-gpu).
        auto alone = [&](const std::string& variant, std::size_t device) {
          Row r = sinew_row(*p, variant, "pageable");
          r.m = sinew_bench::time_sinew(*rt, *p->sample, sinew_bench::on_device(device), com.warmup, com.repeat, &last,
                                        nullptr, budget_ms);
          r.workers = rt->devices().at(device).id() + (variant == "gpu" && sd.gpu_stand_in ? " [stand-in]" : "");
          add(r);
        };
        if (sd.has_cpu) alone("cpu", sd.cpu);
        if (sd.has_gpu) alone("gpu", sd.gpu);
      }
    }

    // ----- ratios ----------------------------------------------------------------------------
    std::vector<Ratio> ratios;
    auto find = [&](const Problem& p, const std::string& impl, const std::string& variant,
                    const std::string& memory) -> const Row* {
      for (const auto& r : rows)
        if (r->benchmark == p.benchmark && r->size == p.size && r->impl == impl && r->variant == variant &&
            r->memory == memory && r->ok())
          return r.get();
      return nullptr;
    };
    auto best = [&](const Problem& p, const std::string& impl) -> const Row* {
      const Row* b = nullptr;
      for (const auto& r : rows)
        if (r->benchmark == p.benchmark && r->size == p.size && r->impl == impl && r->ok() &&
            (!b || r->m.median_ms < b->m.median_ms))
          b = r.get();
      return b;
    };
    for (const auto& p : problems) {
      auto ratio = [&](const std::string& what, const Row* sinew, const Row* starpu) {
        if (!sinew || !starpu) return;
        ratios.push_back({p->benchmark, p->size, what, sinew, starpu});
        csv.append(csv_row(ratios.back()));
      };
      ratio("defaults, data not pinned (kb | dmda starpu_malloc)", find(*p, "sinew", "kb", "pageable"),
            find(*p, "starpu", "dmda", "starpu_malloc"));
      ratio("data pinned on both sides (kb | dmda cl-pinned)", find(*p, "sinew", "kb", "pinned"),
            find(*p, "starpu", "dmda", "cl-pinned"));
      ratio("OpenCL on every device, not pinned (kb | dmda-opencl-all)", find(*p, "sinew", "kb", "pageable"),
            find(*p, "starpu", "dmda-opencl-all", "starpu_malloc"));
      ratio("OpenCL on every device, pinned (kb | dmda-opencl-all)", find(*p, "sinew", "kb", "pinned"),
            find(*p, "starpu", "dmda-opencl-all", "cl-pinned"));
      ratio("best of each side (any row)", best(*p, "sinew"), best(*p, "starpu"));
    }

    // ----- plot: every row's median relative to StarPU's default ---------------------------
    std::string plot_note;
    {
      std::vector<std::string> categories, series;
      for (const auto& r : rows)
        if (std::find(series.begin(), series.end(), r->label()) == series.end()) series.push_back(r->label());
      std::vector<std::vector<double>> values(series.size());
      for (const auto& p : problems) {
        const Row* base = find(*p, "starpu", "dmda", "starpu_malloc");
        if (!base) continue;
        categories.push_back(p->benchmark + " " + count_label(p->size));
        for (std::size_t j = 0; j < series.size(); ++j) {
          double v = kNaN;
          for (const auto& r : rows)
            if (r->benchmark == p->benchmark && r->size == p->size && r->label() == series[j] && r->ok())
              v = r->m.median_ms / base->m.median_ms;
          values[j].push_back(v);
        }
      }
      plot_note = categories.empty()
                      ? "no plot: no StarPU dmda starpu_malloc row to relate the others to"
                      : sinew_bench::plot_bars(com.png(""), "Median time relative to StarPU dmda (starpu_malloc)",
                                               "time / StarPU dmda", categories, series, values, 1.0);
    }

    // ----- Markdown --------------------------------------------------------------------------
    std::ostringstream md;
    md << "## bench_starpu: Sinew against StarPU (dmda)\n\n";
    md << sinew_bench::md_run_header(com, rt.get());
    md << "Host: " << std::thread::hardware_concurrency() << " hardware threads; OpenCL GPUs: ";
    if (gpus.empty()) md << "none";
    for (std::size_t i = 0; i < gpus.size(); ++i) md << (i ? ", " : "") << gpus[i];
    md << ".\n\n";
    if (stopped) md << "**Stopped early by --max-seconds: the tables are incomplete.**\n\n";
    if (f.starpu) {
      md << "StarPU " << sp::version() << " (" << sp::build_limits() << "), scheduler `dmda`, history-based "
         << "performance models (one per codelet: saxpy; gaussian_noise, solarise, mirror), STARPU_HOME = `"
         << starpu_root.string() << "/<session>` (bus and model files; nothing is written under $HOME). "
         << (f.keep_models ? "Models kept from earlier runs (--keep-models)." : "Models started empty.") << "\n\n";
      sinew_bench::MdTable t({"session", "workers", "scheduler", "starpu_init s", "note"});
      for (const auto& s : sessions) {
        std::string note = s.error;
        if (!s.workers.empty()) {  // the session ran
          note += (note.empty() ? "" : "; ") + std::string(s.bus_calibrated ? "bus calibrated at init" : "bus model reused");
          if (s.stand_in) note += "; an OpenCL CPU device (PoCL, STARPU_OPENCL_ON_CPUS=1) stands in for a GPU";
          note += "; workers: ";
          for (std::size_t i = 0; i < s.worker_lines.size(); ++i) note += (i ? ", " : "") + s.worker_lines[i];
        }
        t.add({s.name, s.workers, s.scheduler, fmt(s.init_s, 2), note});
      }
      md << t.str() << "\n";
      if (sp::max_cpu_workers() < std::thread::hardware_concurrency())
        md << "StarPU was compiled with STARPU_MAXCPUS=" << sp::max_cpu_workers() << " (Debian builds with "
           << "--enable-maxcpus=auto, the build machine's core count): on this " << std::thread::hardware_concurrency()
           << "-thread host its native CPU workers cannot use every core; `dmda-opencl-all` reaches them "
              "through PoCL instead.\n\n";
    }
    if (f.sinew)
      md << "Sinew: " << sinew_devices << "; knowledge base `" << kb_path << "`"
         << (f.keep_models ? " (kept)" : " (started empty)") << ".\n\n";
    md << "Timed: up to " << com.repeat << " runs (fewer when they would exceed --point-seconds " << com.point_seconds
       << ") after the calibration or training runs and " << com.warmup
       << " warm-up run(s); median, interquartile range (IQR), min and max of the wall time of one whole "
          "execution, the data in host memory before and after (StarPU: register, partition, submit, wait, "
          "unpartition, unregister; Sinew: `rt.run(...).get()`). Restoring the input is not timed. `setup runs`: "
          "StarPU's calibration executions (until every model predicts every block size on every worker arch) or "
          "Sinew's training executions; `setup s`: their wall time (Sinew: the whole first run, training "
          "included). Every result is checked against the sample's C++ reference.\n\n";
    for (const auto& p : problems) {
      md << "### " << p->label() << "\n\n";
      sinew_bench::MdTable t({"impl", "variant", "memory", "workers", "blocks", "setup runs", "setup s", "median ms",
                              "IQR ms", "min ms", "max ms", "GB/s", "check", "detail"});
      for (const auto& r : rows)
        if (r->benchmark == p->benchmark && r->size == p->size)
          t.add({r->impl, r->variant, r->memory, r->workers, r->blocks ? std::to_string(r->blocks) : "-",
                 fmt(r->setup_runs, 0), fmt(r->setup_s, 2), fmt(r->m.median_ms), fmt(r->m.iqr_ms), fmt(r->m.min_ms),
                 fmt(r->m.max_ms), fmt(r->gbps(), 2), r->m.check, r->detail});
      md << (t.empty() ? "Not measured.\n" : t.str()) << "\n";
    }
    md << "### Ratios, Sinew / StarPU (median wall time; above 1 Sinew is slower)\n\n";
    {
      sinew_bench::MdTable t({"benchmark", "size", "comparison", "ratio", "sinew ms", "starpu ms", "rows (sinew | starpu)"});
      for (const auto& q : ratios)
        t.add({q.benchmark, count_label(q.size), q.what, fmt(q.value(), 2), fmt(q.sinew->m.median_ms),
               fmt(q.starpu->m.median_ms), q.sinew->label() + " | " + q.starpu->label()});
      md << (t.empty() ? "No pair of rows to compare.\n" : t.str()) << "\n";
    }
    md << (plot_note.empty() ? "Plot: `" + com.png("").filename().string() + "` (every row's median over StarPU dmda "
                               "starpu_malloc's, per problem).\n\n"
                             : "Plot: " + plot_note + ".\n\n");
    md << "Memory: `starpu_malloc` is how a StarPU program allocates its data; StarPU pins it only when it has "
          "CUDA workers, and this build has no CUDA driver, so here it is ordinary pageable memory. `cl-pinned` is "
          "`CL_MEM_ALLOC_HOST_PTR` memory of the GPU worker's OpenCL context, mapped (the page-locked memory "
          "OpenCL drivers DMA from), registered with StarPU as main-memory data. Sinew: `pageable` = the "
          "sample's `std::vector`s, `pinned` = `Runtime::pinned` copies of them (copies in and out untimed).\n\n"
          "Sessions: StarPU gives every OpenCL device a memory node of its own, so in `dmda-opencl-all` the CPU "
          "device (PoCL) gets copies of its blocks (no zero copy), and dmda weighs those copies like a GPU's. "
          "Native CPU workers work on the registered memory in place. `blocks` defaults to 4 x the session's "
          "workers; the `detail` column says which workers ran the tasks of the last timed run.\n";
    sinew_bench::write_file(com.md(), md.str());
    std::cout << md.str();
    std::cerr << com.program << ": wrote " << com.csv().string() << " and " << com.md().string() << " in "
              << fmt(seconds_since_start(), 1) << " s\n";

    if (stopped) {
      std::cerr << com.program << ": note: this program does not resume; run it again with a larger --max-seconds\n";
      return sinew_bench::kExitStopped;
    }
    bool ok = true;
    for (const auto& r : rows) ok = ok && r->ok();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << com.program << ": " << e.what() << "\n";
    return 2;
  }
}
