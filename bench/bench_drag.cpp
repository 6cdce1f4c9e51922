// bench/bench_drag.cpp — drag-through (issue 20): the GPU's memory capped to a quarter of a
// sample's data (RuntimeOptions::memory_cap), so that any share above a quarter streams through the
// GPU in chunks that fit. Per sample (saxpy, the filter pipeline), the data in host memory:
//   - the plan the knowledge base trains under the cap, and the one it trains without it;
//   - the CPU alone, the GPU alone with and without the cap;
//   - the oracle under the cap: the best static CPU share of a sweep (the trained plan's fission and
//     overlap), each point dragged through the capped GPU where its share exceeds the cap;
// then interleaved rounds of all of them (medians, min-max), the capped plan's speed against the
// oracle's (issue 20 asks >= 0.95) and against the uncapped plan's, and the capped GPU's peak
// device memory (Report::device_bytes) against the cap. Without a GPU run it with
// POCL_DEVICES="pthread pthread" (the second device is driven as a discrete one).
#include "sinew_side.hpp"

#include "common/descriptors.hpp"

#include <iostream>

using namespace bench;

namespace {

std::uint64_t bound_bytes(sinew::samples::Sample& s) {
  std::uint64_t sum = 0;
  for (const auto& b : s.bindings())
    if (b.vector) sum += b.elements * b.type.size;
  return sum;
}

std::string mb(double bytes) { return fmt("%.1f", bytes / (1 << 20)); }

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("saxpy", po::value<Counts>()->default_value(Counts{{150000000}}, "150M")->value_name("n"),
                    "saxpy sizes in floats (--quick 2M)")(
      "filter", po::value<Counts>()->default_value(Counts{{8192}}, "8192")->value_name("side"),
      "filter pipeline image sides (--quick 512)")(
      "fraction", po::value<double>()->default_value(0.25, "0.25")->value_name("X"),
      "the GPU's cap as a fraction of the sample's data")(
      "step", po::value<double>()->default_value(0.1, "0.1")->value_name("X"),
      "the static sweep's step in CPU share, for the oracle (--quick 0.25)")(
      "rounds", po::value<unsigned>()->default_value(7)->value_name("N"), "interleaved rounds (--quick 2)");
  Bench b({"bench_drag", "drag-through: the GPU capped to a quarter of the data",
           "saxpy and the filter pipeline with the GPU's memory capped to a fraction of the data: the plan trained\n"
           "under the cap against the uncapped plan, the CPU alone, the GPU alone and the best static split under the\n"
           "cap, in interleaved rounds. Without a GPU run it with POCL_DEVICES=\"pthread pthread\".",
           5, 2},
          argc, argv, own);
  clear_overrides(b.d.name, {"SINEW_CONFIG", "SINEW_STRATEGY", "SINEW_MEMORY_CAP"});
  const double step = b.option("step", 0.25), fraction = b.vm["fraction"].as<double>();
  if (!(step > 0 && step <= 1)) b.fail("--step", "the step is in (0, 1]");
  if (!(fraction > 0 && fraction <= 1)) b.fail("--fraction", "the fraction is in (0, 1]");
  const unsigned rounds = std::max(1u, b.option("rounds", 2u));
  b.csv({"sample", "size", "plan", "config", "median_ms", "min_ms", "max_ms", "runs", "gpu_bytes", "cap_bytes",
         "check"});
  try {
    sinew::RuntimeOptions o;
    o.kb_path = ":memory:";
    auto plain = make_runtime(b.zero_copy_stand_in, o);
    const Roles r = Roles::of(*plain);
    const Roles::Pair p = r.pair();
    if (!p.two || !p.gpu_discrete)
      throw std::runtime_error("a CPU and a discrete GPU are needed (or POCL_DEVICES=\"pthread pthread\")");
    const std::string gpu_id = plain->devices()[p.gpu].id();
    Table t({"sample", "size", "cap MB (GPU peak MB)", "CPU alone ms", "GPU alone ms (capped)", "uncapped plan ms",
             "capped plan ms (plan)", "oracle capped ms (CPU share)", "capped plan / oracle speed",
             "capped / uncapped plan speed"});
    bool failed = false;
    struct Item {
      std::string name;
      std::size_t size;
    };
    std::vector<Item> items;
    for (std::size_t n : b.option("saxpy", Counts{{2000000}}).v) items.push_back({"saxpy", n});
    for (std::size_t n : b.option("filter", Counts{{512}}).v) items.push_back({"filter_pipeline", n});
    for (const Item& item : items) {
      if (b.stop()) break;
      auto s = sinew::samples::find(item.name);
      s->prepare(item.size);
      const std::uint64_t data = bound_bytes(*s);
      const auto cap = static_cast<std::uint64_t>(static_cast<double>(data) * fraction);
      sinew::RuntimeOptions co = o;
      co.memory_cap = gpu_id + "=" + std::to_string(cap);
      auto capped = make_runtime(b.zero_copy_stand_in, co);
      const std::string size = s->size_text();
      auto row = [&](const std::string& plan, const sinew::Config& c, const Stats& m, const sinew::Report* rep) {
        const std::string gpu_bytes = rep && rep->device_bytes.size() > p.gpu ? std::to_string(rep->device_bytes[p.gpu]) : "";
        b.csv().append({{"sample", item.name}, {"size", size}, {"plan", plan}, {"config", c.str()},
                        {"median_ms", num(m.median_ms)}, {"min_ms", num(m.min_ms)}, {"max_ms", num(m.max_ms)},
                        {"runs", std::to_string(m.runs)}, {"gpu_bytes", gpu_bytes}, {"cap_bytes", std::to_string(cap)},
                        {"check", m.check}});
        failed = failed || !m.ok();
        b.progress(item.name + " " + size + " " + plan + " " + c.str() + ": " + fmt("%.3f", m.median_ms) + " ms " +
                   m.check);
        return m;
      };
      const Planned uncapped = time_planned(*plain, *s, /*train=*/true, b.timing());
      row("uncapped trained", uncapped.last.config, uncapped.m, &uncapped.last);
      const Planned trained = time_planned(*capped, *s, /*train=*/true, b.timing());
      row("capped trained", trained.last.config, trained.m, &trained.last);
      auto platform = [&](sinew::Config c) {
        if (c.shares.at(p.cpu) > 0) c.fission = trained.last.config.fission;
        if (c.shares.at(p.gpu) > 0) c.overlap = trained.last.config.overlap;
        return c;
      };
      // The oracle under the cap: the best static split of the sweep.
      double best_ms = 1e300, best_share = 0;
      for (double share : sweep_shares(step)) {
        if (b.stop()) break;
        const sinew::Config c = platform(make_plan(r, share));
        sinew::Report last;
        const Stats m = row("capped static sweep", c, measure(sinew_job(*capped, *s, with_config(c), &last), b.timing()),
                            &last);
        if (m.ok() && m.median_ms < best_ms) best_ms = m.median_ms, best_share = share;
      }
      const std::size_t count = plain->devices().size();
      const sinew::Config oracle = platform(make_plan(r, best_share));
      const sinew::Config cpu_only = platform(sinew::Config::single(p.cpu, count));
      const sinew::Config gpu_only = platform(sinew::Config::single(p.gpu, count));
      // Interleaved: whatever the machine does meanwhile hits every plan alike.
      const char* names[] = {"capped trained", "oracle capped", "uncapped trained", "cpu alone", "gpu alone capped",
                             "gpu alone uncapped"};
      std::vector<sinew::Report> last(6);
      std::vector<Job> jobs = {sinew_job(*capped, *s, with_config(trained.last.config), &last[0]),
                               sinew_job(*capped, *s, with_config(oracle), &last[1]),
                               sinew_job(*plain, *s, with_config(uncapped.last.config), &last[2]),
                               sinew_job(*capped, *s, with_config(cpu_only), &last[3]),
                               sinew_job(*capped, *s, with_config(gpu_only), &last[4]),
                               sinew_job(*plain, *s, with_config(gpu_only), &last[5])};
      const Interleaved runs = interleave(jobs, rounds);
      if (runs.check != "OK" || runs.ms.empty() || runs.ms[0].empty()) {
        failed = true;
        t.add({item.name, size, runs.check});
        continue;
      }
      std::vector<Stats> st;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        st.push_back(summarize(runs.ms[j]));
        row(std::string("interleaved ") + names[j], last[j].config, st.back(), &last[j]);
      }
      auto cell = [](const Stats& m) { return fmt("%.2f", m.median_ms) + " [" + fmt("%.2f", m.min_ms) + "-" + fmt("%.2f", m.max_ms) + "]"; };
      std::uint64_t peak = 0;
      for (std::size_t j : {0u, 1u, 3u, 4u}) peak = std::max<std::uint64_t>(peak, last[j].device_bytes.at(p.gpu));
      if (peak > cap) failed = true;
      t.add({item.name, size, mb(static_cast<double>(cap)) + " (" + mb(static_cast<double>(peak)) + ")", cell(st[3]),
             cell(st[5]) + " (" + cell(st[4]) + ")", cell(st[2]), cell(st[0]) + " (" + trained.last.config.str() + ")",
             cell(st[1]) + " (" + pct(best_share) + ")", fmt("%.3f", st[1].median_ms / st[0].median_ms),
             fmt("%.3f", st[2].median_ms / st[0].median_ms)});
    }
    std::string md = b.header(plain.get()) + "The GPU's memory capped (RuntimeOptions::memory_cap) to " +
                     fmt("%g", fraction) +
                     " of each sample's bound data; the data pageable in host memory. Medians [min-max] of " +
                     std::to_string(rounds) +
                     " interleaved rounds. The plans are trained by the knowledge base (in memory) under the cap and "
                     "without it; the oracle is the best static CPU share of a sweep in steps of " + fmt("%g", step) +
                     " under the cap, with the capped plan's fission and overlap. GPU peak: the most device memory "
                     "any capped run allocated on the GPU (Report::device_bytes), at most the cap.\n\n" + t.str();
    return b.finish(md, failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
