// bench/bench_overhead.cpp — what one execution costs the host: a 3-stage pipeline of tiny
// kernels (concepts.cl: square -> add_scalar -> scale) on a tiny input, through Sinew against the
// hand-written sequence of OpenCL calls (write buffer, three NDRanges, read buffer, finish), on
// each device alone; then the same pipeline on an input large enough for a run of at least 10 ms,
// where Sinew's overhead should be lost in the work (goal: Sinew / hand-written <= 1.02).
//
//   bench_overhead [--elements 1024] [--iterations 2000] [--target-ms 10] [--out DIR] [--quick]
#include "bench_common.hpp"
#include "handwritten/handwritten.hpp"
#include "output.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

using namespace sinew_bench;
namespace hw = sinew_bench::handwritten;

namespace {

constexpr float kAdd = 1.0f, kScale = 0.5f;

struct Settings {
  Common c;
  std::size_t elements = 1024;
  unsigned iterations = 2000;
  bool iterations_set = false;
  double target_ms = 10;
  bool large = true;
  double goal = 1.02;
};

// Inputs whose results are exact in float: ((x*x) + 1) * 0.5 with x < 1001.
void fill(std::vector<float>& x) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1001);
}
std::string check(const std::vector<float>& x, const std::vector<float>& u) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = (x[i] * x[i] + kAdd) * kScale;
    if (u[i] != want)
      return "MISMATCH at " + std::to_string(i) + ": got " + fmt("%g", u[i]) + ", expected " + fmt("%g", want);
  }
  return "OK";
}

const std::vector<std::string> kColumns = {"device", "device_id", "device_name", "driven_as", "case",   "impl",
                                           "elements", "median_us", "min_us", "max_us", "iqr_us", "runs", "check"};

// One measurement as a CSV row (kColumns): where it ran, what, and its times in us.
void append_row(CsvLog& csv, const std::string& device, const std::string& device_id, const std::string& device_name,
                const std::string& driven_as, const std::string& which, const std::string& impl, std::size_t n,
                const Measurement& m) {
  csv.append({{"device", device},
              {"device_id", device_id},
              {"device_name", device_name},
              {"driven_as", driven_as},
              {"case", which},
              {"impl", impl},
              {"elements", std::to_string(n)},
              {"median_us", num(m.median_ms * 1e3)},
              {"min_us", num(m.min_ms * 1e3)},
              {"max_us", num(m.max_ms * 1e3)},
              {"iqr_us", num(m.iqr_ms * 1e3)},
              {"runs", std::to_string(m.runs)},
              {"check", m.check}});
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  Cli cli(
      "Per-execution host overhead: a 3-stage pipeline of tiny kernels (concepts.cl: square ->\n"
      "add_scalar -> scale, t = x*x, u = (t + 1) * 0.5) on a tiny input through Sinew (the device\n"
      "alone, RunOptions::device) against the hand-written OpenCL calls (write, three NDRanges,\n"
      "read, finish; context, program, kernels and buffers set up once), on every device: the\n"
      "median time per execution in microseconds. Then an input for a run of at least --target-ms,\n"
      "where Sinew / hand-written should be at most 1.02.\n");
  cli.section("What to run");
  cli.option("--elements", "N", "the tiny input, floats (default 1024)",
             [&](const std::string& v) { s.elements = cli.to_counts("--elements", v).front(); });
  cli.option("--iterations", "N", "timed executions of the tiny input per side (default 2000; --quick 200)",
             [&](const std::string& v) {
               s.iterations = std::max(1u, cli.to_unsigned("--iterations", v));
               s.iterations_set = true;
             });
  cli.option("--target-ms", "X", "the large input's hand-written run takes at least this (default 10)",
             [&](const std::string& v) { s.target_ms = cli.to_double("--target-ms", v, 0.01, 1e5); });
  cli.flag("--no-large", "only the tiny input", [&] { s.large = false; });
  add_common(cli, s.c, 21, /*resumable=*/false);
  cli.parse(argc, argv);
  finish_common(cli, s.c, 5);
  if (s.c.quick && !s.iterations_set) s.iterations = 200;

  try {
    CsvLog csv(s.c.csv(), kColumns, false);
    Deadline deadline(s.c.max_seconds);
    auto rt = make_runtime(false);
    const auto hwdevs = hw::list_devices();

    auto x = sinew::vector<cl_float>().name("x");
    auto t = sinew::vector<cl_float>().name("t");
    auto u = sinew::vector<cl_float>().name("u");
    auto tree = sinew::pipeline(
        sinew::kernel("concepts.cl", "square").args(sinew::in(x), sinew::out(t), sinew::count(x)),
        sinew::kernel("concepts.cl", "add_scalar").args(sinew::in(t), sinew::out(u), sinew::scalar(kAdd), sinew::count(t)),
        sinew::kernel("concepts.cl", "scale").args(sinew::inout(u), sinew::scalar(kScale), sinew::count(u)));

    struct Result {
      std::string device, driven;
      Measurement sinew_tiny, sinew_tiny_async, hw_tiny, sinew_large, hw_large;
      std::size_t large_n = 0;
      std::string note;
    };
    std::vector<Result> results;
    bool failed = false, stopped = false;
    std::map<std::string, int> seen;  // (platform, name) -> devices of that name matched so far

    for (const auto& d : rt->devices()) {
      if (deadline.check(s.c.program)) {
        stopped = true;
        break;
      }
      Result r;
      r.device = d.id() + " " + d.name;
      r.driven = d.discrete ? (d.kind == sinew::DeviceKind::cpu ? "discrete (stand-in)" : "discrete") : "zero-copy";
      // The same device on the hand-written side: the k-th of its platform and name.
      const std::string key = d.platform + "\n" + d.name;
      const int k = seen[key]++;
      std::size_t hwi = hwdevs.size();
      for (std::size_t i = 0, c = 0; i < hwdevs.size(); ++i)
        if (hwdevs[i].platform == d.platform && hwdevs[i].name == d.name && static_cast<int>(c++) == k) hwi = i;

      auto row = [&](const std::string& which, const std::string& impl, std::size_t n, const Measurement& m) {
        append_row(csv, std::to_string(d.index), d.id(), d.name, r.driven, which, impl, n, m);
        failed = failed || !m.ok();
        std::cerr << "  [" << fmt("%6.1f", seconds_since_start()) << " s] " << d.id() << " " << which << " " << impl
                  << " " << n << " elements: " << fmt("%.1f", m.median_ms * 1e3) << " us " << m.check << "\n";
      };
      // One side at n elements: `repeat` executions after `warmup`, output checked. Sinew on the
      // calling thread (execute) or handed to a runtime thread (run().get()).
      auto time_sinew_side = [&](std::size_t n, unsigned warmup, unsigned repeat, bool async = false) {
        std::vector<float> hx(n), hu(n);
        fill(hx);
        const std::vector<float>& in = hx;
        sinew::RunOptions o;
        o.device = d.index;
        Measurement m;
        try {
          if (async)
            m = time_calls([&] { rt->run(tree, {{x, in}, {u, hu}}, o).get(); }, warmup, repeat);
          else
            m = time_calls([&] { rt->execute(tree, {{x, in}, {u, hu}}, o); }, warmup, repeat);
          m.check = check(hx, hu);
        } catch (const std::exception& e) {
          m.check = std::string("ERROR: ") + e.what();
        }
        return m;
      };
      auto time_hw_side = [&](std::size_t n, unsigned warmup, unsigned repeat) {
        std::vector<float> hx(n), hu(n);
        fill(hx);
        Measurement m;
        try {
          if (hwi >= hwdevs.size()) throw std::runtime_error("no matching OpenCL device for the hand-written side");
          hw::TinyPipeline p(hwi, n, kAdd, kScale);
          m = time_calls([&] { p.run(hx.data(), hu.data()); }, warmup, repeat);
          m.check = check(hx, hu);
        } catch (const std::exception& e) {
          m.check = std::string("ERROR: ") + e.what();
        }
        return m;
      };

      // Tiny: the overhead itself.
      const unsigned tiny_warmup = std::max(20u, s.c.warmup);
      r.sinew_tiny = time_sinew_side(s.elements, tiny_warmup, s.iterations);
      row("tiny", "sinew", s.elements, r.sinew_tiny);
      r.sinew_tiny_async = time_sinew_side(s.elements, tiny_warmup, s.iterations, /*async=*/true);
      row("tiny", "sinew-run-get", s.elements, r.sinew_tiny_async);
      r.hw_tiny = time_hw_side(s.elements, tiny_warmup, s.iterations);
      row("tiny", "handwritten", s.elements, r.hw_tiny);

      // Large: the smallest power-of-two input whose hand-written run takes target_ms.
      if (s.large && !deadline.check(s.c.program) && hwi < hwdevs.size()) {
        const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
        const std::size_t cap = std::min<std::size_t>(
            d.max_alloc / sizeof(float),
            avail > 0 ? static_cast<std::size_t>(avail / 8 / (4 * sizeof(float))) : std::size_t(1) << 28);
        std::size_t n = std::max<std::size_t>(s.elements, 1u << 16);
        for (;;) {
          const Measurement probe = time_hw_side(n, 1, 1);
          if (!probe.ok()) break;
          if (probe.median_ms >= s.target_ms || 2 * n > cap) break;
          // Grow towards the target in one or a few steps (powers of two).
          const double want = s.target_ms / std::max(probe.median_ms, 1e-3);
          std::size_t next = n * 2;
          while (static_cast<double>(next) < static_cast<double>(n) * want && 2 * next <= cap) next *= 2;
          n = std::min(next, cap);
        }
        r.large_n = n;
        r.hw_large = time_hw_side(n, s.c.warmup, s.c.repeat);
        r.sinew_large = time_sinew_side(n, s.c.warmup, s.c.repeat);
        row("large", "handwritten", n, r.hw_large);
        row("large", "sinew", n, r.sinew_large);
        if (r.hw_large.ok() && r.hw_large.median_ms < s.target_ms)
          r.note = "the largest input that fits took " + fmt("%.2f", r.hw_large.median_ms) + " ms";
      }
      results.push_back(r);
    }

    // What planning by the knowledge base adds per execution: the same plan given, or looked up
    // (and the run recorded) in an in-memory and in a file knowledge base.
    struct KbCost {
      std::string kb, plan;
      Measurement planned, given;
    };
    std::vector<KbCost> kb_costs;
    for (const std::string& kb : {std::string(":memory:"), (s.c.out / "bench_overhead-kb.sqlite").string()}) {
      if (deadline.check(s.c.program)) {
        stopped = true;
        break;
      }
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(kb + suffix, ec);
      sinew::RuntimeOptions o;
      o.kb_path = kb;
      o.quiet = true;
      if (s.c.quick) o.training.max_executions = 12;
      KbCost k;
      k.kb = kb == ":memory:" ? "in memory" : "file";
      std::vector<float> hx(s.elements), hu(s.elements);
      fill(hx);
      const std::vector<float>& in = hx;
      try {
        auto krt = make_runtime(false, o);
        sinew::RunOptions train;
        train.train = true;
        train.balance = false;
        const sinew::Report first = krt->execute(tree, {{x, in}, {u, hu}}, train);
        k.plan = first.config.str();
        sinew::RunOptions planned;
        planned.balance = false;
        sinew::RunOptions given;
        given.config = first.config;
        const unsigned warm = std::max(20u, s.c.warmup);
        k.planned = time_calls([&] { krt->execute(tree, {{x, in}, {u, hu}}, planned); }, warm, s.iterations);
        k.planned.check = check(hx, hu);
        k.given = time_calls([&] { krt->execute(tree, {{x, in}, {u, hu}}, given); }, warm, s.iterations);
        k.given.check = check(hx, hu);
      } catch (const std::exception& e) {
        k.planned.check = k.given.check = std::string("ERROR: ") + e.what();
      }
      for (const auto& [impl, m] : {std::pair{"sinew-kb-planned", k.planned}, std::pair{"sinew-plan-given", k.given}}) {
        append_row(csv, "all", k.plan, "knowledge base " + k.kb, "", "tiny", impl, s.elements, m);
        failed = failed || !m.ok();
      }
      std::cerr << "  [" << fmt("%6.1f", seconds_since_start()) << " s] knowledge base " << k.kb << ": planned "
                << fmt("%.1f", k.planned.median_ms * 1e3) << " us, the same plan given "
                << fmt("%.1f", k.given.median_ms * 1e3) << " us\n";
      kb_costs.push_back(k);
    }

    std::ostringstream md;
    md << "## bench_overhead: per-execution host overhead, Sinew against hand-written OpenCL\n\n"
       << md_run_header(s.c, rt.get())
       << "The pipeline: `square` (t = x*x) -> `add_scalar` (u = t + 1) -> `scale` (u *= 0.5) of "
          "kernels/concepts.cl, x in and u out through host `std::vector`s, t a channel that stays on the device. "
          "Sinew: `rt.execute(tree, bindings, RunOptions{.device = d})` (validation, decomposition, buffers, "
          "transfers, kernels, results back, on the calling thread), and for the tiny input also "
          "`rt.run(...).get()` (the request handed to a runtime thread and the future waited for). Hand-written: write x, three NDRanges, read u, finish, in one "
          "in-order queue; context, program, kernels and buffers made once. Every output checked.\n\n";
    MdTable tiny({"device", "driven as", "elements", "Sinew execute() us", "hand-written us", "overhead us / execution",
                  "Sinew / hand-written", "Sinew run().get() us"});
    MdTable large({"device", "elements", "Sinew ms", "hand-written ms", "Sinew / hand-written", "goal (<= " + fmt("%.2f", s.goal) + ")"});
    for (const auto& r : results) {
      const bool ok = r.sinew_tiny.ok() && r.hw_tiny.ok();
      tiny.add({r.device, r.driven, std::to_string(s.elements),
                r.sinew_tiny.ok() ? fmt("%.1f", r.sinew_tiny.median_ms * 1e3) : "FAILED",
                r.hw_tiny.ok() ? fmt("%.1f", r.hw_tiny.median_ms * 1e3) : "FAILED",
                ok ? fmt("%.1f", (r.sinew_tiny.median_ms - r.hw_tiny.median_ms) * 1e3) : "-",
                ok ? fmt("%.2f", r.sinew_tiny.median_ms / r.hw_tiny.median_ms) : "-",
                r.sinew_tiny_async.ok() ? fmt("%.1f", r.sinew_tiny_async.median_ms * 1e3) : "FAILED"});
      if (r.large_n) {
        const bool lok = r.sinew_large.ok() && r.hw_large.ok();
        const double ratio = r.sinew_large.median_ms / r.hw_large.median_ms;
        large.add({r.device, std::to_string(r.large_n),
                   r.sinew_large.ok() ? fmt("%.3f", r.sinew_large.median_ms) : "FAILED",
                   r.hw_large.ok() ? fmt("%.3f", r.hw_large.median_ms) : "FAILED", lok ? fmt("%.3f", ratio) : "-",
                   lok ? (ratio <= s.goal ? "met" : "missed") + (r.note.empty() ? "" : " (" + r.note + ")") : "-"});
      }
    }
    md << "### Tiny input: time per execution\n\nMedians of " << s.iterations << " executions after "
       << std::max(20u, s.c.warmup) << " warm-up executions.\n\n" << tiny.str() << "\n";
    if (!large.empty())
      md << "### A run of at least " << fmt("%g", s.target_ms) << " ms\n\nThe smallest power-of-two input whose "
         << "hand-written run takes " << fmt("%g", s.target_ms) << " ms or more; medians of " << s.c.repeat
         << " runs. On a discrete device the two sides also move the data differently (Sinew through pinned "
            "staging in chunks, the hand-written code with plain pageable transfers), so there the ratio measures "
            "more than overhead.\n\n"
         << large.str() << "\n";
    MdTable kbt({"knowledge base", "plan (trained on the tiny input)", "planned by the KB us", "the same plan given us",
                 "KB cost us / execution"});
    for (const auto& k : kb_costs) {
      const bool ok = k.planned.ok() && k.given.ok();
      kbt.add({k.kb, k.plan, k.planned.ok() ? fmt("%.1f", k.planned.median_ms * 1e3) : "FAILED",
               k.given.ok() ? fmt("%.1f", k.given.median_ms * 1e3) : "FAILED",
               ok ? fmt("%.1f", (k.planned.median_ms - k.given.median_ms) * 1e3) : "-"});
    }
    if (!kbt.empty())
      md << "### Planning through the knowledge base\n\nThe same tiny pipeline on every device, planned by a "
            "knowledge base (trained once, then a lookup and a recorded run per execution; balancer off) against "
            "the same plan given as a `Config`; medians of "
         << s.iterations << " executions. The difference is what the knowledge base costs each execution "
         << "(`bench_table1`'s trained and derived rows include it).\n\n"
         << kbt.str() << "\n";
    for (const auto& row : csv.rows())
      if (row.at("check") != "OK")
        md << "- " << row.at("device_id") << " " << row.at("case") << " " << row.at("impl") << ": " << row.at("check") << "\n";
    return finish_report(s.c, md.str(), stopped, failed);
  } catch (const std::exception& e) {
    std::cerr << s.c.program << ": " << e.what() << "\n";
    return 2;
  }
}
