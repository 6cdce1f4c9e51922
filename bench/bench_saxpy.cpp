// bench/bench_saxpy.cpp — saxpy (y = a*x + y, float, data in host memory): Sinew's saxpy sample
// against hand-written OpenCL, on the CPU alone, the GPU alone and static CPU+GPU splits, the
// user's data pageable and pinned (common/versus.hpp); then the head to head: interleaved rounds
// of the CPU alone, the GPU alone and the 60% CPU split with the data pinned on both sides.
#include "versus.hpp"

#include <iostream>

using namespace bench;

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()(
      "sizes",
      po::value<Counts>()->default_value(Counts{{10000000, 50000000, 100000000}}, "10M,50M,100M")->value_name("a,b"),
      "elements (--quick 1M)")("step", po::value<double>()->default_value(0.05, "0.05")->value_name("X"),
                               "the pageable split sweep's step in CPU share (--quick 0.1); 60% is always included")(
      "pinned-step", po::value<double>()->default_value(0.1, "0.1")->value_name("X"),
      "the pinned split sweep's step (--quick 0.2); 60% is always included")(
      "ab", po::value<unsigned>()->default_value(15)->value_name("N"),
      "head to head: N interleaved rounds, one hand-written and one Sinew run each (0: off)")(
      "ab-only", po::bool_switch(), "the head-to-head rounds alone (no rows, no sweeps)");
  own.add(versus_options());
  Bench b({"bench_saxpy", "saxpy, Sinew against hand-written OpenCL",
           "Saxpy on float vectors in host memory: Sinew's saxpy sample against hand-written OpenCL on the CPU\nalone, "
           "the GPU alone and CPU+GPU splits, the user's data pageable and pinned, then interleaved\nhead-to-head "
           "rounds. Without a GPU run it with POCL_DEVICES=\"pthread pthread\".",
           7, 3},
          argc, argv, own);
  const VersusFlags f(b);
  const double step = b.option("step", 0.1), pinned_step = b.option("pinned-step", 0.2);
  if (!(step > 0 && step <= 1) || !(pinned_step > 0 && pinned_step <= 1)) b.fail("--step", "steps are in (0, 1]");
  const unsigned rounds = b.vm["ab"].as<unsigned>();
  const bool ab_only = b.vm["ab-only"].as<bool>();
  try {
    std::unique_ptr<hw::Env> env = f.handwritten ? std::make_unique<hw::Env>() : nullptr;
    std::unique_ptr<sinew::Runtime> rt = f.sinew ? make_runtime(b.zero_copy_stand_in) : nullptr;
    Versus v(b, f, rt.get(), env.get());
    Csv ab(b.file("_ab.csv"), {"size", "pair", "round", "handwritten_ms", "sinew_ms"});
    Table h2h({"size", "pair", "rounds", "hand-written ms", "Sinew ms", "Sinew / hand-written", "speed",
               "hand-written min", "Sinew min"});
    bool failed = false;
    const unsigned ov = f.overlaps.empty() ? 2 : *std::max_element(f.overlaps.begin(), f.overlaps.end());
    for (std::size_t n : b.option("sizes", Counts{{1000000}}).v) {
      if (b.stop()) break;
      sinew::samples::Saxpy pageable, pinned;  // the same data; the second's x and y in Runtime::pinned memory
      pageable.prepare(n);
      if (rt) {
        pinned.use_pinned_memory(*rt);
        pinned.prepare(n);
      }
      auto hand = env ? hw::saxpy(*env, pageable, f.hw) : nullptr;
      if (!ab_only)
        v.run({"saxpy",
               n, count_label(n) + " elements (" + fmt("%g", 12e-6 * n) + " MB read+written)", 12.0 * n,
               rt ? &pageable : nullptr, rt ? &pinned : nullptr, hand.get(), sweep_shares(step, {0.6}),
               sweep_shares(pinned_step, {0.6}), {0.6}, {0.6}});
      if (!hand || !rt || !v.pair().two || !env->has_cpu() || rounds == 0) continue;
      struct Pair {
        std::string name;
        Job hw, sinew;
      };
      const auto& p = v.pair();
      for (auto& [name, a, s] :
           {Pair{"cpu alone", hand->split(1, false), sinew_job(*rt, pageable, on_device(p.cpu))},
            Pair{"gpu alone, data pinned", hand->split(0, true), sinew_job(*rt, pinned, v.plan(0, ov))},
            Pair{"60% cpu, data pinned", hand->split(0.6, true), sinew_job(*rt, pinned, v.plan(0.6, ov))}}) {
        std::vector<double> sinew_per_hw;
        const Rounds r = head_to_head(a, s, rounds, [&](unsigned i, double h, double w) {
          ab.append({{"size", std::to_string(n)},
                     {"pair", name}, {"round", std::to_string(i)}, {"handwritten_ms", num(h)}, {"sinew_ms", num(w)}});
          sinew_per_hw.push_back(w / h);
        });
        failed = failed || r.check != "OK";
        if (r.a_ms.empty()) {
          h2h.add({count_label(n), name, "0", r.check});
          continue;
        }
        h2h.add({count_label(n), name, std::to_string(r.a_ms.size()), fmt("%.3f", median(r.a_ms)),
                 fmt("%.3f", median(r.b_ms)), fmt("%.3f", median(sinew_per_hw)), fmt("%.3f", r.ratio()),
                 fmt("%.3f", *std::min_element(r.a_ms.begin(), r.a_ms.end())),
                 fmt("%.3f", *std::min_element(r.b_ms.begin(), r.b_ms.end()))});
        b.progress("head to head " + count_label(n) + " " + name + ": speed " + fmt("%.3f", r.ratio()));
      }
    }
    std::string md = b.header(rt.get()) + v.markdown();
    if (!h2h.empty())
      md += "### Head to head\n\nThe CPU alone (the data pageable), the GPU alone and the 60% CPU split (the data "
            "pinned on both sides). Per round one hand-written run, then one Sinew run (overlap " + std::to_string(ov) +
            "), each after an untimed run of its own. Sinew / hand-written and speed (hand-written / Sinew; the goal "
            "is >= 0.95) are medians of the per-round ratios; ms are each side's medians.\n\n" + h2h.str();
    return b.finish(md, failed || v.failed());
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
