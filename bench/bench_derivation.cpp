// bench/bench_derivation.cpp — the spec's Table 2: the filter pipeline's plan trained for each
// image alone, against plans derived from earlier images by one knowledge base and then adjusted
// by the online balancer; and nearest neighbour against inverse-distance derivation.
//
// Training: each image alone, a fresh knowledge base, forced training. Derivation: one runtime
// and one knowledge base, empty at the start, fed the images in order; the first trains, each
// later one is derived from the earlier ones and run --runs times with the balancer on, each
// planned run alternating with a run of the image's trained plan (a given Config) so that both
// see the same machine; relative perf. = trained / derived over the medians of the last --last
// runs (goal >= 0.95). Interpolators: the same sequence with the balancer off, nearest neighbour
// and inverse distance.
#include "sinew_side.hpp"

#include "common/descriptors.hpp"

#include <sinew/kb.hpp>

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>

using namespace bench;
using sinew::samples::FilterPipeline;

namespace {

struct Image {
  std::string label, id;  // "1024x2048", "Image 3"
};

// A knowledge-base file that starts empty, kept in DIR with --keep-kb, else removed when done.
class KbFile {
 public:
  KbFile(const Bench& b, const std::string& name, bool keep)
      : path_(keep ? b.file("-" + name + ".sqlite")
                   : fs::temp_directory_path() /
                         ("bench_derivation-" + std::to_string(::getpid()) + "-" + name + ".sqlite")),
        keep_(keep) {
    remove_kb(path_);
  }
  ~KbFile() {
    if (!keep_) remove_kb(path_);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
  bool keep_;
};

struct Timed {
  sinew::Report report;
  double host_ms = 0;
};
// One run: bindings() (restoring the input) untimed, the host clock around rt.run(...).get().
Timed timed_run(sinew::Runtime& rt, FilterPipeline& s, const sinew::RunOptions& o) {
  auto bindings = s.bindings();
  const auto t0 = std::chrono::steady_clock::now();
  Timed t{rt.run(s.tree(), std::move(bindings), o).get(), 0};
  t.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

struct Trained {
  bool ok = false;
  sinew::Config config;
  double time_ms = kNaN;  // the training's own measurement of its best plan (its KB entry)
  std::size_t executions = 0;
  double seconds = kNaN;
  std::string check = "not run";
};

struct Derived {
  bool ran = false;
  sinew::Config first, last;     // the plan of the first planned run and of the last
  std::string provenance, from;  // of the first run; the image it was derived from
  std::size_t check_runs = 0;    // runs that checked the derived plan
  std::size_t level1 = 0, level2 = 0;
  double median_ms = kNaN, derived_plan_ms = kNaN, trained_ms = kNaN;
  std::vector<double> run_ms;
  std::vector<int> run_level;
  std::string check = "not run";
  double ratio() const { return trained_ms / median_ms; }
};

struct Sequence {
  std::string name, interpolator;
  std::size_t runs = 0;
  std::vector<Derived> images;
};

class Table2 {
 public:
  Table2(Bench& b, std::vector<Image> images) : b_(b), images_(std::move(images)), keep_(b.vm["keep-kb"].as<bool>()) {
    max_executions_ = b.option("max-executions", 16u);
    auto rt = make_runtime(b.zero_copy_stand_in, options());
    roles_ = Roles::of(*rt);
    b.csv(
        words("kind sequence interpolator balancer image size run provenance derived_from fission overlap gpu_share "
              "cpu_share time_ms host_ms lbt deviation balance_level training_executions training_seconds level1 "
              "level2 final_plan median_ms derived_plan_ms trained_median_ms ratio check"));
  }

  sinew::RuntimeOptions options() const {
    sinew::RuntimeOptions o;
    o.training.exhaustive = b_.vm["exhaustive"].as<bool>();
    if (max_executions_) o.training.max_executions = max_executions_;
    return o;
  }
  // "fission L2, overlap 3, gpu 90.8% / cpu 9.2%"
  std::string plan(const sinew::Config& c) const {
    if (c.shares.empty()) return "-";
    const auto s = shares_of(c, roles_);
    return "fission " + c.fission + ", overlap " + std::to_string(c.overlap) + ", gpu " + fmt("%.1f", 100 * s.gpu) +
           "% / cpu " + fmt("%.1f", 100 * s.cpu) + "%";
  }
  Csv::Row row(const std::string& kind, const std::string& seq, const Image& im, const sinew::Config* c) const {
    Csv::Row r = kv({"kind", kind, "sequence", seq, "image", im.id, "size", im.label});
    if (!c || c->shares.empty()) return r;
    const auto s = shares_of(*c, roles_);
    return kv({"fission", c->fission, "overlap", std::to_string(c->overlap), "gpu_share", num(s.gpu), "cpu_share",
               num(s.cpu)},
              r);
  }

  void train_each() {
    for (const Image& im : images_) {
      Trained t;
      Csv::Row r = row("training", "training", im, nullptr);
      try {
        KbFile kb(b_, "train-" + im.label, keep_);
        sinew::RuntimeOptions o = options();
        o.kb_path = kb.path();
        o.force_training = true;
        auto rt = make_runtime(b_.zero_copy_stand_in, o);
        FilterPipeline s;
        s.prepare(im.label);
        b_.progress("training: " + im.id + " " + im.label + " alone, fresh knowledge base");
        sinew::RunOptions train;
        train.balance = false;  // training only: nothing for the balancer to watch
        const Timed run = timed_run(*rt, s, train);
        t.config = run.report.config;
        t.executions = run.report.training_executions;
        t.seconds = run.report.training_seconds;
        t.check = check_of(s);
        t.ok = t.check == "OK" && !t.config.shares.empty();
        if (auto e = sinew::KnowledgeBase::open(kb.path(), sinew::KbOptions{.log = {}})->entry(run.report.kb_entry))
          t.time_ms = e->time_ms;
        r = kv(
            {"provenance", std::string(sinew::to_string(run.report.provenance)), "time_ms", num(t.time_ms), "host_ms",
             num(run.host_ms), "training_executions", std::to_string(t.executions), "training_seconds", num(t.seconds)},
            row("training", "training", im, &t.config));
      } catch (const std::exception& e) {
        t.check = std::string("ERROR: ") + e.what();
      }
      b_.csv().append(kv({"check", t.check}, r));
      b_.progress("training: " + im.id + " " + im.label + ": " + plan(t.config) + ", " + fmt("%.3f", t.time_ms) +
                  " ms, " + std::to_string(t.executions) + " executions in " + fmt("%.1f", t.seconds) + " s; " +
                  t.check);
      trained_.push_back(t);
    }
  }

  // One knowledge base, empty at the start, fed the images in order.
  void derive_in_order(const std::string& name, const std::string& interpolator, bool balancer, std::size_t runs,
                       std::size_t last) {
    Sequence seq{name, interpolator, runs, {}};
    KbFile kb(b_, name, keep_);
    sinew::RuntimeOptions o = options();
    o.kb_path = keep_ ? kb.path() : ":memory:";
    o.unseen = sinew::UnseenPolicy::derive;
    o.interpolation = sinew::parse::choice<sinew::Interpolation>(interpolator, "interpolator");
    o.balancer.enabled = balancer;
    auto rt = make_runtime(b_.zero_copy_stand_in, o);
    const std::string bal = balancer ? "on" : "off";
    std::map<std::int64_t, std::string> image_of_entry;
    auto tail = [last](const std::vector<double>& v) {
      return median({v.end() - static_cast<std::ptrdiff_t>(std::min(last, v.size())), v.end()});
    };
    for (std::size_t i = 0; i < images_.size() && !b_.stop(); ++i) {
      const Image& im = images_[i];
      Derived d;
      try {
        FilterPipeline s;
        s.prepare(im.label);
        b_.progress(name + ": " + im.id + " " + im.label + ", " + std::to_string(runs) + " planned runs");
        sinew::RunOptions planned, manual;
        if (!balancer) planned.balance = false;  // on: the default for plans from the knowledge base
        manual.config = trained_[i].config;
        std::vector<double> trained_ms;
        for (std::size_t r = 0; r < runs; ++r) {
          const Timed p = timed_run(*rt, s, planned);
          const sinew::Report& rep = p.report;
          const int level = rep.balance ? rep.balance->level : 0;
          if (r == 0) {
            d.first = rep.config;
            d.provenance = sinew::to_string(rep.provenance);
            if (rep.provenance == sinew::Provenance::derived) d.check_runs = rep.training_executions;
            image_of_entry[rep.kb_entry] = im.id;
            if (rep.derived_from)
              d.from = image_of_entry.count(rep.derived_from) ? image_of_entry[rep.derived_from]
                                                              : "entry #" + std::to_string(rep.derived_from);
          }
          if (r == 0 || r + 1 == runs)
            if (d.check = check_of(s); d.check != "OK") d.check = "MISMATCH " + d.check;
          d.level1 += level == 1;
          d.level2 += level == 2;
          d.run_ms.push_back(rep.wall_ms);
          d.run_level.push_back(level);
          d.last = rep.config;
          b_.csv().append(kv({"interpolator", interpolator, "balancer", bal, "run", std::to_string(r + 1), "provenance",
                              std::string(sinew::to_string(rep.provenance)), "derived_from",
                              rep.derived_from ? std::to_string(rep.derived_from) : "", "time_ms", num(rep.wall_ms),
                              "host_ms", num(p.host_ms), "lbt", rep.execution ? num(rep.lbt) : "", "deviation",
                              rep.execution ? num(rep.deviation) : "", "balance_level",
                              level ? std::to_string(level) : "", "training_executions",
                              std::to_string(rep.training_executions), "check", "OK"},
                             row("run", name, im, &rep.config)));
          if (level)
            b_.progress(name + ": " + im.id + " run " + std::to_string(r + 1) + ": balancer level " +
                        std::to_string(level) + ", " + plan(rep.balance->before) + " -> " + plan(rep.balance->after));
          if (!trained_[i].ok) continue;
          const Timed t = timed_run(*rt, s, manual);
          trained_ms.push_back(t.report.wall_ms);
          b_.csv().append(
              kv({"balancer", "off", "run", std::to_string(r + 1), "time_ms", num(t.report.wall_ms), "host_ms",
                  num(t.host_ms), "provenance", std::string(sinew::to_string(t.report.provenance)), "check", "OK"},
                 row("trained-run", name, im, &t.report.config)));
          if (r + 1 == runs && d.check == "OK")
            if (auto c = check_of(s); c != "OK") d.check = "trained plan: " + c;
        }
        // The derived plan's own time: its runs before the balancer first changed it, less the first
        // when there are others (a new plan's first run pays one-off costs, e.g. a compilation).
        std::vector<double> own;
        for (std::size_t r = 0; r < d.run_ms.size(); ++r)
          if (own.push_back(d.run_ms[r]); d.run_level[r]) break;
        if (own.size() > 1) own.erase(own.begin());
        d.derived_plan_ms = median(own);
        d.median_ms = tail(d.run_ms);
        d.trained_ms = tail(trained_ms);
        d.ran = true;
      } catch (const std::exception& e) {
        d.check = std::string("ERROR: ") + e.what();
      }
      b_.progress(name + ": " + im.id + " " + im.label + ": " + d.provenance + (d.from.empty() ? "" : " from ") +
                  d.from + ", level 1 x" + std::to_string(d.level1) + ", level 2 x" + std::to_string(d.level2) + "; " +
                  fmt("%.3f", d.median_ms) + " ms vs trained " + fmt("%.3f", d.trained_ms) + " ms; " + d.check);
      b_.csv().append(kv({"interpolator", interpolator, "balancer", bal, "provenance", d.provenance, "derived_from",
                          d.from, "level1", std::to_string(d.level1), "level2", std::to_string(d.level2), "final_plan",
                          d.ran ? d.last.str() : "", "median_ms", num(d.median_ms), "derived_plan_ms",
                          num(d.derived_plan_ms), "trained_median_ms", num(d.trained_ms), "ratio", num(d.ratio()),
                          "check", d.check},
                         row("derivation", name, im, d.ran ? &d.first : nullptr)));
      seq.images.push_back(std::move(d));
    }
    seqs_.push_back(std::move(seq));
  }

  std::string report(std::size_t last) const;
  bool ok() const {
    bool ok = true;
    for (const auto& t : trained_) ok = ok && t.check == "OK";
    for (const auto& s : seqs_)
      for (const auto& d : s.images) ok = ok && d.check == "OK";
    return ok;
  }

 private:
  Bench& b_;
  std::vector<Image> images_;
  bool keep_;
  unsigned max_executions_ = 0;
  Roles roles_;
  std::vector<Trained> trained_;
  std::vector<Sequence> seqs_;
};

std::string Table2::report(std::size_t last) const {
  auto rel = [](const Derived* d) { return d && d->ran ? fmt("%.0f%%", 100 * d->ratio()) : std::string("-"); };
  auto from = [](const Derived& d) { return d.provenance + (d.from.empty() ? "" : " from " + d.from); };
  const Sequence* main = seqs_.empty() ? nullptr : &seqs_.front();
  std::ostringstream m;
  m << "Filter pipeline (gaussian noise -> solarise -> mirror on an RGBA image, split by lines). Trained: each image "
       "alone from an empty knowledge base (training's own time of its plan, executions and seconds). Derived: one "
       "knowledge base, empty at the start, fed the images in order; the first trains, each later one is derived from "
       "the earlier ones (nearest neighbour, then checked by the runtime with a few runs) and run "
    << (main ? main->runs : 0) << " times with the online balancer on, each run alternating with a run of the "
    << "image's trained plan as a given Config. Times are `Report::wall_ms`; *relative perf.* = trained / derived, "
       "medians of the last "
    << last
    << " runs of each (goal >= 0.95). Plans: fission, overlap, GPU / CPU shares (GPU = the devices driven as "
       "discrete). Balancer: balanced when the fastest device finishes within "
    << fmt("%.0f%%", 100 * sinew::BalancerSettings{}.with_defaults().balanced_within.value())
    << " of the slowest's time. Training: "
    << (b_.vm["exhaustive"].as<bool>() ? "every fission x overlap combination" : "the runtime's default search")
    << (max_executions_ ? ", at most " + std::to_string(max_executions_) + " executions per image" : "") << ".\n\n";
  Table t({"image", "trained plan", "its ms", "training (runs, s)", "derived plan (first run)", "its ms", "level 1 / 2",
           "final plan", "trained ms", "derived ms", "relative perf.", "check"});
  for (std::size_t i = 0; i < images_.size(); ++i) {
    const Trained& tr = trained_[i];
    const Derived* d = main && i < main->images.size() ? &main->images[i] : nullptr;
    const bool ran = d && d->ran;
    t.add({images_[i].id + " " + images_[i].label, tr.ok ? plan(tr.config) : "-", fmt("%.3f", tr.time_ms),
           std::to_string(tr.executions) + ", " + fmt("%.1f", tr.seconds),
           ran ? from(*d) + (d->check_runs ? " (checked in " + std::to_string(d->check_runs) + " runs)" : "") + ": " +
                     plan(d->first)
               : "-", ran ? fmt("%.3f", d->derived_plan_ms) : "-",
           ran ? std::to_string(d->level1) + " / " + std::to_string(d->level2) : "-", ran ? plan(d->last) : "-",
           ran ? fmt("%.3f", d->trained_ms) : "-", ran ? fmt("%.3f", d->median_ms) : "-", rel(d),
           tr.check != "OK" ? tr.check
           : d              ? d->check
                            : "not run"});
  }
  m << t.str();
  if (seqs_.size() > 1) {
    std::vector<std::string> h{"image"};
    for (std::size_t k = 1; k < seqs_.size(); ++k)
      for (const char* x : {": plan", ": ms", ": trained ms", ": relative perf."})
        h.push_back(seqs_[k].interpolator + x);
    Table c(h);
    for (std::size_t i = 0; i < images_.size(); ++i) {
      std::vector<std::string> l{images_[i].id + " " + images_[i].label};
      for (std::size_t k = 1; k < seqs_.size(); ++k) {
        const Derived* d = i < seqs_[k].images.size() ? &seqs_[k].images[i] : nullptr;
        const bool ran = d && d->ran;
        l.insert(l.end(), {ran ? from(*d) + ": " + plan(d->first)
                           : d ? d->check
                               : "not run",
                           ran ? fmt("%.3f", d->median_ms) : "-", ran ? fmt("%.3f", d->trained_ms) : "-", rel(d)});
      }
      c.add(l);
    }
    m << "\nInterpolators, balancer off (" << seqs_[1].runs << " runs per image, each sequence its own empty "
      << "knowledge base; the first image trains again, so its row shows training's noise):\n\n"
      << c.str();
  }
  return m.str();
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()(
      "images",
      po::value<Names>()
          ->default_value(Names{{"1024x1024", "512x512", "1024x2048", "2048x512", "2048x2048", "4096x4096"}},
                          "1024x1024,512x512,1024x2048,2048x512,2048x2048,4096x4096")
          ->value_name("a,b"),
      "images in order, WIDTHxHEIGHT or N (--quick 128x128,64x64,128x256,256x64)")(
      "runs", po::value<unsigned>()->default_value(100)->value_name("N"),
      "planned runs per image with the balancer on (the spec ran 500; --quick 12); as many runs of the trained plan "
      "alternate with them")("last", po::value<unsigned>()->default_value(10)->value_name("N"),
                             "the medians compare the last N runs of each (--quick 4)")(
      "compare-runs", po::value<unsigned>()->default_value(10)->value_name("N"),
      "runs per image in each interpolator sequence (--quick 3)")("no-compare", po::bool_switch(),
                                                                  "skip the interpolator sequences")(
      "exhaustive", po::bool_switch(), "train over every fission x overlap combination (the spec's uniform search)")(
      "max-executions", po::value<unsigned>()->default_value(0)->value_name("N"),
      "training budget per image (0: the runtime's, 40; --quick 16)")(
      "keep-kb", po::bool_switch(),
      "keep the knowledge bases as DIR/bench_derivation-*.sqlite (`sinew kb show --kb FILE`)");
  Bench b({"bench_derivation", "training vs derivation and balancing (the spec's Table 2)",
           "The spec's Table 2 on the filter pipeline: each image's plan trained alone, against one knowledge "
           "base\nderiving each image's plan from the earlier ones with the online balancer adjusting it, and "
           "nearest\nneighbour against inverse-distance derivation with the balancer off.",
           5, 2},
          argc, argv, own);
  const auto labels = b.option("images", Names{{"128x128", "64x64", "128x256", "256x64"}}).v;
  const std::size_t runs = std::max(1u, b.option("runs", 12u)), last = std::max(1u, b.option("last", 4u)),
                    compare_runs = std::max(1u, b.option("compare-runs", 3u));
  if (last > runs) b.fail("--last", std::to_string(last) + " is more than --runs " + std::to_string(runs));
  std::vector<Image> images;
  for (const auto& l : labels) {
    try {
      FilterPipeline().prepare(l);  // the sample judges the size, with its own message, before any work
    } catch (const std::invalid_argument& e) {
      b.fail("--images", "'" + l + "': " + e.what());
    }
    images.push_back({l, "Image " + std::to_string(images.size() + 1)});
  }
  try {
    Table2 t(b, images);
    t.train_each();
    t.derive_in_order("derive-balanced", "nearest", true, runs, last);
    if (!b.vm["no-compare"].as<bool>()) {
      t.derive_in_order("derive-nearest", "nearest", false, compare_runs, compare_runs);
      t.derive_in_order("derive-idw", "inverse_distance", false, compare_runs, compare_runs);
    }
    sinew::RuntimeOptions probe;
    probe.kb_path = ":memory:";
    probe.quiet = true;
    auto rt = make_runtime(b.zero_copy_stand_in, probe);
    return b.finish(b.header(rt.get()) + t.report(last), !t.ok());
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
