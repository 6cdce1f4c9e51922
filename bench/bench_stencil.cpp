// bench/bench_stencil.cpp — issue 17's "Must hold" figures for halos and scan:
//   1. the heat loop (heat sample, heat.cl) on the GPU alone and on the CPU alone against the same
//      kernels written by hand (hw::HeatLoop: device copy, and pointer swap), in interleaved
//      rounds; and a CPU+GPU split with the bytes its halo exchanges move per iteration;
//   2. the Sobel pipeline and the heat loop: Sinew's trained plan against the oracle static split
//      (a sweep of CPU shares) and the best single device, the data pageable and pinned;
//   3. the scan of 100M floats (prefix_sum): CPU+GPU splits against each device alone and against
//      a hand-written OpenCL scan with the same kernels on each device (hw::Scan).
// The knowledge base is in memory: every plan here is trained by this run.
#include "handwritten/handwritten.hpp"
#include "sinew_side.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

using namespace bench;

namespace {

bool wants(const Names& parts, const char* part) {
  return std::find(parts.v.begin(), parts.v.end(), part) != parts.v.end();
}

std::string spread(const Stats& r) {  // per-round ratios
  return fmt("%.3f", r.median_ms) + " (" + fmt("%.3f", r.min_ms) + "–" + fmt("%.3f", r.max_ms) + ", IQR " +
         fmt("%.3f", r.iqr_ms) + ")";
}

// A run's halo exchanges per loop iteration, against what halo rows alone would move: each
// boundary between two working partitions passes `halo_bytes` each way.
struct Exchanges {
  double bytes = 0, host = 0, boundary = 0, expected = 0;
  std::size_t partitions = 0, count = 0;
};
Exchanges exchanges_of(const sinew::Report& r, double halo_bytes) {
  Exchanges e;
  for (const auto& x : r.exchanges) e.bytes += x.bytes, e.host += x.host_bytes, e.boundary += x.boundary_bytes;
  e.count = r.exchanges.size();
  for (const auto& p : r.partitions) e.partitions += p.units > 0;
  const double it = static_cast<double>(std::max<std::size_t>(1, r.iterations));
  e.bytes /= it, e.host /= it, e.boundary /= it;
  e.expected = 2.0 * static_cast<double>(e.partitions > 0 ? e.partitions - 1 : 0) * halo_bytes;
  return e;
}
std::vector<std::string> exchange_cells(const Exchanges& e) {
  return {std::to_string(e.partitions), std::to_string(e.count), fmt("%.0f", e.bytes), fmt("%.0f", e.host),
          fmt("%.0f", e.boundary), fmt("%.0f", e.expected), e.bytes <= e.expected + 0.5 ? "yes" : "NO"};
}
const std::vector<std::string> kExchangeHeader = {"partitions", "exchanges", "bytes / iteration", "via host / iteration",
                                                  "boundary / iteration", "halo rows alone", "only halo rows"};

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("parts", po::value<Names>()->default_value(Names{{"heat", "plans", "scan"}}, "heat,plans,scan")
                                 ->value_name("a,b"),
                    "which parts: heat (against hand-written), plans (trained vs oracle), scan")(
      "heat-side", po::value<std::size_t>()->default_value(2048)->value_name("N"), "heat grid side (--quick 64)")(
      "heat-iterations", po::value<std::size_t>()->default_value(500)->value_name("N"),
      "heat sweeps per run, parts heat (--quick 20)")(
      "tolerance", po::value<float>()->default_value(0.0f, "0")->value_name("X"),
      "heat convergence tolerance; 0: every sweep runs (the test itself still runs after each)")(
      "gpu-rounds", po::value<unsigned>()->default_value(15)->value_name("N"),
      "interleaved rounds, heat on the GPU (--quick 2)")(
      "cpu-rounds", po::value<unsigned>()->default_value(5)->value_name("N"),
      "interleaved rounds, heat on the CPU (--quick 2; each run at full size takes seconds)")(
      "split-share", po::value<double>()->default_value(0.05, "0.05")->value_name("X"),
      "CPU share of the heat split whose exchanges are reported")(
      "sobel-side", po::value<std::size_t>()->default_value(4096)->value_name("N"), "Sobel image side (--quick 128)")(
      "plan-heat-iterations", po::value<std::size_t>()->default_value(100)->value_name("N"),
      "heat sweeps per run in part plans (--quick 10)")(
      "plan-shares",
      po::value<Shares>()
          ->default_value(Shares{{0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1}},
                          "0,0.01,0.02,0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.7,1")
          ->value_name("a,b"),
      "CPU shares of the oracle sweep (0 and 1 are always included: the single devices; --quick 0,0.5,1)")(
      "scan-elements", po::value<std::size_t>()->default_value(100000000)->value_name("N"),
      "prefix_sum elements (--quick 100003)")(
      "scan-shares",
      po::value<Shares>()->default_value(Shares{{0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1}}, "0,0.05,0.1,0.2,0.3,0.4,0.5,1")
          ->value_name("a,b"),
      "CPU shares of the scan splits (--quick 0,0.3,1)")(
      "scan-rounds", po::value<unsigned>()->default_value(7)->value_name("N"), "interleaved rounds, scan (--quick 2)")(
      "no-handwritten", po::bool_switch(), "parts heat and scan without the hand-written side");
  Bench b({"bench_stencil", "halos and scan (issue 17): heat, Sobel, prefix sum",
           "The heat loop against hand-written OpenCL on each device, the trained plan of the Sobel pipeline and\nthe "
           "heat loop against the oracle static split and the best single device (data pageable and pinned),\nand the "
           "scan of 100M floats split and on each device. Without a GPU run it with POCL_DEVICES=\"pthread pthread\".",
           5, 2},
          argc, argv, own);
  const auto parts = b.vm["parts"].as<Names>();
  for (const auto& p : parts.v)
    if (p != "heat" && p != "plans" && p != "scan") b.fail("--parts", "parts are heat, plans, scan; not '" + p + "'");
  auto with_ends = [](std::vector<double> v) {
    for (double e : {0.0, 1.0})
      if (std::none_of(v.begin(), v.end(), [&](double x) { return std::fabs(x - e) < 1e-9; })) v.push_back(e);
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::size_t heat_side = b.option<std::size_t>("heat-side", 64);
  const std::size_t heat_iterations = b.option<std::size_t>("heat-iterations", 20);
  const float tolerance = b.vm["tolerance"].as<float>();
  const unsigned gpu_rounds = b.option<unsigned>("gpu-rounds", 2), cpu_rounds = b.option<unsigned>("cpu-rounds", 2);
  const double split_share = b.vm["split-share"].as<double>();
  if (!(split_share > 0 && split_share < 1)) b.fail("--split-share", "a CPU share strictly between 0 and 1");
  const std::size_t sobel_side = b.option<std::size_t>("sobel-side", 128);
  const std::size_t plan_iterations = b.option<std::size_t>("plan-heat-iterations", 10);
  const auto plan_shares = with_ends(b.option("plan-shares", Shares{{0, 0.5, 1}}).v);
  const std::size_t scan_elements = b.option<std::size_t>("scan-elements", 100003);
  const auto scan_shares = with_ends(b.option("scan-shares", Shares{{0, 0.3, 1}}).v);
  const unsigned scan_rounds = b.option<unsigned>("scan-rounds", 2);
  if (heat_iterations == 0 || plan_iterations == 0) b.fail("--heat-iterations", "at least one sweep");

  try {
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";  // plans trained here, never mixed with a knowledge base on disk
    std::unique_ptr<sinew::Runtime> rt = make_runtime(b.zero_copy_stand_in, ro);
    const Roles roles = Roles::of(*rt);
    const Roles::Pair p = roles.pair();
    std::unique_ptr<hw::Env> env =
        (wants(parts, "heat") || wants(parts, "scan")) && !b.vm["no-handwritten"].as<bool>() ? std::make_unique<hw::Env>()
                                                                                        : nullptr;
    b.csv(measurement_columns());
    bool failed = false;
    std::ostringstream md;
    md << "Sinew side: " << roles.describe(*rt) << "; knowledge base in memory.  \n";
    if (env) md << "Hand-written side: CPU " << env->cpu_description() << "; GPU " << env->gpu_description() << ".\n";
    md << "\n";

    auto heat_sample = [&](std::size_t iterations) {
      auto s = std::make_unique<sinew::samples::Heat>();
      s->params.iterations = iterations;
      s->params.tolerance = tolerance;
      s->prepare(heat_side);
      return s;
    };
    const double row_bytes = 4.0 * static_cast<double>(heat_side);

    // ----- 1. the heat loop against hand-written OpenCL -----
    if (wants(parts, "heat") && !b.stop()) {
      auto heat = heat_sample(heat_iterations);
      md << "### Heat loop against hand-written OpenCL\n\n"
         << heat_side << " x " << heat_side << " floats, " << heat_iterations << " sweeps, tolerance " << tolerance
         << (tolerance == 0 ? " (every sweep runs; the convergence test still reads the max change after each)" : "")
         << ". Both sides: heat.cl's heat_sweep, a max over the per-row changes, one read of it per iteration. "
            "Hand-written (`bench/handwritten`, hw::HeatLoop): the grid uploaded once into a buffer with wall rows, "
            "then per iteration the sweep, a one-work-group row-max kernel, a blocking 4-byte read, and either a "
            "device copy unew -> u (what Sinew's copy(unew, u) does) or a pointer swap; the grid read back. Per round "
            "each variant runs once, in turn, after one untimed round; ratios are per round, Sinew / hand-written "
            "(goal <= 1.03): median (min–max, IQR).\n\n";
      Table t({"device", "rounds", "Sinew ms", "hand-written copy ms", "hand-written swap ms", "Sinew / copy",
               "Sinew / swap", "check"});
      std::unique_ptr<hw::HeatLoop> hand = env ? std::make_unique<hw::HeatLoop>(*env, *heat) : nullptr;
      struct Side {
        const char* name;
        bool gpu;
        std::size_t device;
        unsigned rounds;
      };
      for (const Side& side : {Side{"gpu", true, p.gpu, gpu_rounds}, Side{"cpu", false, p.cpu, cpu_rounds}}) {
        if (b.stop() || (side.gpu ? !p.has_gpu : !p.has_cpu)) continue;
        if (!side.gpu && env && !env->has_cpu()) continue;
        std::vector<Job> jobs{sinew_job(*rt, *heat, on_device(side.device))};
        const bool swap = hand && hand->can_swap(side.gpu);
        if (hand) jobs.push_back(hand->job(side.gpu, false));
        if (swap) jobs.push_back(hand->job(side.gpu, true));
        b.progress(std::string("heat on the ") + side.name + ": " + std::to_string(side.rounds) + " rounds");
        const Interleaved r = interleave(jobs, side.rounds, [&](unsigned i, const std::vector<double>& ms) {
          const char* names[] = {"sinew", "handwritten-copy", "handwritten-swap"};
          for (std::size_t k = 0; k < ms.size(); ++k)
            b.csv().append(kv({"case", "heat", "size", std::to_string(heat_side), "impl", names[k], "variant",
                               std::string(side.name) + " round " + std::to_string(i), "median_ms", num(ms[k]),
                               "check", "OK"}));
        });
        failed = failed || r.check != "OK";
        auto med = [&](std::size_t k) { return k < r.ms.size() && !r.ms[k].empty() ? fmt("%.3f", median(r.ms[k])) : "-"; };
        auto rat = [&](std::size_t k) {
          return k < r.ms.size() && !r.ms[k].empty() ? spread(ratios(r.ms[0], r.ms[k])) : std::string("-");
        };
        t.add({side.name + std::string(" `") + rt->devices().at(side.device).id() + "`",
               std::to_string(r.ms[0].size()), med(0), med(1), swap ? med(2) : "(no swap: row not aligned)", rat(1),
               swap ? rat(2) : "-", r.check});
      }
      md << t.str() << "\n";

      // The CPU+GPU split: what its halo exchanges move per iteration.
      if (p.two && !b.stop()) {
        sinew::Report last;
        const auto cfg = make_plan(roles, split_share);
        const Stats m = Bench::stats(b.measure(
            kv({"case", "heat", "size", std::to_string(heat_side), "impl", "sinew", "variant", "split",
                "cpu_share", num(split_share)}),
            sinew_job(*rt, *heat, with_config(cfg), &last), b.timing()));
        failed = failed || !m.ok();
        std::vector<std::string> header{"plan", "median ms", "check"};
        header.insert(header.end(), kExchangeHeader.begin(), kExchangeHeader.end());
        Table e(header);
        std::vector<std::string> row{cfg.str(), fmt("%.3f", m.median_ms), m.check};
        const auto cells = exchange_cells(exchanges_of(last, row_bytes));
        row.insert(row.end(), cells.begin(), cells.end());
        e.add(row);
        md << "CPU+GPU split of the same loop (CPU share " << pct(split_share)
           << "): Report::exchanges per iteration; the halo is one row (" << fmt("%.0f", row_bytes)
           << " bytes) each way across each boundary between working partitions.\n\n"
           << e.str() << "\n";
      }
    }

    // ----- 2. trained plan against the oracle static split and the best single device -----
    Table plans({"workload", "data", "trained plan", "trained ms", "training runs", "training s", "oracle plan",
                 "oracle ms", "best single", "single ms", "oracle / trained", "single / trained"});
    std::vector<std::string> exch_header{"workload", "data", "trained plan"};
    exch_header.insert(exch_header.end(), kExchangeHeader.begin(), kExchangeHeader.end());
    Table trained_exchanges(exch_header);
    std::ostringstream sweeps;
    if (wants(parts, "plans") && p.two) {
      sinew::samples::Sobel sobel;
      sobel.prepare(sobel_side);
      auto heat = heat_sample(plan_iterations);
      struct Workload {
        std::string name, label;
        sinew::samples::Sample* s;
        double halo_bytes;
      };
      for (const Workload& w :
           {Workload{"sobel", std::to_string(sobel_side) + "² uchar", &sobel, double(sobel_side)},
            Workload{"heat", std::to_string(heat_side) + "² float, " + std::to_string(plan_iterations) + " sweeps",
                     heat.get(), row_bytes}})
        for (const bool pinned : {false, true}) {
          if (b.stop()) break;
          const std::string data = pinned ? "pinned" : "pageable";
          b.progress(w.name + ", data " + data + ": oracle sweep");
          PinnedCopies copies(*rt);
          PinnedCopies* pc = pinned ? &copies : nullptr;
          SweepSpec spec;
          spec.shares = plan_shares;
          Table st({"cpu", "median ms", "IQR ms", "runs", "note"});
          const auto points = sweep_splits(
              roles, spec, kNaN,
              [&](const SweepPoint& pt, double give_up_ms) {
                Timing t = b.timing();
                t.give_up_ms = give_up_ms;
                return Bench::stats(
                    b.measure(kv({"case", w.name, "size", std::to_string(w.s->size()), "impl", "sinew", "variant",
                                  "oracle-" + data, "cpu_share", num(pt.cpu_share)}),
                              sinew_job(*rt, *w.s, with_config(pt.config), nullptr, pc), t));
              },
              [&](const SweepPoint&) {}, [&] { return b.stop(); });
          const SweepPoint* oracle = best_point(points);
          const SweepPoint* single = nullptr;
          for (const auto& pt : points) {
            st.add({pct(pt.cpu_share), pt.skipped ? "-" : fmt("%.3f", pt.m.median_ms),
                    pt.skipped ? "-" : fmt("%.3f", pt.m.iqr_ms), std::to_string(pt.m.runs),
                    pt.note.empty() ? pt.m.check : pt.note});
            const bool end = pt.cpu_share < 1e-9 || pt.cpu_share > 1 - 1e-9;
            if (end && !pt.skipped && pt.m.ok() && (!single || pt.m.median_ms < single->m.median_ms)) single = &pt;
          }
          sweeps << "Oracle sweep, " << w.name << " (" << w.label << "), data " << data << ":\n\n" << st.str() << "\n";
          if (b.stop()) break;
          b.progress(w.name + ", data " + data + ": training");
          const Planned tp = time_planned(*rt, *w.s, /*train=*/true, b.timing(), pc);
          failed = failed || !tp.m.ok() || !oracle;
          b.record(kv({"case", w.name, "size", std::to_string(w.s->size()), "impl", "sinew", "variant",
                       "trained-" + data}),
                   [&] {
                     Csv::Row r;
                     Bench::put(r, tp.m);
                     r["note"] = tp.last.config.str() + "; training runs " +
                                 std::to_string(tp.first.training_executions);
                     return r;
                   }());
          auto ratio = [&](const SweepPoint* x) {
            return x && tp.m.ok() ? fmt("%.3f", x->m.median_ms / tp.m.median_ms) : std::string("-");
          };
          plans.add({w.name + " " + w.label, data, tp.m.ok() ? tp.last.config.str() : tp.m.check,
                     fmt("%.3f", tp.m.median_ms), std::to_string(tp.first.training_executions),
                     fmt("%.1f", tp.first.training_seconds), oracle ? oracle->config.str() : "-",
                     oracle ? fmt("%.3f", oracle->m.median_ms) : "-",
                     single ? (single->cpu_share > 0.5 ? "cpu" : "gpu") : "-",
                     single ? fmt("%.3f", single->m.median_ms) : "-", ratio(oracle), ratio(single)});
          if (tp.m.ok()) {
            std::vector<std::string> row{w.name, data, tp.last.config.str()};
            const auto cells = exchange_cells(exchanges_of(tp.last, w.halo_bytes));
            row.insert(row.end(), cells.begin(), cells.end());
            trained_exchanges.add(row);
          }
        }
      md << "### Trained plan against the oracle static split and the best single device\n\n"
         << "Per workload and data placement (pinned: the sample's arrays copied into Runtime::pinned memory, "
            "untimed): the oracle sweeps static CPU+GPU splits (CPU shares "
         << join_shares(plan_shares)
         << "; points past the fastest and 3x slower than the best are skipped), the best of its two ends is the "
            "best single device; the trained plan is RunOptions{.train = true} once (knowledge base in memory), "
            "then timed runs of that plan with the balancer off. Goals: oracle / trained >= 0.95, single / trained "
            ">= 0.98.\n\n"
         << plans.str() << "\n";
      if (!trained_exchanges.empty())
        md << "Halo exchanges of the trained plans, per iteration (Sobel: per run; its halo row is "
           << sobel_side << " bytes):\n\n"
           << trained_exchanges.str() << "\n";
      md << sweeps.str();
    } else if (wants(parts, "plans")) {
      md << "### Trained plan against the oracle static split\n\nSkipped: no CPU+GPU pair.\n\n";
    }

    // ----- 3. scan -----
    if (wants(parts, "scan") && !b.stop()) {
      sinew::samples::PrefixSum scan;
      scan.prepare(scan_elements);
      std::unique_ptr<hw::Scan> hand = env ? std::make_unique<hw::Scan>(*env, scan) : nullptr;
      // Sinew at each share, then the hand-written scan on each device, one run each per round.
      std::vector<std::string> names;
      std::vector<Job> jobs;
      for (double share : p.two ? scan_shares : std::vector<double>{p.has_gpu ? 0.0 : 1.0}) {
        const auto o = share <= 0 ? on_device(p.gpu) : share >= 1 ? on_device(p.cpu) : with_config(make_plan(roles, share));
        names.push_back(share <= 0 ? "gpu alone" : share >= 1 ? "cpu alone" : "cpu " + pct(share));
        jobs.push_back(sinew_job(*rt, scan, o));
      }
      const std::size_t sinew_points = jobs.size();
      if (hand && p.has_gpu) names.push_back("hand-written, gpu"), jobs.push_back(hand->job(true));
      if (hand && p.has_cpu && env->has_cpu()) names.push_back("hand-written, cpu"), jobs.push_back(hand->job(false));
      b.progress("scan: " + std::to_string(jobs.size()) + " variants, " + std::to_string(scan_rounds) + " rounds");
      const Interleaved r = interleave(jobs, scan_rounds, [&](unsigned i, const std::vector<double>& ms) {
        for (std::size_t k = 0; k < ms.size(); ++k)
          b.csv().append(kv({"case", "prefix_sum", "size", std::to_string(scan_elements), "impl",
                             k < sinew_points ? "sinew" : "handwritten", "variant",
                             names[k] + " round " + std::to_string(i), "median_ms", num(ms[k]), "check", "OK"}));
      });
      failed = failed || r.check != "OK";
      // The best single device and the best hand-written time, per round medians.
      auto med = [&](std::size_t k) { return k < r.ms.size() && !r.ms[k].empty() ? median(r.ms[k]) : kNaN; };
      std::size_t single = SIZE_MAX, hand_best = SIZE_MAX;
      for (std::size_t k = 0; k < jobs.size(); ++k) {
        const bool one_device = k >= sinew_points ? false : names[k].ends_with("alone");
        std::size_t& best = k < sinew_points ? single : hand_best;
        if ((k >= sinew_points || one_device) && (best == SIZE_MAX || med(k) < med(best))) best = k;
      }
      Table t({"variant", "rounds", "median ms", "GB/s", "vs best single device", "vs best hand-written", "check"});
      auto rat = [&](std::size_t base, std::size_t k) {
        return base == SIZE_MAX || r.ms[k].empty() ? std::string("-") : spread(ratios(r.ms[base], r.ms[k]));
      };
      for (std::size_t k = 0; k < jobs.size(); ++k)
        t.add({names[k], std::to_string(r.ms[k].size()), fmt("%.3f", med(k)),
               fmt("%.2f", 8.0 * double(scan_elements) / med(k) / 1e6), rat(single, k), rat(hand_best, k), r.check});
      md << "### Scan (prefix_sum), " << count_label(scan_elements)
         << " floats, inclusive sum, data pageable\n\nSinew's CPU+GPU splits and each device alone "
            "(sinew::scan: each partition scans its slice, the carries meet on the host, a second pass adds them), "
            "and a hand-written OpenCL scan with the same kernels on each device (`bench/handwritten`, hw::Scan: "
            "kernels/scan.cl's blocks and adds level by level; the GPU reads and writes the pageable arrays with one "
            "write and one read, the CPU works on them in place). Per round each variant runs once, in turn, after "
            "one untimed round. GB/s counts x read and y written. The ratio columns are per round, the best one's "
            "time / this one's (above 1: this one is faster): median (min–max, IQR).\n\n"
         << t.str() << "\n";
    }
    return b.finish(b.header(rt.get()) + md.str(), failed);  // the header says when it finished
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
