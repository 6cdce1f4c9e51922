// bench/bench_loop.cpp — issue 22's "Loops without overhead": loops written as a new user writes
// them against the same kernels written by hand in OpenCL (bench/handwritten: hw::JacobiLoop,
// hw::NbodyLoop), on the GPU alone, the CPU alone and a CPU+GPU split:
//   1. Jacobi: loop(pipeline(map_reduce(jacobi_sweep, max), copy(unew, u))) over an n x n grid
//      (samples/kernels/jacobi.cl: the sweep reads the whole grid, replicated, no halo), every
//      sweep followed by the loop's test of the max change (tolerance 0: all sweeps run);
//   2. N-Body: the nbody sample's loop(pipeline(nbody_step, copy(newpos, pos))).
// Per variant, Sinew and hand-written run in interleaved rounds (one untimed round first);
// the table gives each side's median and the per-round ratio Sinew / hand-written: median and
// IQR (goal <= 1.02). The split is a given CPU share (--split-share, --nbody-split-share); the
// hand-written side gets exactly the units Sinew's partition gave the CPU (from its Report).
// With each variant, Sinew's own accounting per loop iteration (Report::loop_copies): the
// executor's host copies (to and from the device, within host memory) and the bytes they move,
// copies within a device, and values read back.
#include "handwritten/handwritten.hpp"
#include "sinew_side.hpp"

#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

using namespace bench;

namespace {

std::string spread(const Stats& r) {
  return fmt("%.3f", r.median_ms) + " (IQR " + fmt("%.3f", r.iqr_ms) + ")";
}

// The Jacobi loop as a new user writes it, over a grid initialised like the heat sample's.
struct Jacobi {
  std::size_t n, iterations;
  float alpha = 0.2f, wall = 20.0f, tolerance = 0.0f;
  sinew::Vector<cl_float> u, unew, rowdiff;
  sinew::Result<cl_float> residual = sinew::result<cl_float>("residual");
  sinew::Node tree;
  std::vector<float> initial, grid;
  float last = 0;

  Jacobi(std::size_t side, std::size_t its, float tol) : n(side), iterations(its), tolerance(tol) {
    u = sinew::vector<cl_float>().unit(n).name("u");
    unew = sinew::vector<cl_float>().unit(n).name("unew");
    rowdiff = sinew::vector<cl_float>().name("rowdiff");
    std::size_t group = 1;  // one work-group per row: a power of two dividing n, at most 128
    while (group < 128 && n % (2 * group) == 0) group *= 2;
    auto sweep = sinew::samples::kernel("jacobi.cl", "jacobi_sweep")
                     .args(sinew::whole(u), sinew::out(unew), sinew::out(rowdiff), sinew::local<cl_float>(group),
                           sinew::offset(unew), sinew::scalar(static_cast<cl_uint>(n)), sinew::scalar(alpha),
                           sinew::scalar(wall))
                     .range_of(unew)
                     .dims(2)
                     .elements_per_thread(n / group)
                     .local_size({group, 1});
    const float t = tolerance;
    tree = sinew::loop(sinew::pipeline(sinew::map_reduce(sweep, sinew::reduce::max(rowdiff, residual)),
                                       sinew::copy(unew, u)))
               .times(iterations)
               .until(residual, [t](cl_float r) { return r < t; });
    initial = sinew::samples::reference::hot_disc_plate(n, 5);  // the heat sample's plate
    grid = initial;
  }

  Job sinew_job(sinew::Runtime& rt, hw::JacobiLoop& check, sinew::RunOptions o, sinew::Report* last_report) {
    auto ran = std::make_shared<std::size_t>(0);
    return {[this] { grid = initial; },
            [this, &rt, o, ran, last_report] {
              sinew::Report r = rt.execute(tree, {sinew::Binding(u, grid), sinew::Binding(residual, &last)}, o);
              *ran = r.iterations;
              const double ms = r.wall_ms;
              if (last_report) *last_report = std::move(r);
              return ms;
            },
            [this, &check, ran] { return check.check(grid.data(), *ran, last); }};
  }
};

// What Report::loop_copies says per iteration, as table cells.
std::vector<std::string> copy_cells(const sinew::Report& r) {
  const double it = static_cast<double>(std::max<std::size_t>(1, r.iterations));
  const sinew::Copies& c = r.loop_copies;
  auto per = [&](double v) { return fmt("%.6g", v / it); };
  return {per(static_cast<double>(c.host_copies())), per(static_cast<double>(c.to_device.bytes)),
          per(static_cast<double>(c.to_host.bytes)), per(static_cast<double>(c.host.bytes)),
          per(static_cast<double>(c.device.bytes)), per(static_cast<double>(c.values.count))};
}
const std::vector<std::string> kCopyHeader = {"host copies / it", "B to device / it", "B to host / it",
                                              "B within host / it", "B within device / it", "values read / it"};

// The CPU's units in a run's partitions (a split's, for the hand-written side).
std::size_t cpu_units(const sinew::Report& r, const Roles& roles) {
  std::size_t units = 0;
  for (const auto& p : r.partitions)
    if (std::find(roles.cpus.begin(), roles.cpus.end(), p.device) != roles.cpus.end()) units += p.units;
  return units;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("jacobi-sides", po::value<Counts>()->default_value(Counts{{1024, 2048}}, "1024,2048")->value_name("a,b"),
                    "Jacobi grid sides (--quick 64)")(
      "jacobi-iterations", po::value<std::size_t>()->default_value(500)->value_name("N"), "Jacobi sweeps per run (--quick 20)")(
      "tolerance", po::value<float>()->default_value(0.0f, "0")->value_name("X"),
      "Jacobi convergence tolerance; 0: every sweep runs (the test still runs after each)")(
      "nbody-bodies", po::value<Counts>()->default_value(Counts{{16384, 65536}}, "16384,65536")->value_name("a,b"),
      "N-Body sizes (--quick 512)")(
      "nbody-steps", po::value<std::size_t>()->default_value(20)->value_name("N"), "N-Body steps per run (--quick 3)")(
      "nbody-cpu-max", po::value<std::size_t>()->default_value(16384)->value_name("N"),
      "N-Body on the CPU alone only up to this many bodies (64K bodies take seconds per step there)")(
      "split-share", po::value<double>()->default_value(0.1, "0.1")->value_name("X"), "CPU share of the Jacobi split")(
      "nbody-split-share", po::value<double>()->default_value(0.02, "0.02")->value_name("X"),
      "CPU share of the N-Body split")(
      "gpu-rounds", po::value<unsigned>()->default_value(9)->value_name("N"), "interleaved rounds on the GPU alone (--quick 2)")(
      "cpu-rounds", po::value<unsigned>()->default_value(3)->value_name("N"),
      "interleaved rounds on the CPU alone and split (--quick 2)");
  Bench b({"bench_loop", "loops against hand-written OpenCL (issue 22): Jacobi and N-Body",
           "A Jacobi loop reading its grid whole and the N-Body loop, on the GPU alone, the CPU alone and split,\n"
           "against the same kernels written by hand in OpenCL, in interleaved rounds; with Sinew's own count of\n"
           "what it copies per iteration. Without a GPU run it with POCL_DEVICES=\"pthread pthread\".",
           5, 2},
          argc, argv, own);
  const auto sides = b.option("jacobi-sides", Counts{{64}}).v;
  const std::size_t iterations = b.option<std::size_t>("jacobi-iterations", 20);
  const float tolerance = b.vm["tolerance"].as<float>();
  const auto bodies = b.option("nbody-bodies", Counts{{512}}).v;
  const std::size_t steps = b.option<std::size_t>("nbody-steps", 3);
  const std::size_t nbody_cpu_max = b.vm["nbody-cpu-max"].as<std::size_t>();
  const double split = b.vm["split-share"].as<double>(), nbody_split = b.vm["nbody-split-share"].as<double>();
  const unsigned gpu_rounds = b.option<unsigned>("gpu-rounds", 2), cpu_rounds = b.option<unsigned>("cpu-rounds", 2);
  if (!(split > 0 && split < 1)) b.fail("--split-share", "a CPU share strictly between 0 and 1");
  if (!(nbody_split > 0 && nbody_split < 1)) b.fail("--nbody-split-share", "a CPU share strictly between 0 and 1");
  if (iterations == 0 || steps == 0) b.fail("--jacobi-iterations", "at least one iteration");
  for (auto n : sides)
    if (n < 3 || n > 65535) b.fail("--jacobi-sides", "sides from 3 to 65535");

  try {
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";
    std::unique_ptr<sinew::Runtime> rt = make_runtime(b.zero_copy_stand_in, ro);
    const Roles roles = Roles::of(*rt);
    const Roles::Pair p = roles.pair();
    hw::Env env;
    b.csv(measurement_columns());
    bool failed = false;
    std::ostringstream md;
    md << "Sinew side: " << roles.describe(*rt) << "; plans given (no training).  \n"
       << "Hand-written side: CPU " << env.cpu_description() << "; GPU " << env.gpu_description() << ".\n\n"
       << "Per variant, one untimed round, then per round one run of each side in turn. Ratios are per round, "
          "Sinew / hand-written (goal <= 1.02): median (IQR). The copies columns are Sinew's own accounting "
          "(Report::loop_copies) per loop iteration: host copies count every copy to or from a discrete device "
          "and every copy a zero-copy CPU device makes in host memory; values are reduction results read back.\n\n";

    Table t({"loop", "size", "variant", "rounds", "Sinew ms", "hand-written ms", "Sinew / hand-written", "check"});
    std::vector<std::string> ch{"loop", "size", "variant"};
    ch.insert(ch.end(), kCopyHeader.begin(), kCopyHeader.end());
    Table copies(ch);

    struct Variant {
      std::string name;
      sinew::RunOptions options;
      unsigned rounds;
      bool split;
    };
    auto variants = [&](double share, bool cpu_alone) {
      std::vector<Variant> v;
      if (p.has_gpu) v.push_back({"gpu alone", on_device(p.gpu), gpu_rounds, false});
      if (p.has_cpu && cpu_alone && env.has_cpu()) v.push_back({"cpu alone", on_device(p.cpu), cpu_rounds, false});
      if (p.two && env.has_cpu())
        v.push_back({"split, cpu " + pct(share), with_config(make_plan(roles, share)), cpu_rounds, true});
      return v;
    };
    // Sinew's job and a function making the hand-written one for the CPU's units of Sinew's run.
    auto compare = [&](const std::string& loop, const std::string& size, const Variant& v, Job sinew,
                       sinew::Report& last, const std::function<Job(std::size_t cpu_units)>& hand, std::size_t units) {
      if (b.stop()) return;
      b.progress(loop + " " + size + ", " + v.name + ": " + std::to_string(v.rounds) + " rounds");
      // One run first: it says how many units Sinew gave the CPU.
      sinew.reset();
      sinew.run();
      const std::size_t cpu = v.split ? cpu_units(last, roles) : v.name == "cpu alone" ? units : 0;
      const Interleaved r = interleave({sinew, hand(cpu)}, v.rounds, [&](unsigned i, const std::vector<double>& ms) {
        const char* impl[] = {"sinew", "handwritten"};
        for (std::size_t k = 0; k < ms.size(); ++k)
          b.csv().append(kv({"case", loop, "size", size, "impl", impl[k], "variant",
                             v.name + " round " + std::to_string(i), "cpu_share",
                             num(static_cast<double>(cpu) / static_cast<double>(units)), "median_ms", num(ms[k]),
                             "check", "OK"}));
      });
      failed = failed || r.check != "OK";
      auto med = [&](std::size_t k) { return k < r.ms.size() && !r.ms[k].empty() ? fmt("%.3f", median(r.ms[k])) : "-"; };
      t.add({loop, size, v.name + (v.split ? " (" + std::to_string(cpu) + " units on the CPU)" : ""),
             std::to_string(r.ms.empty() ? 0 : r.ms[0].size()), med(0), med(1),
             r.ms.size() > 1 && !r.ms[1].empty() ? spread(ratios(r.ms[0], r.ms[1])) : "-", r.check});
      std::vector<std::string> row{loop, size, v.name};
      const auto cells = copy_cells(last);
      row.insert(row.end(), cells.begin(), cells.end());
      copies.add(row);
    };

    for (std::size_t n : sides) {
      if (b.stop()) break;
      b.progress("jacobi " + std::to_string(n) + "²: preparing");
      Jacobi j(n, iterations, tolerance);
      hw::JacobiLoop hand(env, n, iterations, j.alpha, j.wall, tolerance);
      for (const Variant& v : variants(split, true)) {
        sinew::Report last;
        compare("jacobi", std::to_string(n) + "²", v, j.sinew_job(*rt, hand, v.options, &last), last,
                [&](std::size_t cpu) { return hand.job(cpu, j.grid.data(), j.initial); }, n);
      }
    }
    for (std::size_t n : bodies) {
      if (b.stop()) break;
      sinew::samples::Nbody s;
      s.params.steps = steps;
      s.prepare(n);
      hw::NbodyLoop hand(env, s);
      for (const Variant& v : variants(nbody_split, n <= nbody_cpu_max)) {
        sinew::Report last;
        compare("nbody", count_label(n), v, sinew_job(*rt, s, v.options, &last), last,
                [&](std::size_t cpu) { return hand.job(cpu); }, n);
      }
    }
    md << "### Jacobi (" << iterations << " sweeps, tolerance " << tolerance << ") and N-Body (" << steps
       << " steps)\n\n"
       << t.str() << "\n### Sinew's copies per loop iteration (its last run of each variant)\n\n"
       << copies.str() << "\n";
    return b.finish(b.header(rt.get()) + md.str(), failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
