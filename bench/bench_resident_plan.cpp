// bench/bench_resident_plan.cpp — issue 41's "a plan is judged with the transfers it would cause":
// saxpy (samples/kernels/saxpy.cl) on n floats, trained by a fresh knowledge base twice, once
// bound to host memory and once to resident arrays (Runtime::array), and the resident-trained plan
// run against each device alone on the same resident arrays. The resident plan is trained on
// resident data (docs/decisions/149) and kept apart from the host-bound one (docs/decisions/148).
// Printed per size: each trained plan and its planned run's time (the balancer off), each device
// alone on resident data, the best device alone over the resident-trained plan (goal: >= 0.98),
// and the bytes the resident plan's runs and its training's timed runs moved between the host and
// the devices. The runs' results are not checked here: test/pocl/resident_planning_test.cpp checks
// them.
#include "sinew_side.hpp"

#include "common/kernels.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

using namespace bench;

namespace {

struct Saxpy {
  sinew::Vector<cl_float> x = sinew::vector<cl_float>().name("x"), y = sinew::vector<cl_float>().name("y");
  sinew::Node tree = sinew::map(sinew::samples::kernel("saxpy.cl", "saxpy")
                                    .args(sinew::in(x), sinew::inout(y), sinew::scalar(cl_float(1)),
                                          sinew::count(y)));
};

// `runs` planned executions of `tree` over `bindings` as one timed run; the bytes each moved
// between the host and the devices summed into `moved`.
Job planned(sinew::Runtime& rt, const Saxpy& s, std::function<std::vector<sinew::Binding>()> bind,
            const sinew::RunOptions& o, std::uint64_t& moved) {
  return {[] {},
          [&rt, &s, bind, o, &moved] {
            moved += rt.execute(s.tree, bind(), o).copies.host_bytes();
            return kNaN;
          },
          [] { return std::string("OK"); }};
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("sizes", po::value<Counts>()->default_value(Counts{{50000000}}, "50M")->value_name("n,..."),
                    "floats per array (--quick 65536)");
  Bench b({"bench_resident_plan",
           "resident arrays (issue 41): the plan trained for resident data against each device alone",
           "saxpy trained on host-bound and on resident data by a fresh knowledge base; the resident plan against\n"
           "each device alone on the same resident arrays.",
           5, 2},
          argc, argv, own);
  const auto sizes = b.option("sizes", Counts{{65536}}).v;
  try {
    Table table({"floats", "host-bound trained plan", "its ms", "resident trained plan", "its ms",
                 "each device alone, resident (ms)", "best alone / resident trained",
                 "bytes moved per resident run", "bytes moved in training's timed runs (host-bound, resident)"});
    bool failed = false;
    // One knowledge base in memory, empty at the start: each size is an input it has not seen.
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";
    std::unique_ptr<sinew::Runtime> rt = make_runtime(b.zero_copy_stand_in, ro);
    for (std::size_t n : sizes) {
      if (b.stop()) break;
      const std::string label = count_label(n);
      Saxpy s;
      std::vector<cl_float> hx(n), hy(n);
      for (std::size_t i = 0; i < n; ++i) {
        hx[i] = static_cast<cl_float>(i % 3);
        hy[i] = static_cast<cl_float>(i % 7);
      }
      auto ax = rt->array<cl_float>(hx), ay = rt->array<cl_float>(hy);
      auto host = [&] { return std::vector<sinew::Binding>{{s.x, hx}, {s.y, hy}}; };
      auto resident = [&] { return std::vector<sinew::Binding>{{s.x, ax}, {s.y, ay}}; };
      const sinew::RunOptions no_balance{.balance = false};
      const sinew::Report host_trained = rt->execute(s.tree, host(), no_balance);
      const sinew::Report resident_trained = rt->execute(s.tree, resident(), no_balance);
      auto timed = [&](const std::string& what, const Job& job) {
        const Stats st = measure(job, b.timing());
        b.progress(label + " " + what + ": " + fmt("%.3f", st.median_ms) + " ms");
        b.csv().append(kv({"case", label + " " + what, "median_ms", num(st.median_ms), "check", st.check}));
        failed = failed || !st.ok();
        return st.median_ms;
      };
      std::uint64_t host_moved = 0, resident_moved = 0, alone_moved = 0;
      const double host_ms = timed("host-bound trained", planned(*rt, s, host, no_balance, host_moved));
      const std::size_t before = resident_moved;
      const Stats counted = measure(planned(*rt, s, resident, no_balance, resident_moved), b.timing());
      const double resident_ms = counted.median_ms;
      b.csv().append(kv({"case", label + " resident trained", "median_ms", num(resident_ms), "check", counted.check}));
      const std::size_t resident_runs = std::max<std::size_t>(1, b.timing().warmup + counted.runs);
      std::ostringstream alone;
      double best_alone = kNaN;
      for (const auto& d : rt->devices()) {
        const double ms = timed(d.id() + " alone, resident", planned(*rt, s, resident, on_device(d.index), alone_moved));
        alone << (alone.tellp() ? ", " : "") << d.id() << " " << fmt("%.3f", ms);
        if (!(best_alone <= ms)) best_alone = ms;
      }
      table.add({label, host_trained.config.str(), fmt("%.3f", host_ms), resident_trained.config.str(),
                 fmt("%.3f", resident_ms), alone.str(), fmt("%.3f", best_alone / resident_ms),
                 std::to_string((resident_moved - before) / resident_runs),
                 std::to_string(host_trained.training_copies.host_bytes()) + ", " +
                     std::to_string(resident_trained.training_copies.host_bytes())});
    }
    std::ostringstream md;
    md << "Each time is the median of one planned run per measurement (the balancer off); a fresh knowledge base "
          "per size.\n\n"
       << table.str() << "\n";
    return b.finish(b.header(rt.get()) + md.str(), failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
