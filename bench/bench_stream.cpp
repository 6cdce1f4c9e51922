// bench/bench_stream.cpp — the physical limit of host-resident saxpy, and how close Sinew gets.
//
// 1. A STREAM-like measurement of host memory bandwidth: copy, scale, add and triad on double
//    arrays much larger than the last-level cache, plus an in-place float saxpy (y = a*x + y)
//    written in C++, each run by one std::thread per CPU of the process's affinity mask (pinned
//    there, each on its own slice, the slice first touched by its thread); best of N repetitions.
// 2. The minimum time of saxpy on n elements: it moves 12 bytes per element (read x and y, write
//    y), so no device and no split can beat 12 n / (the best bandwidth measured).
// 3. Sinew's saxpy sample at 10M/50M/100M through its knowledge base (trained in this run) and at
//    its best static split (a sweep of CPU shares at every GPU overlap level), with the data in
//    ordinary and in pinned memory, each as a fraction of that limit (goal: within 15%).
//
//   bench_stream [--sizes 10M,50M,100M] [--array-mb N] [--threads N] [--out DIR] [--quick]
#include "bench_common.hpp"
#include "output.hpp"
#include "plans.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <pthread.h>
#include <sched.h>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace sinew_bench;
namespace fs = std::filesystem;

namespace {

// ----- host memory bandwidth -----------------------------------------------------------------

struct Kernel {
  const char* name;
  double bytes_per_element;  // what STREAM counts: reads + writes (no write-allocate traffic)
  const char* what;
};
// The four STREAM kernels on doubles and the saxpy of the samples on floats (in place).
const Kernel kKernels[] = {{"copy", 16, "c = a"},
                           {"scale", 16, "b = q c"},
                           {"add", 24, "c = a + b"},
                           {"triad", 24, "a = b + q c"},
                           {"saxpy", 12, "y = a x + y (float, in place)"}};

struct StreamResult {
  std::string name, what;
  double bytes_per_element = 0;
  std::size_t elements = 0;
  double best_ms = 0, avg_ms = 0, max_ms = 0;
  double gbps() const { return bytes_per_element * static_cast<double>(elements) / best_ms / 1e6; }
};

// The last-level cache of the machine, summed over its instances (0 when unknown).
double llc_bytes() {
  // sysfs: the highest cache level, each distinct instance (shared_cpu_list) counted once.
  int best_level = 0;
  double total = 0;
  std::vector<std::string> seen;
  for (int cpu = 0; cpu < 4096; ++cpu) {
    const fs::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache";
    if (!fs::exists(dir)) {
      if (cpu > 0) break;
      continue;
    }
    for (int i = 0; i < 16; ++i) {
      const fs::path idx = dir / ("index" + std::to_string(i));
      if (!fs::exists(idx)) break;
      auto read = [&](const char* f) {
        std::ifstream in(idx / f);
        std::string s;
        std::getline(in, s);
        return s;
      };
      const int level = std::atoi(read("level").c_str());
      if (read("type") == "Instruction") continue;
      std::string size = read("size");
      double bytes = std::atof(size.c_str());
      if (!size.empty() && (size.back() == 'K')) bytes *= 1024;
      if (!size.empty() && (size.back() == 'M')) bytes *= 1024 * 1024;
      const std::string id = std::to_string(level) + ":" + read("shared_cpu_list");
      if (level > best_level) {
        best_level = level;
        total = 0;
        seen.clear();
      }
      if (level == best_level && std::find(seen.begin(), seen.end(), id) == seen.end()) {
        seen.push_back(id);
        total += bytes;
      }
    }
  }
  if (total > 0) return total;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
    if (long v = sysconf(name); v > 0) return static_cast<double>(v);
  return 0;
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty())
    for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c) cpus.push_back(static_cast<int>(c));
  return cpus;
}

// Memory that is not touched at allocation: each thread first-touches its own slice (NUMA).
struct Raw {
  void* p = nullptr;
  explicit Raw(std::size_t bytes) {
    if (posix_memalign(&p, 4096, bytes) != 0) throw std::bad_alloc();
  }
  ~Raw() { std::free(p); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
};

// Runs the five kernels `reps` times on `threads` pinned threads; returns their times.
std::vector<StreamResult> measure_stream(std::size_t n, const std::vector<int>& cpus, unsigned reps, std::string* check) {
  const std::size_t T = cpus.size();
  Raw ra(n * sizeof(double)), rb(n * sizeof(double)), rc(n * sizeof(double));
  Raw rx(2 * n * sizeof(float)), ry(2 * n * sizeof(float));  // as many bytes as a and b
  auto* a = static_cast<double*>(ra.p);
  auto* b = static_cast<double*>(rb.p);
  auto* c = static_cast<double*>(rc.p);
  auto* x = static_cast<float*>(rx.p);
  auto* y = static_cast<float*>(ry.p);
  const double q = 3.0;
  const float sa = 0.5f;

  std::barrier sync(static_cast<std::ptrdiff_t>(T + 1));
  std::atomic<int> job{-1};  // -2: init, 0..4: kernel, -1: quit
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < T; ++t)
    pool.emplace_back([&, t] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[t], &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      const std::size_t lo = n * t / T, hi = n * (t + 1) / T;
      for (;;) {
        sync.arrive_and_wait();
        const int k = job.load();
        if (k == -1) break;
        switch (k) {
          case -2:
            for (std::size_t i = lo; i < hi; ++i) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
            for (std::size_t i = 2 * lo; i < 2 * hi; ++i) x[i] = 1.0f, y[i] = 0.0f;
            break;
          case 0:
            for (std::size_t i = lo; i < hi; ++i) c[i] = a[i];
            break;
          case 1:
            for (std::size_t i = lo; i < hi; ++i) b[i] = q * c[i];
            break;
          case 2:
            for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
            break;
          case 3:
            for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + q * c[i];
            break;
          case 4:
            for (std::size_t i = 2 * lo; i < 2 * hi; ++i) y[i] = sa * x[i] + y[i];
            break;
        }
        sync.arrive_and_wait();
      }
    });
  auto run = [&](int k) {
    job.store(k);
    const auto t0 = std::chrono::steady_clock::now();
    sync.arrive_and_wait();  // go
    sync.arrive_and_wait();  // all done
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  run(-2);
  std::vector<std::vector<double>> times(5);
  for (unsigned r = 0; r < reps + 1; ++r)  // the first repetition warms up, as in STREAM
    for (int k = 0; k < 5; ++k) {
      const double ms = run(k);
      if (r > 0) times[k].push_back(ms);
    }
  job.store(-1);
  sync.arrive_and_wait();
  for (auto& th : pool) th.join();

  // STREAM's check: the same sequence on scalars.
  double aj = 1, bj = 2, cj = 0;
  for (unsigned r = 0; r < reps + 1; ++r) {
    cj = aj;
    bj = q * cj;
    cj = aj + bj;
    aj = bj + q * cj;
  }
  double err = 0;
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 4096))
    err = std::max({err, std::fabs(a[i] - aj) / aj, std::fabs(b[i] - bj) / bj, std::fabs(c[i] - cj) / cj});
  const float yj = sa * static_cast<float>(reps + 1);
  for (std::size_t i = 0; i < 2 * n; i += std::max<std::size_t>(1, n / 4096))
    if (y[i] != yj) err = std::max(err, 1.0);
  *check = err < 1e-13 ? "OK" : "MISMATCH: relative error " + fmt("%g", err);

  std::vector<StreamResult> out;
  for (int k = 0; k < 5; ++k) {
    StreamResult s;
    s.name = kKernels[k].name;
    s.what = kKernels[k].what;
    s.bytes_per_element = kKernels[k].bytes_per_element;
    s.elements = k == 4 ? 2 * n : n;
    s.best_ms = *std::min_element(times[k].begin(), times[k].end());
    s.max_ms = *std::max_element(times[k].begin(), times[k].end());
    double sum = 0;
    for (double t : times[k]) sum += t;
    s.avg_ms = sum / static_cast<double>(times[k].size());
    out.push_back(s);
  }
  return out;
}

const std::vector<std::string> kColumns = {"kind",    "name",   "size",      "memory", "cpu_share", "overlap",
                                           "fission", "config", "median_ms", "min_ms", "max_ms",    "avg_ms",
                                           "gb_per_s", "limit_ms", "fraction_of_limit", "runs", "training_executions",
                                           "note",    "check"};

struct Settings {
  Common c;
  std::vector<std::size_t> sizes;
  std::size_t array_mb = 0;  // 0: from the cache size
  unsigned threads = 0;      // 0: every CPU of the affinity mask
  unsigned reps = 10;
  bool reps_set = false;
  double step = 0.05;
  bool step_set = false;
  std::vector<std::string> memory{"pageable", "pinned"};
  double goal = 0.85;
};

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  Cli cli(
      "The physical limit of host-resident saxpy: host memory bandwidth measured STREAM-like (copy,\n"
      "scale, add, triad and an in-place float saxpy, one pinned std::thread per CPU, arrays much\n"
      "larger than the last-level cache, best of N), the resulting minimum saxpy time (12 bytes per\n"
      "element), and Sinew's saxpy through its knowledge base (trained in this run) and at its best\n"
      "static split, as a fraction of that limit (goal: 85% or more, i.e. within 15%).\n");
  cli.section("What to run");
  cli.option("--sizes", "a,b", "saxpy elements (default 10M,50M,100M; --quick 1M,4M)",
             [&](const std::string& v) { s.sizes = cli.to_counts("--sizes", v); });
  cli.option("--array-mb", "N",
             "bytes of each STREAM array, in MB (default: 4x the last-level cache, at\nleast 256; --quick 64)",
             [&](const std::string& v) { s.array_mb = std::max(1u, cli.to_unsigned("--array-mb", v)); });
  cli.option("--threads", "N", "STREAM threads (default: one per CPU the process may run on)",
             [&](const std::string& v) { s.threads = std::max(1u, cli.to_unsigned("--threads", v)); });
  cli.option("--stream-reps", "N", "STREAM repetitions, the best counts (default 10; --quick 3)", [&](const std::string& v) {
    s.reps = std::max(1u, cli.to_unsigned("--stream-reps", v));
    s.reps_set = true;
  });
  cli.option("--step", "X", "the static-split sweep's step in CPU share (default 0.05; --quick 0.25)",
             [&](const std::string& v) {
               s.step = cli.to_double("--step", v, 0.001, 1);
               s.step_set = true;
             });
  cli.option("--memory", "a,b", "where the saxpy data lives: pageable, pinned or both (default both)",
             [&](const std::string& v) {
               s.memory.clear();
               std::stringstream ss(v);
               std::string x;
               while (std::getline(ss, x, ','))
                 if (!x.empty()) {
                   if (x != "pageable" && x != "pinned") cli.fail("--memory", "'" + x + "' is neither pageable nor pinned");
                   s.memory.push_back(x);
                 }
               if (s.memory.empty()) cli.fail("--memory", "empty list");
             });
  add_common(cli, s.c, 7, /*resumable=*/false);
  cli.parse(argc, argv);
  finish_common(cli, s.c, 3);
  if (s.c.quick) {
    if (s.sizes.empty()) s.sizes = {1000000, 4000000};
    if (!s.array_mb) s.array_mb = 64;
    if (!s.reps_set) s.reps = 3;
    if (!s.step_set) s.step = 0.25;
  }
  if (s.sizes.empty()) s.sizes = {10000000, 50000000, 100000000};
  for (const char* v : {"SINEW_CONFIG", "SINEW_TRAIN", "SINEW_STRATEGY"})
    if (const char* x = std::getenv(v); x && *x) {
      std::cerr << s.c.program << ": note: ignoring " << v << "=" << x << "\n";
      unsetenv(v);
    }

  try {
    CsvLog csv(s.c.csv(), kColumns, false);
    Deadline deadline(s.c.max_seconds);
    bool failed = false;

    // 1. Host memory bandwidth.
    std::vector<int> cpus = allowed_cpus();
    if (s.threads) {
      std::vector<int> t;
      for (unsigned i = 0; i < s.threads; ++i) t.push_back(cpus[i % cpus.size()]);
      cpus = t;
    }
    const double llc = llc_bytes();
    std::size_t array_bytes = s.array_mb ? s.array_mb << 20 : std::max<std::size_t>(256u << 20, static_cast<std::size_t>(4 * llc));
    const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    std::string array_note;
    if (avail > 0 && 5.0 * static_cast<double>(array_bytes) > avail / 2) {
      array_bytes = static_cast<std::size_t>(avail / 10) & ~std::size_t(4095);
      array_note = " (cut to fit half of the free memory)";
    }
    const std::size_t n = array_bytes / sizeof(double);
    std::cerr << s.c.program << ": STREAM: " << cpus.size() << " threads, " << (array_bytes >> 20) << " MB per array"
              << array_note << ", last-level cache " << fmt("%.0f", llc / (1 << 20)) << " MB, best of " << s.reps << "\n";
    std::string stream_check;
    const auto stream = measure_stream(n, cpus, s.reps, &stream_check);
    double best_gbps = 0;
    std::string best_kernel;
    for (const auto& r : stream) {
      csv.append({{"kind", "stream"},
                  {"name", r.name},
                  {"size", std::to_string(r.elements)},
                  {"median_ms", ""},
                  {"min_ms", num(r.best_ms)},
                  {"max_ms", num(r.max_ms)},
                  {"avg_ms", num(r.avg_ms)},
                  {"gb_per_s", num(r.gbps())},
                  {"runs", std::to_string(s.reps)},
                  {"note", r.what},
                  {"check", stream_check}});
      std::cerr << "  " << r.name << ": " << fmt("%.2f", r.gbps()) << " GB/s (best " << fmt("%.3f", r.best_ms) << " ms)\n";
      if (r.gbps() > best_gbps) best_gbps = r.gbps(), best_kernel = r.name;
    }
    failed = failed || stream_check != "OK";
    auto limit_ms = [&](std::size_t elements) { return 12.0 * static_cast<double>(elements) / best_gbps / 1e6; };

    // 2 and 3. Sinew's saxpy against the limit. One runtime: its knowledge base (in memory)
    // trains in this run; the sweep's plans are given ones, which the knowledge base never sees.
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";
    ro.quiet = !s.c.verbose;
    auto rt = make_runtime(false, ro);
    const Roles roles = Roles::of(*rt);
    std::cerr << s.c.program << ": " << roles.describe(*rt) << "\n";
    struct Result {
      std::size_t n;
      std::string memory;
      double limit;
      CsvLog::Row kb, split;
    };
    std::vector<Result> results;
    bool stopped = false;
    for (std::size_t size : s.sizes) {
      for (const auto& memory : s.memory) {
        if (deadline.check(s.c.program)) {
          stopped = true;
          break;
        }
        auto sample = sinew::samples::find("saxpy");
        if (memory == "pinned") sample->use_pinned_memory(*rt);
        sample->prepare(size);
        const double limit = limit_ms(size);
        Result res{size, memory, limit, {}, {}};
        auto put = [&](CsvLog::Row& r, const Measurement& m) {
          r["median_ms"] = num(m.median_ms);
          r["min_ms"] = num(m.min_ms);
          r["max_ms"] = num(m.max_ms);
          r["runs"] = std::to_string(m.runs);
          r["limit_ms"] = num(limit);
          r["fraction_of_limit"] = num(limit / m.median_ms);
          r["gb_per_s"] = num(12.0 * static_cast<double>(size) / m.median_ms / 1e6);
          r["check"] = m.check;
          failed = failed || !m.ok();
        };
        auto plan = [&](CsvLog::Row& r, const sinew::Config& c) {
          r["cpu_share"] = num(shares_of(c, roles).cpu);
          r["overlap"] = std::to_string(c.overlap);
          r["fission"] = c.fission;
          r["config"] = c.str();
        };
        // Through the knowledge base: train (this tree, this size and placement), then reuse.
        const PlannedTiming t = time_planned(*rt, *sample, /*train=*/true, s.c.warmup, s.c.repeat, s.c.point_seconds * 1000);
        CsvLog::Row kb{{"kind", "sinew"}, {"name", "knowledge base"}, {"size", std::to_string(size)}, {"memory", memory}};
        put(kb, t.m);
        plan(kb, t.first.config);
        kb["training_executions"] = std::to_string(t.first.training_executions);
        kb["note"] = "provenance " + std::string(sinew::to_string(t.first.provenance)) + ", trained in " + fmt("%.1f", t.first.training_seconds) + " s";
        csv.append(kb);
        res.kb = kb;
        std::cerr << "  [" << fmt("%6.1f", seconds_since_start()) << " s] saxpy " << count_label(size) << " " << memory
                  << " knowledge base: " << fmt("%.3f", t.m.median_ms) << " ms " << t.m.check << " [" << kb["config"]
                  << "]; limit " << fmt("%.3f", limit) << " ms\n";
        // The best static split: CPU shares at every overlap level, the trained fission.
        SweepSpec spec;
        spec.shares = sweep_shares(s.step);
        spec.overlaps = roles.overlaps;
        spec.fission = t.m.ok() ? t.first.config.fission : "none";
        spec.warmup = s.c.warmup;
        spec.repeat = s.c.repeat;
        spec.budget_ms = s.c.point_seconds * 1000;
        const auto points = sweep_splits(
            *rt, roles, *sample, spec, t.m.ok() ? t.m.median_ms : NAN, nullptr,
            [&](const SweepPoint& p) {
              CsvLog::Row r{{"kind", "sweep"}, {"name", "static split"}, {"size", std::to_string(size)}, {"memory", memory}};
              plan(r, p.config);
              if (p.skipped) r["check"] = "SKIPPED";
              else put(r, p.m);
              r["note"] = p.note;
              csv.append(r);
            },
            [&] { return deadline.check(s.c.program); });
        if (const SweepPoint* b = best_point(points)) {
          CsvLog::Row r{{"kind", "sinew"}, {"name", "best static split"}, {"size", std::to_string(size)}, {"memory", memory}};
          put(r, b->m);
          plan(r, b->config);
          csv.append(r);
          res.split = r;
        }
        results.push_back(res);
      }
      if (stopped) break;
    }

    // The report.
    std::ostringstream md;
    md << "## bench_stream: host memory bandwidth and the saxpy limit\n\n" << md_run_header(s.c, rt.get());
    md << "### Host memory bandwidth (STREAM-like)\n\n"
       << cpus.size() << " threads (one per CPU of the affinity mask, each pinned to its CPU), " << (array_bytes >> 20)
       << " MB per array" << array_note << " (last-level cache: " << fmt("%.0f", llc / (1 << 20))
       << " MB as the OS reports it), best of " << s.reps
       << " repetitions after one warm-up. GB/s = bytes STREAM counts (reads + writes, no write-allocate) / best "
          "time. Check: "
       << stream_check << ".\n\n";
    MdTable bw({"kernel", "what", "bytes/element", "best GB/s", "best ms", "avg ms", "max ms"});
    for (const auto& r : stream)
      bw.add({r.name, r.what, fmt("%.0f", r.bytes_per_element), fmt("%.2f", r.gbps()), fmt("%.3f", r.best_ms),
              fmt("%.3f", r.avg_ms), fmt("%.3f", r.max_ms)});
    md << bw.str() << "\nThe limit: saxpy moves 12 bytes per element; at the best bandwidth measured ("
       << fmt("%.2f", best_gbps) << " GB/s, " << best_kernel
       << (static_cast<double>(array_bytes) < 4 * llc
               ? "; the arrays are smaller than 4x the last-level cache, so this may be the cache's bandwidth, "
                 "not the memory's: a lower bound that is too low"
               : "")
       << ") it cannot take less than 12 n / bandwidth.\n\n### Sinew's saxpy against the limit\n\n"
       << "Sinew's saxpy sample (host data in ordinary `std::vector` memory, or in `Runtime::pinned` memory), "
          "through the knowledge base (trained in this run; the timed runs reuse the plan) and at the best static "
          "split of a sweep (CPU share 0..100% in steps of "
       << pct(s.step) << " at each GPU overlap level, the trained fission). % of limit = limit / time (goal: "
       << fmt("%.0f", 100 * s.goal) << "% or more, within 15% of the limit). Medians of up to " << s.c.repeat
       << " runs.\n\n";
    MdTable st({"size", "memory", "limit ms", "KB ms", "KB plan", "KB % of limit", "best split ms", "best split plan",
                "best split % of limit", "goal"});
    for (const auto& r : results) {
      auto get = [](const CsvLog::Row& row, const char* k) {
        auto it = row.find(k);
        return it == row.end() ? std::string() : it->second;
      };
      const double kbf = to_num(get(r.kb, "fraction_of_limit")), spf = to_num(get(r.split, "fraction_of_limit"));
      auto plan_cell = [&](const CsvLog::Row& row) {
        if (get(row, "config").empty()) return std::string("-");
        return "cpu " + pct(to_num(get(row, "cpu_share"))) + ", " + get(row, "fission") + "/" + get(row, "overlap");
      };
      const bool kb_ok = get(r.kb, "check") == "OK";
      st.add({count_label(r.n), r.memory, fmt("%.3f", r.limit), kb_ok ? fmt("%.3f", to_num(get(r.kb, "median_ms"))) : "FAILED",
              plan_cell(r.kb), kb_ok ? fmt("%.0f%%", 100 * kbf) : "-",
              fmt("%.3f", to_num(get(r.split, "median_ms"))), plan_cell(r.split), fmt("%.0f%%", 100 * spf),
              kb_ok && kbf >= s.goal ? "met" : "missed"});
    }
    md << st.str() << "\n";
    for (const auto& r : results)
      if (auto it = r.kb.find("check"); it != r.kb.end() && it->second != "OK")
        md << "- saxpy " << count_label(r.n) << " " << r.memory << " knowledge base: " << it->second << "\n";
    return finish_report(s.c, md.str(), stopped, failed);
  } catch (const std::exception& e) {
    std::cerr << s.c.program << ": " << e.what() << "\n";
    return 2;
  }
}
