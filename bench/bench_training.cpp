// bench/bench_training.cpp — what a user's first run of a tree costs: per sample and size, a
// fresh knowledge base trains the tree (forced training, the runtime's training settings), and
// the table gives the training's wall time and executions, what ended it (its executions, its time
// budget, or neither) and its budget, then the trained plan's run time (the median of --runs
// planned runs after it). The bound each row is held to: training seconds <= max(2 s, 50 x the
// trained plan's run time) plus program builds (TrainingSettings::time_budget_s,
// TrainingTuning::budget_best_plan_times); the builds (Report::training_build_seconds) include
// what each plan's first run took beyond its second, where a driver compiles kernels at their
// first launch of a work-group shape (docs/decisions/158). With --build-first (the default) each device alone runs
// the sample once before the training, on a runtime of its own, so that the training finds the
// device's programs in the program cache: its seconds are then the training's own, builds aside
// (the time budget's clock leaves out the untimed first runs, which build the rest).
#include "sinew_side.hpp"

#include "common/descriptors.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>

using namespace bench;

namespace {

struct Size {
  std::string name;  // small, standard, large
  std::size_t value = 0;
};

std::vector<Size> sizes_of(const sinew::samples::Sample& s, const std::vector<std::string>& wanted) {
  const sinew::samples::Sizes all = s.sizes();
  std::vector<Size> out;
  for (const auto& w : wanted) {
    if (w == "small") out.push_back({w, all.small});
    else if (w == "standard") out.push_back({w, all.standard});
    else if (w == "large") out.push_back({w, all.large});
  }
  return out;
}

// A knowledge base that starts empty and is removed when done.
fs::path fresh_kb(const std::string& sample, const std::string& size) {
  const fs::path path = fs::temp_directory_path() /
                        ("bench_training-" + std::to_string(::getpid()) + "-" + sample + "-" + size + ".sqlite");
  remove_kb(path);
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("samples",
                    po::value<Names>()->default_value(
                        Names{{"filter_pipeline", "fft", "nbody", "saxpy", "segmentation", "heat", "sobel",
                               "mergesort", "mandelbrot", "matmul"}},
                        "the paper's five, heat, sobel, mergesort, mandelbrot, matmul")
                        ->value_name("a,b"),
                    "samples (sinew::samples::names())")(
      "sizes", po::value<Names>()->default_value(Names{{"small", "standard", "large"}}, "small,standard,large")->value_name("a,b"),
      "each sample's sizes (--quick small)")(
      "runs", po::value<unsigned>()->default_value(5)->value_name("N"), "planned runs after the training (--quick 3)")(
      "build-first", po::value<bool>()->default_value(true)->value_name("B"),
      "run each device alone once before the training, so that its programs are built (1/0)");
  Bench b({"bench_training", "training: wall time, executions and what ended it, per sample and size",
           "A first run of each sample and size on a fresh knowledge base: the training's wall time and\nexecutions, "
           "what ended it and its time budget, and the trained plan's run time.",
           5, 3, false,
           {"sample", "size", "size_value", "training_seconds", "training_build_seconds", "training_executions", "training_end",
            "budget_seconds", "plan", "run_ms", "bound_seconds", "within", "check"}},
          argc, argv, own);
  const std::vector<std::string> samples = b.vm["samples"].as<Names>().v;
  const std::vector<std::string> wanted = b.option("sizes", Names{{"small"}}).v;
  const unsigned runs = std::max(1u, b.option("runs", 3u));
  Table table({"sample", "size", "training s", "of which builds s", "executions", "ended by", "budget s",
               "trained plan", "run ms", "max(2 s, 50 x run)", "within (builds aside)"});
  bool failed = false;
  std::unique_ptr<sinew::Runtime> shown;
  try {
    for (const auto& name : samples) {
      auto sample = sinew::samples::find(name);
      if (!sample) b.fail("--samples", "no sample named '" + name + "'");
      for (const Size& size : sizes_of(*sample, wanted)) {
        if (b.stop()) break;
        const fs::path kb = fresh_kb(name, size.name);
        sinew::RuntimeOptions o;
        o.kb_path = kb.string();
        auto rt = make_runtime(b.zero_copy_stand_in, o);
        sample->prepare(size.value);
        if (b.vm["build-first"].as<bool>()) {
          sinew::RuntimeOptions scratch;
          scratch.kb_path = ":memory:";
          auto builder = make_runtime(b.zero_copy_stand_in, scratch);
          for (std::size_t d = 0; d < builder->devices().size(); ++d)
            sample->run(*builder, sinew::RunOptions{.config = sinew::Config::single(d, builder->devices().size())});
        }
        const sinew::Report trained = sample->run(*rt, sinew::RunOptions{.train = true});
        std::string check = sample->check().ok ? "OK" : "MISMATCH " + sample->check().message;
        std::vector<double> run_ms;
        for (unsigned i = 0; i < runs && check == "OK"; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          sample->run(*rt);
          run_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        if (check == "OK" && !sample->check().ok) check = "MISMATCH " + sample->check().message;
        const double run = median(run_ms);
        const double bound = std::max(2.0, 50 * run / 1000);
        // The bound holds program builds aside (Report::training_build_seconds).
        const bool within = trained.training_seconds - trained.training_build_seconds <= bound;
        failed = failed || check != "OK";
        b.csv().append({{"sample", name},
                        {"size", size.name},
                        {"size_value", sample->size_text()},
                        {"training_seconds", num(trained.training_seconds)},
                        {"training_build_seconds", num(trained.training_build_seconds)},
                        {"training_executions", std::to_string(trained.training_executions)},
                        {"training_end", std::string(sinew::to_string(trained.training_end))},
                        {"budget_seconds", num(trained.training_budget_seconds)},
                        {"plan", trained.config.str()},
                        {"run_ms", num(run)},
                        {"bound_seconds", num(bound)},
                        {"within", within ? "yes" : "no"},
                        {"check", check}});
        table.add({name, size.name + " (" + sample->size_text() + ")", fmt("%.2f", trained.training_seconds),
                   fmt("%.2f", trained.training_build_seconds), std::to_string(trained.training_executions), std::string(sinew::to_string(trained.training_end)),
                   fmt("%.1f", trained.training_budget_seconds), trained.config.str(), fmt("%.3f", run),
                   fmt("%.2f", bound), check == "OK" ? (within ? "yes" : "no") : check});
        b.progress(name + " " + size.name + ": trained in " + fmt("%.2f", trained.training_seconds) + " s, " +
                   std::to_string(trained.training_executions) + " executions (" +
                   std::string(sinew::to_string(trained.training_end)) + "), runs in " + fmt("%.3f", run) + " ms");
        if (!shown) shown = std::move(rt);
        remove_kb(kb);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
  std::string md = b.header(shown.get()) +
                   "Each row: a fresh knowledge base, one forced training (the runtime's settings: at most 40 "
                   "executions or the time budget max(2 s, 50 x the fastest plan), whichever ends it first), then "
                   "the trained plan's median run time over the planned runs after it. With --build-first (the default) "
                   "each device alone ran the sample once before, so that the training finds its programs built. "
                   "Within: training seconds less its builds (Report::training_build_seconds: programs built, and "
                   "each plan's first run beyond its second, where the driver compiles kernels at their first "
                   "launch) <= max(2 s, 50 x run).\n\n" +
                   table.str();
  return b.finish(md, failed);
}
