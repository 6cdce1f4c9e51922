// bench/bench_resident.cpp — issue 41's must-hold for resident arrays: `runs` runs of saxpy
// (samples/kernels/saxpy.cl) on n floats kept on one device between runs (Runtime::array),
// against the same kernel launched `runs` times by hand on a buffer resident on the device
// (bench/handwritten/iterative.hpp: ResidentSaxpyLoop). Sinew runs each run with
// Runtime::execute on the device alone (the first GPU, else the first device: at its best known
// level, or at overlap N with --sinew-overlap N), its arrays made
// with ArrayOptions::keep_last_good off and on (on: a slice read and written that only the
// device holds is copied on the device before each run), and, keep_last_good off, with every run
// submitted (Runtime::run) before the first is waited for (today a run waits on the host for the
// one before it that shares its arrays). The hand-written loop waits for its
// queue once at the end and, for comparison, after every launch (as Sinew's execute() does).
// Printed: each side's time for the runs, the ratio, the bytes Sinew moved per run between the
// host and the device (and within the device) over every run after the arrays' first (the timed
// runs and the warm-up: a measurement's total is no run's), and the plan Sinew ran. Goal (issue
// 41): within 1.1x of hand-written, no bytes moved between runs; with keep_last_good on, y's
// bytes copied within the device per run (docs/decisions/145).
#include "handwritten/iterative.hpp"
#include "sinew_side.hpp"

#include "common/kernels.hpp"

#include <future>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

using namespace bench;

namespace {

// Sinew's side: x = i % 3 and y = i % 7 in resident arrays, `runs` executions of y = x + y each
// timed run; the bytes moved summed over every run after the arrays' first, and those runs counted.
struct ResidentSaxpy {
  sinew::Vector<cl_float> x = sinew::vector<cl_float>().name("x"), y = sinew::vector<cl_float>().name("y");
  sinew::Node tree;
  sinew::Array<cl_float> x_array, y_array;
  std::size_t n, executions = 0;  // every run, the arrays' first included
  std::uint64_t host_bytes = 0, device_bytes = 0;
  sinew::Report last;  // the latest run's (--verbose prints it)

  ResidentSaxpy(sinew::Runtime& rt, std::size_t count, bool keep_last_good) : n(count) {
    tree = sinew::map(sinew::samples::kernel("saxpy.cl", "saxpy")
                          .args(sinew::in(x), sinew::inout(y), sinew::scalar(cl_float(1)), sinew::count(y)));
    x_array = rt.array<cl_float>(n, {.keep_last_good = keep_last_good});
    y_array = rt.array<cl_float>(n, {.keep_last_good = keep_last_good});
    auto xs = x_array.write();
    auto ys = y_array.write();
    for (std::size_t i = 0; i < n; ++i) {
      xs[i] = static_cast<cl_float>(i % 3);
      ys[i] = static_cast<cl_float>(i % 7);
    }
  }
  // Bytes per run over the runs after the arrays' first.
  std::uint64_t per_run(std::uint64_t bytes) const { return executions > 1 ? bytes / (executions - 1) : 0; }
  // One run's report counted.
  void count(sinew::Report report) {
    last = std::move(report);
    if (executions++ == 0) return;
    host_bytes += last.copies.host_bytes();
    device_bytes += last.copies.device.bytes;
  }
  // `runs` runs, each waited for (Runtime::execute), or, `submitted`, every run submitted
  // (Runtime::run) before the first is waited for.
  Job job(sinew::Runtime& rt, std::size_t runs, const sinew::RunOptions& o, bool submitted = false) {
    return {[] {},
            [this, &rt, runs, o, submitted] {
              if (!submitted) {
                for (std::size_t r = 0; r < runs; ++r) count(rt.execute(tree, {{x, x_array}, {y, y_array}}, o));
                return kNaN;
              }
              std::vector<std::future<sinew::Report>> pending;
              pending.reserve(runs);
              for (std::size_t r = 0; r < runs; ++r) pending.push_back(rt.run(tree, {{x, x_array}, {y, y_array}}, o));
              for (auto& f : pending) count(f.get());
              return kNaN;
            },
            [this] {
              const auto got = y_array.host();  // untimed: the check
              for (std::size_t i = 0; i < n; ++i)
                if (got[i] != static_cast<cl_float>(i % 7 + executions * (i % 3))) return "y differs at " + std::to_string(i);
              return std::string("OK");
            }};
  }
};

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("sizes", po::value<Counts>()->default_value(Counts{{50000000}}, "50M")->value_name("n,..."),
                    "floats per array (--quick 65536)")(
      "runs", po::value<std::size_t>()->default_value(100), "saxpy runs per measurement (--quick 10)")(
      "sinew-overlap", po::value<unsigned>()->default_value(0),
      "Sinew's side at this overlap level (queues on the device); 0: the pinned device's best known level "
      "(RunOptions::device)");
  Bench b({"bench_resident",
           "resident arrays (issue 41): saxpy run again and again on data kept on the device, against hand-written",
           "Runs of saxpy on resident arrays (Runtime::array) on one device against the same kernel launched by hand\n"
           "on a resident buffer; the bytes Sinew moved between runs.",
           5, 2},
          argc, argv, own);
  const auto sizes = b.option("sizes", Counts{{65536}}).v;
  const std::size_t runs = b.option("runs", std::size_t{10});
  if (runs == 0) b.fail("--runs", "at least one run");
  try {
    sinew::RuntimeOptions ro;
    ro.kb_path = ":memory:";
    std::unique_ptr<sinew::Runtime> rt = make_runtime(b.zero_copy_stand_in, ro);
    const Roles::Pair p = Roles::of(*rt).pair();
    const sinew::RunOptions on =
        on_device_at(p.has_gpu ? p.gpu : 0, rt->devices().size(), b.option("sinew-overlap", 0u));
    bool failed = false;
    auto timed = [&](const std::string& what, const Job& job) {
      const Stats s = measure(job, b.timing());
      b.progress(what + ": " + fmt("%.3f", s.median_ms) + " ms");
      b.csv().append(kv({"case", what, "median_ms", num(s.median_ms), "check", s.check}));
      failed = failed || !s.ok();
      return std::pair<double, std::string>(s.median_ms, s.check);
    };
    Table table({"floats", "Sinew, keep_last_good off (ms)", "Sinew, keep_last_good on (ms)",
                 "Sinew, runs submitted then one wait (ms)", "hand-written, one wait (ms)",
                 "hand-written, a wait per run (ms)", "Sinew off / hand-written one wait",
                 "Sinew submitted / hand-written one wait",
                 "bytes host<->device per run after the first (off, on)", "bytes within the device per run (off, on)",
                 "Sinew's plan", "check"});
    for (std::size_t n : sizes) {
      if (b.stop()) break;
      const std::string label = count_label(n);
      ResidentSaxpy off(*rt, n, false), on_keep(*rt, n, true), submitted(*rt, n, false);
      const auto [off_ms, c1] = timed(label + " sinew keep_last_good off", off.job(*rt, runs, on));
      const auto [keep_ms, c2] = timed(label + " sinew keep_last_good on", on_keep.job(*rt, runs, on));
      const auto [submitted_ms, c5] =
          timed(label + " sinew submitted then one wait", submitted.job(*rt, runs, on, /*submitted=*/true));
      if (b.verbose)
        std::cerr << "keep_last_good off, the last run: " << off.last.str()
                  << "keep_last_good on, the last run: " << on_keep.last.str();
      hw::ResidentSaxpyLoop hand(n);
      const auto [hand_ms, c3] = timed(label + " handwritten one wait", hand.job(runs, false));
      const auto [hand_each_ms, c4] = timed(label + " handwritten wait per run", hand.job(runs, true));
      const std::string check = c1 != "OK" ? c1 : c2 != "OK" ? c2 : c3 != "OK" ? c3 : c4 != "OK" ? c4 : c5;
      table.add({label, fmt("%.3f", off_ms), fmt("%.3f", keep_ms), fmt("%.3f", submitted_ms), fmt("%.3f", hand_ms),
                 fmt("%.3f", hand_each_ms), fmt("%.3f", off_ms / hand_ms), fmt("%.3f", submitted_ms / hand_ms),
                 std::to_string(off.per_run(off.host_bytes)) + ", " + std::to_string(on_keep.per_run(on_keep.host_bytes)),
                 std::to_string(off.per_run(off.device_bytes)) + ", " + std::to_string(on_keep.per_run(on_keep.device_bytes)),
                 off.last.config.str(), check});
    }
    std::ostringstream md;
    md << "One device: runtime device " << (p.has_gpu ? p.gpu : 0) << "; the hand-written side on the first GPU "
       << "(else the first device). Each time is the median of one measurement's " << runs << " runs.\n\n"
       << table.str() << "\n";
    return b.finish(b.header(rt.get()) + md.str(), failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
