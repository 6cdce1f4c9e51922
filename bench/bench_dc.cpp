// bench/bench_dc.cpp — issue 19's "Must hold" figures for divide and conquer: mergesort of uint
// keys (the mergesort sample, host data) per size: Sinew's trained plan against the GPU alone,
// the CPU alone, every crossover level (the trained plan's shares below it, the CPU above it, the
// HPU paper's division), std::sort and std::sort(std::execution::par). Goals: trained >= 0.98x
// the best single device and >= 0.95x the best crossover level; how far the trained crossover is
// from the swept best, per size. The knowledge base is in memory: every plan here is trained by
// this run.
#include "common/descriptors.hpp"
#include "sinew_side.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <execution>
#include <iostream>
#include <sstream>

using namespace bench;

namespace {

// std::sort on a copy of the sample's original keys, timed.
Job std_sort_job(sinew::samples::Mergesort& s, std::vector<cl_uint>& keys, bool parallel) {
  Job j;
  j.reset = [&s, &keys] {
    keys.resize(s.size());
    auto b = s.bindings();  // the original keys
    std::memcpy(keys.data(), b.front().data, keys.size() * sizeof(cl_uint));
  };
  j.run = [&keys, parallel] {
    const auto t0 = std::chrono::steady_clock::now();
    if (parallel) std::sort(std::execution::par, keys.begin(), keys.end());
    else std::sort(keys.begin(), keys.end());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  j.check = [&keys] { return std::is_sorted(keys.begin(), keys.end()) ? std::string("OK") : std::string("unsorted"); };
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("sizes",
                    po::value<Counts>()->default_value(Counts{{16u << 20, 64u << 20, 256u << 20}}, "16Mi,64Mi,256Mi")
                        ->value_name("a,b"),
                    "keys per run (--quick 1Mi)")("fanout", po::value<std::size_t>()->default_value(2), "merge fan-out")(
      "leaf", po::value<std::size_t>()->default_value(1024), "keys per leaf (a power of two)")(
      "sweep-top", po::value<std::size_t>()->default_value(0)->value_name("N"),
      "sweep only the N highest crossover levels (0: every level; a crossover whose upper levels run on a much "
      "slower CPU takes long at 256Mi)")("no-std", po::bool_switch(), "skip std::sort and std::sort(par) (half a minute "
                                                                     "a run at 256Mi)");
  Bench b({"bench_dc", "divide and conquer (issue 19): mergesort across CPU and GPU",
           "Mergesort of uint keys: the trained plan against each device alone, every crossover level, std::sort\nand "
           "std::sort(std::execution::par). Without a GPU run it with POCL_DEVICES=\"pthread pthread\".",
           5, 2},
          argc, argv, own);
  const auto sizes = b.option("sizes", Counts{{1u << 20}}).v;
  try {
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";
    std::unique_ptr<sinew::Runtime> rt = make_runtime(b.zero_copy_stand_in, ro);
    const Roles roles = Roles::of(*rt);
    const Roles::Pair p = roles.pair();
    b.csv(measurement_columns());
    bool failed = false;
    std::ostringstream md;
    md << "Sinew side: " << roles.describe(*rt) << "; knowledge base in memory. std::execution::par "
#if __has_include(<tbb/tbb.h>)
       << "runs on TBB.\n\n";
#else
       << "has no TBB here (libtbb-dev absent): libstdc++ runs it sequentially.\n\n";
#endif
    Table t({"keys", "variant", "plan", "median ms", "IQR ms", "trained / this", "check"});
    Table gaps({"keys", "trained crossover", "best swept crossover", "levels apart", "best single / trained",
                "head to head (range)", "best crossover / trained"});
    Table model({"keys", "model's plan", "predicted ms", "measured ms", "best swept plan", "best swept ms",
                 "levels apart", "model / best swept"});
    for (const std::size_t n : sizes) {
      if (b.stop()) break;
      sinew::samples::Mergesort s;
      s.params.fanout = b.vm["fanout"].as<std::size_t>();
      s.params.leaf_size = b.vm["leaf"].as<std::size_t>();
      s.prepare(n);
      const std::string size = count_label(n);
      auto row = [&](const std::string& variant, const std::string& plan, const Stats& m, double trained) {
        t.add({size, variant, plan, fmt("%.3f", m.median_ms), fmt("%.3f", m.iqr_ms),
               fmt("%.3f", m.median_ms / trained), m.check});
        failed = failed || !m.ok();
      };
      // The trained plan first: its shares serve the crossover sweep.
      b.progress("mergesort " + size + ": training");
      const Planned tp = time_planned(*rt, s, /*train=*/true, b.timing());
      const double trained = tp.m.median_ms;
      row("trained", tp.last.config.str(), tp.m, trained);
      b.progress("mergesort " + size + ": trained " + tp.last.config.str() + " " + fmt("%.3f", trained) + " ms (" +
                 std::to_string(tp.first.training_executions) + " training runs)");
      auto measured = [&](const std::string& variant, const sinew::RunOptions& o) {
        return Bench::stats(b.measure(kv({"case", "mergesort", "size", std::to_string(n), "impl", "sinew", "variant",
                                          variant}),
                                      sinew_job(*rt, s, o), b.timing()));
      };
      // Every crossover level counts from the leaves; a device alone runs every level: `levels`.
      std::size_t levels = 1;
      for (std::size_t sub = s.params.leaf_size; sub < n; sub *= s.params.fanout) ++levels;
      double best_single = kNaN, best_swept = kNaN;
      std::size_t best_device = 0;
      std::size_t best_swept_level = levels;
      std::string best_swept_plan = "-";
      auto swept = [&](const Stats& m, std::size_t level, const std::string& plan) {
        if (m.ok() && !(m.median_ms >= best_swept)) best_swept = m.median_ms, best_swept_level = level, best_swept_plan = plan;
      };
      for (const auto& [name, has, device] : {std::tuple{"gpu alone", p.has_gpu, p.gpu}, {"cpu alone", p.has_cpu, p.cpu}}) {
        if (!has || b.stop()) continue;
        const Stats m = measured(name, on_device(device));
        row(name, "device " + std::to_string(device), m, trained);
        if (m.ok() && !(m.median_ms >= best_single)) best_single = m.median_ms, best_device = device;
        swept(m, levels, name);
      }
      // The trained plan and the best single device once more, head to head (a round each, in
      // turn): on this machine two measurements of one plan made minutes apart differ by more than
      // the goal's 2%.
      std::string h2h = "-";
      if (!std::isnan(best_single) && !b.stop()) {
        b.progress("mergesort " + size + ": trained plan and device " + std::to_string(best_device) + " head to head");
        const Rounds r = head_to_head(sinew_job(*rt, s, on_device(best_device)),
                                      sinew_job(*rt, s, with_config(tp.last.config)), b.timing().repeat);
        const Stats q = ratios(r.a_ms, r.b_ms);
        h2h = r.check == "OK" ? fmt("%.3f", q.median_ms) + " (" + fmt("%.3f", q.min_ms) + "-" + fmt("%.3f", q.max_ms) + ")" : r.check;
        failed = failed || r.check != "OK";
      }
      std::vector<cl_uint> keys;
      for (const bool par : {false, true}) {
        if (b.stop() || b.vm["no-std"].as<bool>()) break;
        const char* name = par ? "std::sort(par)" : "std::sort";
        const Stats m = Bench::stats(b.measure(kv({"case", "mergesort", "size", std::to_string(n), "impl", "std",
                                                   "variant", name}),
                                               std_sort_job(s, keys, par), b.timing()));
        row(name, "host", m, trained);
      }
      // Every crossover level: the trained shares below it, the CPU above it.
      double best_cross = kNaN;
      std::size_t best_level = 0;
      const std::size_t top = b.vm["sweep-top"].as<std::size_t>();
      for (std::size_t c = top && top < levels ? levels - top : 1; c < levels && p.two; ++c) {
        if (b.stop()) break;
        sinew::Config cfg = tp.last.config;
        cfg.set("crossover", std::to_string(c)).set("upper", std::to_string(p.cpu));
        const Stats m = measured("crossover " + std::to_string(c), with_config(cfg));
        row("crossover " + std::to_string(c), cfg.str(), m, trained);
        if (m.ok() && !(m.median_ms >= best_cross)) best_cross = m.median_ms, best_level = c;
        swept(m, c, "crossover " + std::to_string(c));
      }
      // The HPU model's own plan (chosen from each device's measured level times before training's
      // search), timed like the others unless it is the trained plan.
      if (const auto& mc = tp.first.model_choice; mc && !b.stop()) {
        const Stats m = mc->config == tp.last.config ? tp.m : measured("model's plan", with_config(mc->config));
        if (!(mc->config == tp.last.config)) row("model's plan", mc->config.str(), m, trained);
        const std::size_t level = std::min<std::size_t>(std::stoul(mc->config.item("crossover").value_or("0")), levels);
        model.add({size, mc->config.str(), fmt("%.3f", mc->predicted_ms), fmt("%.3f", m.median_ms), best_swept_plan,
                   fmt("%.3f", best_swept),
                   std::to_string(std::abs(static_cast<long>(level) - static_cast<long>(best_swept_level))),
                   fmt("%.3f", m.median_ms / best_swept)});
      }
      const unsigned trained_level = static_cast<unsigned>(std::stoul(tp.last.config.item("crossover").value_or("0")));
      gaps.add({size, std::to_string(trained_level), p.two ? std::to_string(best_level) : "-",
                p.two ? std::to_string(std::abs(static_cast<long>(trained_level) - static_cast<long>(best_level))) : "-",
                fmt("%.3f", best_single / trained), h2h, fmt("%.3f", best_cross / trained)});
    }
    md << "### Mergesort, uint keys, host data\n\nPer size: the trained plan (RunOptions{.train = true} once, then "
          "timed runs of its plan), each device alone, every crossover level (the trained shares below it, the CPU "
          "above it), std::sort and std::sort(std::execution::par) on a copy of the same keys. trained / this above "
          "1: this one is slower.\n\n"
       << t.str() << "\n### The trained plan against the best single device and the swept crossover\n\n"
       << "Goals: best single / trained >= 0.98 and best crossover / trained >= 0.95 (times: above 1, the trained "
          "plan is faster). Head to head: the median over rounds of one run of the best single device and one "
          "of the trained plan, in turn, with the range.\n\n"
       << gaps.str() << "\n### The HPU model's plan against the best swept plan\n\nThe plan the model chose from "
          "each device's measured level times (its predicted time, then its time measured here) against the fastest "
          "of each device alone and every crossover level (a device alone runs every level: it counts as the top level).\n\n"
       << model.str() << "\n";
    return b.finish(b.header(rt.get()) + md.str(), failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
