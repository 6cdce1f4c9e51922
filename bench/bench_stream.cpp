// bench/bench_stream.cpp — the physical limit of host-resident saxpy, and how close Sinew gets.
//
// 1. Host memory bandwidth, STREAM-like: copy, scale, add and triad on double arrays much larger
//    than the last-level cache, and an in-place float saxpy (y = a*x + y), on one std::thread per
//    CPU of the affinity mask (pinned there, each first touching its own slice); best of N.
// 2. The limit: saxpy moves 12 bytes per element, so no device and no split can beat 12 n / (the
//    best bandwidth measured).
// 3. Sinew's saxpy sample through its knowledge base (trained in this run) and at its best static
//    split, the data pageable and pinned, each as a fraction of that limit (goal: within 15%).
#include "sinew_side.hpp"

#include "common/descriptors.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <thread>

using namespace bench;

namespace {

struct Kernel {
  const char* name;
  double bytes_per_element;  // what STREAM counts: reads + writes (no write-allocate traffic)
  const char* what;
};
const Kernel kKernels[] = {{"copy", 16, "c = a"},
                           {"scale", 16, "b = q c"}, {"add", 24, "c = a + b"}, {"triad", 24, "a = b + q c"},
                           {"saxpy", 12, "y = a x + y (float, in place)"}};

// The last-level cache summed over its instances (sysfs: the highest level, each distinct
// shared_cpu_list once); 0 when unknown.
double llc_bytes() {
  int best_level = 0;
  double total = 0;
  std::vector<std::string> seen;
  for (int cpu = 0; fs::exists("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache"); ++cpu)
    for (int i = 0;; ++i) {
      const fs::path idx = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(i);
      if (!fs::exists(idx)) break;
      auto read = [&](const char* f) {
        std::string s;
        std::getline(std::ifstream(idx / f), s);
        return s;
      };
      if (read("type") == "Instruction") continue;
      const int level = std::atoi(read("level").c_str());
      const std::string size = read("size");
      const double bytes = std::atof(size.c_str()) * (size.ends_with("K") ? 1024 : size.ends_with("M") ? 1 << 20 : 1);
      const std::string id = std::to_string(level) + ":" + read("shared_cpu_list");
      if (level > best_level) best_level = level, total = 0, seen.clear();
      if (level == best_level && std::find(seen.begin(), seen.end(), id) == seen.end())
        seen.push_back(id), total += bytes;
    }
  if (total > 0) return total;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? static_cast<double>(l3) : 0;
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  for (unsigned c = 0; cpus.empty() && c < std::max(1u, std::thread::hardware_concurrency()); ++c)
    cpus.push_back(int(c));
  return cpus;
}

struct StreamResult {
  const Kernel* k;
  std::size_t elements;
  Stats m;  // min = the best repetition
  double gbps() const { return k->bytes_per_element * static_cast<double>(elements) / m.min_ms / 1e6; }
};

// The five kernels, `reps` times after a warm-up repetition, on one pinned thread per CPU.
std::vector<StreamResult> stream(std::size_t n, const std::vector<int>& cpus, unsigned reps, std::string* check) {
  const std::size_t T = cpus.size();
  // Not touched at allocation: each thread first-touches its own slice (NUMA).
  auto alloc = [](std::size_t bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes) != 0) throw std::bad_alloc();
    return std::unique_ptr<void, decltype(&std::free)>(p, &std::free);
  };
  auto ra = alloc(n * 8), rb = alloc(n * 8), rc = alloc(n * 8), rx = alloc(n * 8), ry = alloc(n * 8);
  auto* a = static_cast<double*>(ra.get());
  auto* b = static_cast<double*>(rb.get());
  auto* c = static_cast<double*>(rc.get());
  auto* x = static_cast<float*>(rx.get());
  auto* y = static_cast<float*>(ry.get());
  const double q = 3.0;
  const float sa = 0.5f;
  std::barrier sync(static_cast<std::ptrdiff_t>(T + 1));
  std::atomic<int> job{-2};  // -2: first touch, 0..4: a kernel, -1: quit
  std::vector<std::jthread> pool;
  for (std::size_t t = 0; t < T; ++t)
    pool.emplace_back([&, t] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[t], &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      const std::size_t lo = n * t / T, hi = n * (t + 1) / T;
      for (int k; (sync.arrive_and_wait(), k = job.load()) != -1; sync.arrive_and_wait()) {
        if (k == -2) {
          for (std::size_t i = lo; i < hi; ++i) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
          for (std::size_t i = 2 * lo; i < 2 * hi; ++i) x[i] = 1.0f, y[i] = 0.0f;
        }
        if (k == 0)
          for (std::size_t i = lo; i < hi; ++i) c[i] = a[i];
        if (k == 1)
          for (std::size_t i = lo; i < hi; ++i) b[i] = q * c[i];
        if (k == 2)
          for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
        if (k == 3)
          for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + q * c[i];
        if (k == 4)
          for (std::size_t i = 2 * lo; i < 2 * hi; ++i) y[i] = sa * x[i] + y[i];
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
  for (unsigned r = 0; r <= reps; ++r)  // repetition 0 warms up, as in STREAM
    for (int k = 0; k < 5; ++k)
      if (const double ms = run(k); r > 0) times[k].push_back(ms);
  job.store(-1);
  sync.arrive_and_wait();
  pool.clear();
  // STREAM's check: the same sequence on scalars.
  double aj = 1, bj = 2, cj = 0;
  for (unsigned r = 0; r <= reps; ++r) cj = aj, bj = q * cj, cj = aj + bj, aj = bj + q * cj;
  double err = 0;
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 4096))
    err = std::max({err, std::fabs(a[i] - aj) / aj, std::fabs(b[i] - bj) / bj, std::fabs(c[i] - cj) / cj,
                    y[2 * i] == sa * static_cast<float>(reps + 1) ? 0.0 : 1.0});
  *check = err < 1e-13 ? "OK" : "MISMATCH: relative error " + fmt("%g", err);
  std::vector<StreamResult> out;
  for (int k = 0; k < 5; ++k) out.push_back({&kKernels[k], k == 4 ? 2 * n : n, summarize(times[k])});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()(
      "sizes",
      po::value<Counts>()->default_value(Counts{{10000000, 50000000, 100000000}}, "10M,50M,100M")->value_name("a,b"),
      "saxpy elements (--quick 1M,4M)")("array-mb", po::value<unsigned>()->default_value(0)->value_name("N"),
                                        "MB per STREAM array (0: 4x the last-level cache, at least 256; --quick 64)")(
      "threads", po::value<unsigned>()->default_value(0)->value_name("N"), "STREAM threads (0: one per CPU allowed)")(
      "stream-reps", po::value<unsigned>()->default_value(10)->value_name("N"),
      "STREAM repetitions, the best counts (--quick 3)")(
      "step", po::value<double>()->default_value(0.05, "0.05")->value_name("X"),
      "the static-split sweep's step (--quick 0.25)")(
      "memory", po::value<Names>()->default_value(Names{{"pageable", "pinned"}}, "pageable,pinned")->value_name("a,b"),
      "where the saxpy data lives: pageable, pinned or both");
  Bench b({"bench_stream", "host memory bandwidth and the saxpy limit",
           "Host memory bandwidth measured STREAM-like, the minimum saxpy time it allows (12 bytes per element),\nand "
           "Sinew's saxpy through its knowledge base and at its best static split against it (goal: 85%).",
           7, 3},
          argc, argv, own);
  const auto memory = b.vm["memory"].as<Names>().v;
  for (const auto& m : memory)
    if (m != "pageable" && m != "pinned") b.fail("--memory", "'" + m + "' is neither pageable nor pinned");
  const unsigned reps = std::max(1u, b.option("stream-reps", 3u));
  const double step = b.option("step", 0.25), goal = 0.85;
  clear_overrides(b.d.name, {"SINEW_CONFIG", "SINEW_TRAIN", "SINEW_STRATEGY"});
  b.csv({"kind", "name", "size", "memory", "cpu_share", "overlap", "fission", "config", "median_ms", "min_ms", "max_ms",
         "gb_per_s", "limit_ms", "fraction_of_limit", "runs", "training_executions", "note", "check"});
  try {
    // 1. Host memory bandwidth.
    std::vector<int> cpus = allowed_cpus();
    if (unsigned t = b.vm["threads"].as<unsigned>()) {
      std::vector<int> picked;
      for (unsigned i = 0; i < t; ++i) picked.push_back(cpus[i % cpus.size()]);
      cpus = picked;
    }
    const double llc = llc_bytes();
    const unsigned mb = b.option("array-mb", 64u);
    std::size_t array_bytes = mb ? std::size_t(mb) << 20 : std::max<std::size_t>(256u << 20, std::size_t(4 * llc));
    const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    std::string cut;
    if (avail > 0 && 5.0 * static_cast<double>(array_bytes) > avail / 2) {
      array_bytes = static_cast<std::size_t>(avail / 10) & ~std::size_t(4095);
      cut = " (cut to fit half of the free memory)";
    }
    b.progress("STREAM: " + std::to_string(cpus.size()) + " threads, " + std::to_string(array_bytes >> 20) +
               " MB per array");
    std::string stream_check;
    const auto bw = stream(array_bytes / 8, cpus, reps, &stream_check);
    double best_gbps = 0;
    std::string best_kernel;
    Table bw_t({"kernel", "what", "bytes/element", "best GB/s", "best ms", "median ms", "max ms"});
    for (const auto& r : bw) {
      b.csv().append({{"kind", "stream"},
                      {"name", r.k->name}, {"size", std::to_string(r.elements)}, {"median_ms", num(r.m.median_ms)},
                      {"min_ms", num(r.m.min_ms)}, {"max_ms", num(r.m.max_ms)}, {"gb_per_s", num(r.gbps())},
                      {"runs", std::to_string(reps)}, {"note", r.k->what}, {"check", stream_check}});
      bw_t.add({r.k->name, r.k->what, fmt("%.0f", r.k->bytes_per_element), fmt("%.2f", r.gbps()),
                fmt("%.3f", r.m.min_ms), fmt("%.3f", r.m.median_ms), fmt("%.3f", r.m.max_ms)});
      if (r.gbps() > best_gbps) best_gbps = r.gbps(), best_kernel = r.k->name;
    }
    bool failed = stream_check != "OK";

    // 2 and 3. Sinew's saxpy against the limit; one runtime whose in-memory knowledge base trains
    // in this run (the sweep's plans are given ones, which it never sees).
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";
    ro.quiet = !b.verbose;
    auto rt = make_runtime(b.zero_copy_stand_in, ro);
    const Roles roles = Roles::of(*rt);
    Table st({"size", "memory", "limit ms", "KB ms", "KB plan", "KB % of limit", "best split ms", "best split plan",
              "best split % of limit", "goal"});
    for (std::size_t n : b.option("sizes", Counts{{1000000, 4000000}}).v)
      for (const auto& mem : memory) {
        if (b.stop()) break;
        sinew::samples::Saxpy s;
        if (mem == "pinned") s.use_pinned_memory(*rt);
        s.prepare(n);
        const double limit = 12.0 * static_cast<double>(n) / best_gbps / 1e6;
        auto row = [&](const char* kind, const std::string& name, const sinew::Config& c, const Stats& m) {
          Csv::Row r{{"kind", kind}, {"name", name}, {"size", std::to_string(n)}, {"memory", mem},
                     {"cpu_share", num(shares_of(c, roles).cpu)}, {"overlap", std::to_string(c.overlap)},
                     {"fission", c.fission}, {"config", c.str()}, {"median_ms", num(m.median_ms)},
                     {"min_ms", num(m.min_ms)}, {"max_ms", num(m.max_ms)}, {"runs", std::to_string(m.runs)},
                     {"limit_ms", num(limit)}, {"fraction_of_limit", num(limit / m.median_ms)},
                     {"gb_per_s", num(12.0 * n / m.median_ms / 1e6)}, {"check", m.check}};
          failed = failed || !m.ok();
          return r;
        };
        auto plan = [&](const sinew::Config& c) {
          return "cpu " + pct(shares_of(c, roles).cpu) + ", " + c.fission + "/" + std::to_string(c.overlap);
        };
        // Through the knowledge base: train (this tree, this size and placement), then reuse.
        const Planned t = time_planned(*rt, s, /*train=*/true, b.timing());
        Csv::Row kb = row("sinew", "knowledge base", t.first.config, t.m);
        kb["training_executions"] = std::to_string(t.first.training_executions);
        kb["note"] = "provenance " + std::string(sinew::to_string(t.first.provenance)) + ", trained in " +
                     fmt("%.1f", t.first.training_seconds) + " s";
        b.csv().append(kb);
        b.progress("saxpy " + count_label(n) + " " + mem + " knowledge base: " + fmt("%.3f", t.m.median_ms) + " ms " +
                   t.m.check + "; limit " + fmt("%.3f", limit) + " ms");
        // The best static split: CPU shares at every overlap level, the trained fission.
        SweepSpec spec;
        spec.shares = sweep_shares(step);
        spec.overlaps = roles.overlaps;
        spec.fission = t.m.ok() ? t.first.config.fission : "none";
        const auto points = sweep_splits(
            roles, spec, t.m.ok() ? t.m.median_ms : kNaN,
            [&](const SweepPoint& p, double give_up) {
              const Stats m = measure(sinew_job(*rt, s, with_config(p.config)),
                                      {b.warmup, b.repeat, b.point_seconds * 1000, give_up});
              b.csv().append(row("sweep", "static split", p.config, m));
              b.progress("saxpy " + count_label(n) + " " + mem + " cpu " + pct(p.cpu_share) + " ovl " +
                         std::to_string(p.overlap) + ": " + fmt("%.3f", m.median_ms) + " ms " + m.check);
              return m;
            },
            [&](const SweepPoint& p) {
              Csv::Row r = row("sweep", "static split", p.config, p.m);
              if (p.skipped) r["check"] = "SKIPPED";
              r["note"] = p.note;
              b.csv().append(r);
            },
            [&] { return b.stop(); });
        const SweepPoint* best = best_point(points);
        if (best) b.csv().append(row("sinew", "best static split", best->config, best->m));
        st.add({count_label(n), mem, fmt("%.3f", limit), t.m.ok() ? fmt("%.3f", t.m.median_ms) : t.m.check,
                t.m.ok() ? plan(t.first.config) : "-", fmt("%.0f%%", 100 * limit / t.m.median_ms),
                best ? fmt("%.3f", best->m.median_ms) : "-", best ? plan(best->config) : "-",
                best ? fmt("%.0f%%", 100 * limit / best->m.median_ms) : "-",
                t.m.ok() && limit / t.m.median_ms >= goal ? "met" : "missed"});
      }

    std::ostringstream md;
    md << b.header(rt.get()) << "### Host memory bandwidth (STREAM-like)\n\n"
       << cpus.size() << " threads (one per CPU of the affinity mask, each pinned to its CPU), " << (array_bytes >> 20)
       << " MB per array" << cut << " (last-level cache: " << fmt("%.0f", llc / (1 << 20))
       << " MB as the OS reports it), best of " << reps
       << " repetitions after one warm-up. GB/s = bytes STREAM counts (reads + writes, no write-allocate) / best time. "
          "Check: "
       << stream_check << ".\n\n"
       << bw_t.str() << "\nThe limit: saxpy moves 12 bytes per element; at the "
       << "best bandwidth measured (" << fmt("%.2f", best_gbps) << " GB/s, " << best_kernel
       << (static_cast<double>(array_bytes) < 4 * llc
               ? "; the arrays are smaller than 4x the last-level cache, so this may be the cache's bandwidth: a limit "
                 "that is too low"
               : "")
       << ") it cannot take less than 12 n / bandwidth.\n\n### Sinew's saxpy against the limit\n\nThrough the "
          "knowledge base (trained in this run; the timed runs reuse the plan) and at the best static split of a sweep "
          "(CPU share in steps of "
       << pct(step)
       << " at each GPU overlap level, the trained fission). % of limit = limit / time (goal: "
       << fmt("%.0f", 100 * goal) << "% or more). Medians of up to " << b.repeat << " runs.\n\n"
       << st.str();
    return b.finish(md.str(), failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
