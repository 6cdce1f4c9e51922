// bench/bench_overhead.cpp — what one execution costs the host: a 3-stage pipeline of tiny kernels
// (concepts.cl: square -> add_scalar -> scale) on a tiny input, through Sinew against the
// hand-written sequence of OpenCL calls (write, three NDRanges, read, finish), on each device
// alone; then an input large enough for a run of at least --target-ms, where Sinew's overhead
// should be lost in the work (goal: Sinew / hand-written <= 1.02); then what planning through
// the knowledge base adds per execution.
#include "common/kernels.hpp"
#include "handwritten/handwritten.hpp"
#include "sinew_side.hpp"

#include <unistd.h>

#include <iostream>
#include <sstream>

using namespace bench;

namespace {

constexpr float kAdd = 1.0f, kScale = 0.5f;
constexpr double kGoal = 1.02;

// Inputs whose results are exact in float: ((x*x) + 1) * 0.5 with x < 1001.
struct Data {
  std::vector<float> x, u;
  explicit Data(std::size_t n) : x(n), u(n) {
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1001);
  }
  std::string check() const {
    for (std::size_t i = 0; i < x.size(); ++i)
      if (u[i] != (x[i] * x[i] + kAdd) * kScale)
        return "element " + std::to_string(i) + " is " + fmt("%g", u[i]) + ", expected " +
               fmt("%g", (x[i] * x[i] + kAdd) * kScale);
    return "OK";
  }
};

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("elements", po::value<Counts>()->default_value(Counts{{1024}}, "1024")->value_name("N"),
                    "the tiny input, floats")("iterations", po::value<unsigned>()->default_value(2000)->value_name("N"),
                                              "timed executions of the tiny input per side (--quick 200)")(
      "target-ms", po::value<double>()->default_value(10)->value_name("X"),
      "the large input's hand-written run takes at least this")("no-large", po::bool_switch(), "only the tiny input");
  Bench b({"bench_overhead", "per-execution host overhead, Sinew against hand-written OpenCL",
           "A 3-stage pipeline of tiny kernels through Sinew (each device alone) against the hand-written "
           "OpenCL\ncalls (write, three NDRanges, read, finish; everything else set up once): the time per execution.",
           21, 5},
          argc, argv, own);
  const std::size_t elements = b.vm["elements"].as<Counts>().v.at(0);
  const unsigned iterations = std::max(1u, b.option("iterations", 200u));
  const double target_ms = b.vm["target-ms"].as<double>();
  const Timing tiny{std::max(20u, b.warmup), iterations};
  b.csv({"device", "device_id", "device_name", "driven_as", "case", "impl", "elements", "median_us", "min_us", "max_us",
         "iqr_us", "runs", "check"});
  try {
    auto rt = make_runtime(b.zero_copy_stand_in);
    const auto hwdevs = hw::list_devices();
    auto x = sinew::vector<cl_float>().name("x");
    auto t = sinew::vector<cl_float>().name("t");
    auto u = sinew::vector<cl_float>().name("u");
    auto tree = sinew::pipeline(
        sinew::samples::kernel("concepts.cl", "square").args(sinew::in(x), sinew::out(t), sinew::count(x)),
        sinew::samples::kernel("concepts.cl", "add_scalar")
            .args(sinew::in(t), sinew::out(u), sinew::scalar(kAdd), sinew::count(t)),
        sinew::samples::kernel("concepts.cl", "scale").args(sinew::inout(u), sinew::scalar(kScale), sinew::count(u)));
    // One side at n elements, checked; Sinew on the calling thread (execute) or through
    // run().get() (handed to a runtime thread and back).
    auto sinew_side = [&](sinew::Runtime& r, std::size_t n, const Timing& tm, sinew::RunOptions o, bool async = false) {
      Data d(n);
      const std::vector<float>& in = d.x;
      return measure({{},
                      [&] {
                        if (async)
                          r.run(tree, {{x, in}, {u, d.u}}, o).get();
                        else
                          r.execute(tree, {{x, in}, {u, d.u}}, o);
                        return kNaN;
                      },
                      [&] { return d.check(); }},
                     tm);
    };
    auto hw_side = [&](std::size_t device, std::size_t n, const Timing& tm) {
      Data d(n);
      try {
        if (device >= hwdevs.size()) throw std::runtime_error("no matching OpenCL device for the hand-written side");
        hw::TinyPipeline p(device, n, kAdd, kScale);
        return measure({{},
                        [&] {
                          p.run(d.x.data(), d.u.data());
                          return kNaN;
                        },
                        [&] { return d.check(); }},
                       tm);
      } catch (const std::exception& e) {
        return Stats{.check = std::string("ERROR: ") + e.what()};
      }
    };
    bool failed = false;
    auto row = [&](const std::string& dev, const std::string& id, const std::string& name, const std::string& driven,
                   const std::string& which, const std::string& impl, std::size_t n, const Stats& m) {
      b.csv().append({{"device", dev},
                      {"device_id", id}, {"device_name", name}, {"driven_as", driven}, {"case", which}, {"impl", impl},
                      {"elements", std::to_string(n)}, {"median_us", num(m.median_ms * 1e3)},
                      {"min_us", num(m.min_ms * 1e3)}, {"max_us", num(m.max_ms * 1e3)}, {"iqr_us", num(m.iqr_ms * 1e3)},
                      {"runs", std::to_string(m.runs)}, {"check", m.check}});
      failed = failed || !m.ok();
      b.progress(id + " " + which + " " + impl + " " + std::to_string(n) +
                 " elements: " + fmt("%.1f", m.median_ms * 1e3) + " us " + m.check);
    };

    Table tiny_t({"device", "driven as", "elements", "Sinew execute() us", "hand-written us", "overhead us / execution",
                  "Sinew / hand-written", "Sinew run().get() us"});
    Table large_t({"device", "elements", "Sinew ms", "hand-written ms", "Sinew / hand-written", "goal (<= 1.02)"});
    std::map<std::string, int> seen;  // (platform, name) -> devices of that name matched so far
    for (const auto& d : rt->devices()) {
      if (b.stop()) break;
      const std::string dev = d.id() + " " + d.name;
      const std::string driven =
          d.discrete ? (d.kind == sinew::DeviceKind::cpu ? "discrete (stand-in)" : "discrete") : "zero-copy";
      // The same device on the hand-written side: the k-th of its platform and name.
      const int k = seen[d.platform + "\n" + d.name]++;
      std::size_t hwi = hwdevs.size();
      for (std::size_t i = 0, c = 0; i < hwdevs.size(); ++i)
        if (hwdevs[i].platform == d.platform && hwdevs[i].name == d.name && static_cast<int>(c++) == k) hwi = i;
      auto r = [&](const std::string& which, const std::string& impl, std::size_t n, const Stats& m) {
        row(std::to_string(d.index), d.id(), d.name, driven, which, impl, n, m);
      };

      const Stats s = sinew_side(*rt, elements, tiny, on_device(d.index));
      r("tiny", "sinew", elements, s);
      const Stats sa = sinew_side(*rt, elements, tiny, on_device(d.index), /*async=*/true);
      r("tiny", "sinew-run-get", elements, sa);
      const Stats h = hw_side(hwi, elements, tiny);
      r("tiny", "handwritten", elements, h);
      auto us = [](const Stats& m) { return m.ok() ? fmt("%.1f", m.median_ms * 1e3) : std::string("FAILED"); };
      const bool ok = s.ok() && h.ok();
      tiny_t.add({dev, driven, std::to_string(elements), us(s), us(h),
                  ok ? fmt("%.1f", (s.median_ms - h.median_ms) * 1e3) : "-",
                  ok ? fmt("%.2f", s.median_ms / h.median_ms) : "-", us(sa)});

      if (b.vm["no-large"].as<bool>() || b.stop() || hwi >= hwdevs.size()) continue;
      // The smallest power-of-two input whose hand-written run takes target_ms, within memory.
      const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
      const std::size_t cap =
          std::min<std::size_t>(d.max_alloc / sizeof(float),
                                avail > 0 ? static_cast<std::size_t>(avail / 8 / (4 * sizeof(float))) : 1u << 28);
      std::size_t n = std::max<std::size_t>(elements, 1u << 16);
      for (;;) {
        const Stats probe = hw_side(hwi, n, {1, 1});
        if (!probe.ok() || probe.median_ms >= target_ms || 2 * n > cap) break;
        std::size_t next = n * 2;  // towards the target in one or a few doublings
        while (static_cast<double>(next) < static_cast<double>(n) * target_ms / std::max(probe.median_ms, 1e-3) &&
               2 * next <= cap)
          next *= 2;
        n = std::min(next, cap);
      }
      const Stats hl = hw_side(hwi, n, b.timing()), sl = sinew_side(*rt, n, b.timing(), on_device(d.index));
      r("large", "handwritten", n, hl);
      r("large", "sinew", n, sl);
      const double ratio = sl.median_ms / hl.median_ms;
      const bool lok = sl.ok() && hl.ok();
      large_t.add({dev, std::to_string(n), sl.ok() ? fmt("%.3f", sl.median_ms) : "FAILED",
                   hl.ok() ? fmt("%.3f", hl.median_ms) : "FAILED", lok ? fmt("%.3f", ratio) : "-",
                   !lok ? "-"
                        : std::string(ratio <= kGoal ? "met" : "missed") +
                              (hl.median_ms < target_ms
                                   ? " (the largest input that fits took " + fmt("%.2f", hl.median_ms) + " ms)"
                                   : "")});
    }

    // What planning by the knowledge base adds per execution: the plan looked up (and the run
    // recorded) in an in-memory and in a file knowledge base, against the same plan given.
    Table kb_t({"knowledge base", "plan (trained on the tiny input)", "planned by the KB us", "the same plan given us",
                "KB cost us / execution"});
    for (const std::string& kb : {std::string(":memory:"), b.file("-kb.sqlite").string()}) {
      if (b.stop()) break;
      remove_kb(kb);
      sinew::RuntimeOptions o;
      o.kb_path = kb;
      o.quiet = true;
      if (b.quick) o.training.max_executions = 12;
      const std::string name = kb == ":memory:" ? "in memory" : "file";
      std::string plan;
      Stats planned, given;
      try {
        auto krt = make_runtime(b.zero_copy_stand_in, o);
        Data d(elements);
        const std::vector<float>& in = d.x;
        sinew::RunOptions train;
        train.train = true;
        train.balance = false;
        const sinew::Report first = krt->execute(tree, {{x, in}, {u, d.u}}, train);
        plan = first.config.str();
        sinew::RunOptions by_kb;
        by_kb.balance = false;
        planned = sinew_side(*krt, elements, tiny, by_kb);
        given = sinew_side(*krt, elements, tiny, with_config(first.config));
      } catch (const std::exception& e) {
        planned.check = given.check = std::string("ERROR: ") + e.what();
      }
      row("all", plan, "knowledge base " + name, "", "tiny", "sinew-kb-planned", elements, planned);
      row("all", plan, "knowledge base " + name, "", "tiny", "sinew-plan-given", elements, given);
      const bool ok = planned.ok() && given.ok();
      kb_t.add({name, plan, ok ? fmt("%.1f", planned.median_ms * 1e3) : planned.check,
                ok ? fmt("%.1f", given.median_ms * 1e3) : given.check,
                ok ? fmt("%.1f", (planned.median_ms - given.median_ms) * 1e3) : "-"});
    }

    std::ostringstream md;
    md << b.header(rt.get())
       << "The pipeline: `square` (t = x*x) -> `add_scalar` (u = t + 1) -> `scale` (u *= 0.5) of samples/kernels/concepts.cl, "
          "x in and u out through host `std::vector`s, t a channel that stays on the device. Sinew: `rt.execute(tree, "
          "bindings, RunOptions{.device = d})` on the calling thread, and for the tiny input also `rt.run(...).get()`. "
          "Hand-written: write x, three NDRanges, read u, finish, in one in-order queue; context, program, kernels and "
          "buffers made once. Every output checked.\n\n### Tiny input: time per execution\n\nMedians of "
       << iterations << " executions after " << tiny.warmup << " warm-up executions.\n\n"
       << tiny_t.str() << "\n";
    if (!large_t.empty())
      md << "### A run of at least " << fmt("%g", target_ms) << " ms\n\nThe smallest power-of-two input whose "
         << "hand-written run takes " << fmt("%g", target_ms) << " ms or more; medians of " << b.repeat
         << " runs. On a discrete device the sides also move the data differently (Sinew through pinned staging in "
            "chunks, the hand-written code with plain pageable transfers), so there the ratio measures more than "
            "overhead.\n\n"
         << large_t.str() << "\n";
    if (!kb_t.empty())
      md << "### Planning through the knowledge base\n\nThe tiny pipeline planned by a knowledge base (trained once, "
            "then a lookup and a recorded run per execution; balancer off) against the same plan given as a `Config`; "
            "medians of "
         << iterations << " executions.\n\n"
         << kb_t.str() << "\n";
    for (const auto& r : b.csv().rows())
      if (get(r, "check") != "OK")
        md << "- " << get(r, "device_id") << " " << get(r, "case") << " " << get(r, "impl") << ": " << get(r, "check")
           << "\n";
    return b.finish(md.str(), failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
