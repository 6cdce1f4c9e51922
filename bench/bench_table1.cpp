// bench/bench_table1.cpp — the spec's Table 1 and Figs. 2-3: for each sample of the registry at
// three sizes, the GPU-only and CPU-only baselines, Sinew trained with each strategy (by default
// even_split, cpu_assisted and model; its plan, level of parallelism, shares, training executions
// and % of the oracle), the oracle (a sweep of static CPU/GPU splits
// at every GPU overlap level) and Sinew's plan derived from the other sizes' knowledge; the
// speedups of CPU+GPU over GPU-only as bar charts.
//
// The report is made from the CSV at the end, so a run stopped by --max-seconds (or killed) and
// resumed with --resume reports what both invocations measured. Works with any number of GPUs
// (their shares balanced between them) and without any (a CPU device driven as discrete stands in).
#include "sinew_side.hpp"

#include <sinew/kb.hpp>

#include <unistd.h>

#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

using namespace bench;

namespace {

const std::vector<std::string> kSamples = {"filter_pipeline", "fft", "nbody", "saxpy", "segmentation"};
// The paper's parameterisation classes, in each sample's size unit, and tiny ones for --quick.
const std::map<std::string, std::vector<std::size_t>> kPaperSizes = {
    {"filter_pipeline", {1024, 2048, 4096}},  // image side
    {"fft", {256, 512, 1024}},                // transforms of 512 KB: 128/256/512 MB
    {"nbody", {16384, 32768, 65536}},         // bodies
    {"saxpy", {1000000, 10000000, 50000000}},
    {"segmentation", {1u << 20, 8u << 20, 60u << 20}},   // voxels: 1/8/60 MB
    // Beyond the paper, run only when named (--samples): the iterative samples' registry sizes.
    {"cg", {64, 512, 1024}},                         // grid side: side^2 rows
    {"kmeans", {1u << 14, 1u << 20, 1u << 24}},      // points
    {"pagerank", {1u << 14, 1u << 20, 1u << 23}}};   // graph nodes
const std::map<std::string, std::vector<std::size_t>> kQuickSizes = {{"filter_pipeline", {64, 128, 256}},
                                                                     {"fft", {2, 4, 8}}, {"nbody", {256, 512, 1024}},
                                                                     {"saxpy", {65536, 262144, 1000000}},
                                                                     {"segmentation", {65536, 262144, 1u << 20}},
                                                                     {"cg", {32, 64, 128}},
                                                                     {"kmeans", {4096, 16384, 65536}},
                                                                     {"pagerank", {4096, 16384, 65536}}};

// Rough host bytes a sample needs at a size (inputs, outputs, reference, training copies).
double estimate_bytes(const std::string& name, double x) {
  return name == "filter_pipeline" ? 16 * x * x
         : name == "fft"           ? 4 * x * 65536 * 8
         : name == "nbody"         ? 112 * x
         : name == "saxpy"         ? 20 * x
         : name == "cg"            ? 72 * x * x
         : name == "kmeans"        ? 20 * x
         : name == "pagerank"      ? 40 * x
                                   : 4 * x;
}

std::string size_label(const std::string& name, std::size_t n) {
  if (name == "filter_pipeline") return std::to_string(n) + "x" + std::to_string(n);
  if (name == "fft") return fmt("%g MB", static_cast<double>(n) * 0.5);
  if (name == "segmentation")
    return n % (1u << 20) == 0 ? std::to_string(n >> 20) + " MB" : std::to_string(n >> 10) + " KB";
  return count_label(n);
}

std::vector<std::string> columns() {
  auto c = measurement_columns();
  for (const char* x : {"strategy", "size_label", "gpu_share", "gpu_shares", "fission", "config", "provenance",
                        "parallelism", "training_executions", "training_seconds"})
    c.push_back(x);
  return c;
}

bool ok(const Csv::Row* r) { return r && get(*r, "check") == "OK"; }
double ms(const Csv::Row* r) { return ok(r) ? to_num(get(*r, "median_ms")) : kNaN; }
std::string ms_cell(const Csv::Row* r) {
  return !r ? "-" : get(*r, "check").starts_with("SKIPPED") ? "skipped" : ok(r) ? fmt("%.3f", ms(r)) : "FAILED";
}

class Table1 {
 public:
  Table1(Bench& b, sinew::Runtime& rt) : b_(b), rt_(rt), roles_(Roles::of(rt)), kb_dir_(b.file("-kb")) {
    fs::create_directories(kb_dir_);
    strategies_ = b.vm["strategies"].as<Names>().v;
    for (const auto& s : strategies_) sinew::parse::choice<sinew::Strategy>(s, "--strategies");
    if (b.given("overlaps"))
      for (auto o : b.vm["overlaps"].as<Counts>().v) overlaps_.push_back(static_cast<unsigned>(o));
    else
      overlaps_ = roles_.overlaps;
    if (b.quick && !b.given("overlaps") && overlaps_.size() > 2) overlaps_.resize(2);
    step_ = b.option("step", 0.25);
    max_executions_ = b.option("max-executions", 12u);
    versus_rounds_ = b.option("versus-rounds", 2u);
  }
  const Roles& roles() const { return roles_; }

  // Measures what is not measured yet; false when --max-seconds stopped it.
  bool run(const std::vector<std::string>& samples, const std::map<std::string, std::vector<std::size_t>>& sizes) {
    for (const auto& name : samples) {
      for (std::size_t n : sizes.at(name))
        if (!b_.stop()) measure_size(name, n);
      if (!b_.vm["no-derived"].as<bool>())
        for (std::size_t n : sizes.at(name))
          if (!b_.stop()) derive(name, n, sizes.at(name));
      for (std::size_t n : sizes.at(name))
        if (!b_.stop()) versus(name, n);
    }
    return !b_.stop();
  }

  std::string report();

 private:
  static Csv::Row key(const std::string& name, std::size_t n, const std::string& variant,
                      const std::string& strategy = "", double share = kNaN, unsigned ov = 0) {
    Csv::Row k{{"case", name}, {"size", std::to_string(n)}, {"variant", variant}};
    if (!strategy.empty()) k["strategy"] = strategy;
    if (!std::isnan(share)) k["cpu_share"] = num(share);
    if (ov) k["overlap"] = std::to_string(ov);
    return k;
  }
  void plan_fields(Csv::Row& r, const sinew::Config& c, const std::string& name, std::size_t n) const {
    const SplitShares sh = shares_of(c, roles_);
    r["size_label"] = size_label(name, n);
    r["cpu_share"] = num(sh.cpu);
    r["gpu_share"] = num(sh.gpu);
    r["gpu_shares"] = join_shares(sh.per_gpu);
    r["fission"] = c.fission;
    r["overlap"] = std::to_string(c.overlap);
    r["config"] = c.str();
  }
  sinew::RuntimeOptions kb_options(const fs::path& kb) const {
    sinew::RuntimeOptions o;
    o.kb_path = kb.string();
    if (max_executions_) o.training.max_executions = max_executions_;
    o.quiet = !b_.verbose;
    return o;
  }
  fs::path kb_file(const std::string& name, std::size_t n, const std::string& what) const {
    return kb_dir_ / (name + "-" + std::to_string(n) + "-" + what + ".sqlite");
  }
  Timing timing(double give_up = 0) const { return {b_.warmup, b_.repeat, b_.point_seconds * 1000, give_up}; }

  // Weights between several GPUs such that they finish together: start even, then move work in
  // proportion to each GPU's measured rate (Report::device_ms) until within 5%.
  std::vector<double> balance_gpus(sinew::samples::Sample& s, unsigned ov) {
    std::vector<double> w(roles_.gpus.size(), 1.0 / std::max<std::size_t>(1, roles_.gpus.size()));
    if (w.size() < 2) return w;
    rt_.execute(s.tree(), s.bindings(), with_config(make_plan(roles_, 0, w, "none", ov)));  // buffers, programs
    for (int round = 0; round < 3; ++round) {
      const auto rep = rt_.execute(s.tree(), s.bindings(), with_config(make_plan(roles_, 0, w, "none", ov)));
      std::vector<double> t;
      for (auto d : roles_.gpus) t.push_back(d < rep.device_ms.size() ? rep.device_ms[d] : 0);
      const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
      if (!(*lo > 0) || *lo >= 0.95 * *hi) break;
      double sum = 0;
      for (std::size_t i = 0; i < w.size(); ++i) sum += (w[i] /= t[i]);
      for (auto& x : w) x /= sum;
    }
    return w;
  }

  bool measured(const std::string& name, std::size_t n) {
    std::vector<Csv::Row> keys;
    for (unsigned ov : roles_.gpus.empty() ? std::vector<unsigned>{} : overlaps_)
      keys.push_back(key(name, n, "gpu-only", "", kNaN, ov));
    if (!roles_.cpus.empty()) keys.push_back(key(name, n, "cpu-only"));
    for (const auto& st : strategies_) keys.push_back(key(name, n, "trained", st));
    if (oracle())
      for (unsigned ov : overlaps_)
        for (double s : sweep_shares(step_)) keys.push_back(key(name, n, "oracle", "", s, ov));
    return std::all_of(keys.begin(), keys.end(), [&](const Csv::Row& k) { return b_.find(k) != nullptr; });
  }
  bool oracle() const { return !b_.vm["no-oracle"].as<bool>() && roles_.hybrid(); }

  void measure_size(const std::string& name, std::size_t n) {
    if (b_.find(key(name, n, "size")) || measured(name, n)) return;  // left out earlier, or all resumed
    auto sample = sinew::samples::find(name);
    std::string why;
    const double need = estimate_bytes(name, static_cast<double>(n));
    const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    if (avail > 0 && need > avail)
      why = "needs about " + fmt("%.1f", need / 1e9) + " GB of host memory, " + fmt("%.1f", avail / 1e9) + " free";
    for (const auto& d : rt_.devices())
      if (need / 2 > static_cast<double>(d.global_memory))
        why = "needs about " + fmt("%.1f", need / 2e9) + " GB on " + d.id();
    if (!why.empty()) why = "SKIPPED: does not fit this machine (" + why + ")";
    try {
      if (why.empty()) sample->prepare(n);
    } catch (const std::exception& e) {
      why = std::string("ERROR: prepare: ") + e.what();
    }
    if (!why.empty()) {
      b_.record(key(name, n, "size"), {{"size_label", size_label(name, n)}, {"check", why}});
      b_.progress(name + " " + size_label(name, n) + ": " + why);
      return;
    }
    b_.progress(name + " " + size_label(name, n));
    auto fields = [&](const sinew::Config& c, const sinew::Report* last, const std::string& note = "") {
      return [this, c, last, note, &name, n](Csv::Row& r, const Stats&) {
        plan_fields(r, c, name, n);
        if (last) r["parallelism"] = std::to_string(parallelism(*last));
        r["provenance"] = "manual";
        r["note"] = note;
      };
    };
    // 1. GPU-only (every GPU, their shares balanced) at each overlap level.
    std::map<unsigned, std::vector<double>> weights;
    for (unsigned ov : roles_.gpus.empty() ? std::vector<unsigned>{} : overlaps_) {
      if (b_.stop()) return;
      sinew::Report last;
      try {
        weights[ov] = balance_gpus(*sample, ov);
      } catch (const std::exception& e) {
        b_.record(key(name, n, "gpu-only", "", kNaN, ov), {{"check", std::string("ERROR: ") + e.what()}});
        continue;
      }
      const sinew::Config c = make_plan(roles_, 0, weights[ov], "none", ov);
      b_.measure(key(name, n, "gpu-only", "", kNaN, ov), sinew_job(rt_, *sample, with_config(c), &last), timing(),
                 fields(c, &last, roles_.gpus.size() > 1 ? "GPU shares balanced by measurement" : ""));
    }
    // 2. CPU-only (every CPU device, no fission).
    if (!roles_.cpus.empty() && !b_.stop()) {
      sinew::Report last;
      const sinew::Config c = make_plan(roles_, 1);
      b_.measure(key(name, n, "cpu-only"), sinew_job(rt_, *sample, with_config(c), &last), timing(), fields(c, &last));
    }
    // 3. Trained by a knowledge base of its own (a file per size and strategy, empty at the start:
    // the derivation below reads it) with each strategy.
    for (const auto& strategy : strategies_) {
      if (b_.find(key(name, n, "trained", strategy)) || b_.stop()) continue;
      const fs::path kb = kb_file(name, n, strategy);
      remove_kb(kb);
      sinew::RuntimeOptions o = kb_options(kb);
      o.training.strategy = sinew::parse::choice<sinew::Strategy>(strategy, "--strategies");
      b_.progress(name + " " + size_label(name, n) + " training (" + strategy + ")...");
      const Planned t = time_planned(*make_runtime(b_.zero_copy_stand_in, o), *sample, /*train=*/true, timing());
      record_planned(key(name, n, "trained", strategy), t, name, n,
                     t.first.provenance == sinew::Provenance::trained ? "" : "expected provenance 'trained'");
    }
    // 4. The oracle: static splits at the first strategy's trained fission, each overlap level.
    if (!oracle() || b_.stop()) return;
    SweepSpec spec{sweep_shares(step_), overlaps_, "none", {}, b_.vm["prune"].as<double>()};
    if (const auto* t = b_.find(key(name, n, "trained", strategies_.front())); ok(t) && !get(*t, "fission").empty())
      spec.fission = get(*t, "fission");
    double best = kNaN;
    auto consider = [&](const Csv::Row* r) {
      if (!std::isnan(ms(r))) best = std::isnan(best) ? ms(r) : std::min(best, ms(r));
    };
    for (const auto& st : strategies_) consider(b_.find(key(name, n, "trained", st)));
    consider(b_.find(key(name, n, "cpu-only")));
    for (unsigned ov : overlaps_) {
      const auto* g = b_.find(key(name, n, "gpu-only", "", kNaN, ov));
      consider(g);
      if (ok(g) && roles_.gpus.size() > 1) spec.gpu_weights[ov] = parse_shares(get(*g, "gpu_shares"));
    }
    auto record = [&](const SweepPoint& p) {
      Csv::Row f;
      Bench::put(f, p.m);
      fields(p.config, nullptr, p.note)(f, p.m);
      if (p.skipped) f["check"] = "SKIPPED", f["runs"] = "0";
      b_.record(key(name, n, "oracle", "", p.cpu_share, p.overlap), f);
    };
    sweep_splits(
        roles_, spec, best,
        [&](const SweepPoint& p, double give_up) {
          // No CPU work: the gpu-only row's plan, measured already.
          if (const auto* g = b_.find(key(name, n, "gpu-only", "", kNaN, p.overlap)); p.cpu_share == 0 && ok(g)) {
            SweepPoint q = p;
            q.m = Bench::stats(*g);
            q.note = "same plan as the gpu-only row";
            record(q);
            return q.m;
          }
          return Bench::stats(b_.measure(
              key(name, n, "oracle", "", p.cpu_share, p.overlap), sinew_job(rt_, *sample, with_config(p.config)),
              timing(give_up), [&](Csv::Row& r, const Stats& m) {
                fields(p.config, nullptr,
                       m.ok() && m.runs == 0
                           ? "untimed runs only: slower than " + fmt("%g", spec.prune) + "x the best so far"
                           : "")(r, m);
              }));
        },
        record, [&] { return b_.stop(); });
  }

  void record_planned(const Csv::Row& k, const Planned& t, const std::string& name, std::size_t n,
                      const std::string& note, const std::string& strategy = "") {
    Csv::Row r;
    Bench::put(r, t.m);
    if (t.m.ok() || t.first.training_executions > 0) {
      plan_fields(r, t.first.config, name, n);
      r["provenance"] = sinew::to_string(t.first.provenance);
      r["parallelism"] = std::to_string(parallelism(t.last.partitions.empty() ? t.first : t.last));
      r["training_executions"] = std::to_string(t.first.training_executions);
      r["training_seconds"] = num(t.first.training_seconds);
    }
    if (!strategy.empty()) r["strategy"] = strategy;
    r["note"] = note;
    b_.progress(name + " " + size_label(name, n) + " " + get(k, "variant") + " " + get(k, "strategy") + ": " +
                fmt("%.3f", t.m.median_ms) + " ms " + t.m.check + " [" + get(r, "config") + "]");
    b_.record(k, r);
  }

  // A knowledge base that knows the sample's other sizes (trained with the first strategy)
  // derives this size's plan from them (the runtime's default derivation: the cost model fitted
  // to their runs of each device alone, the nearest size's plan where it fits no line).
  void derive(const std::string& name, std::size_t n, const std::vector<std::size_t>& sizes) {
    const Csv::Row k = key(name, n, "derived");
    if (b_.find(k) || b_.find(key(name, n, "size"))) return;
    const std::string strategy = strategies_.front();
    std::vector<std::size_t> others;
    std::string from;
    for (std::size_t o : sizes)
      if (o != n && ok(b_.find(key(name, o, "trained", strategy))) && fs::exists(kb_file(name, o, strategy)))
        others.push_back(o), from += (from.empty() ? "" : ",") + size_label(name, o);
    if (others.empty()) {
      b_.record(k, {{"check", "SKIPPED: no other size of " + name + " was trained (" + strategy + ")"}});
      return;
    }
    const fs::path kb = kb_file(name, n, "derived");
    remove_kb(kb);
    Planned t;
    std::string note;
    try {
      auto sample = sinew::samples::find(name);
      sample->prepare(n);
      auto merged = sinew::KnowledgeBase::open(kb.string());
      for (std::size_t o : others)
        merged->import_json(sinew::KnowledgeBase::open(kb_file(name, o, strategy).string())->export_json());
      merged.reset();
      sinew::RuntimeOptions o = kb_options(kb);
      o.unseen = sinew::UnseenPolicy::derive;
      t = time_planned(*make_runtime(b_.zero_copy_stand_in, o), *sample, /*train=*/false, timing());
      note = t.first.provenance == sinew::Provenance::derived ? "" : "expected provenance 'derived'";
      // Which size it came from: the source entry's features against each size's entries.
      if (auto src = sinew::KnowledgeBase::open(kb.string())->entry(t.first.derived_from))
        for (std::size_t o : others)
          for (const auto& e :
               sinew::KnowledgeBase::open(kb_file(name, o, strategy).string())->entries_for_tree(src->key.tree))
            if (e.features == src->features)
              note = "derived from " + size_label(name, o) + (note.empty() ? "" : "; " + note);
      // How: "cost_model+screen" (fitted over the sizes, then checked) or "nearest+screen".
      if (auto e = sinew::KnowledgeBase::open(kb.string())->entry(t.first.kb_entry); e && !e->strategy.empty())
        note += (note.empty() ? "" : "; ") + e->strategy;
    } catch (const std::exception& e) {
      t.m.check = std::string("ERROR: ") + e.what();
    }
    record_planned(k, t, name, n, note, "KB of " + from + " (" + strategy + ")");
  }

  // The plan a row ran, from its "config" column (Config::str()) back to a Config.
  std::optional<sinew::Config> config_of(const Csv::Row* r) const {
    if (!ok(r) || get(*r, "config").empty()) return std::nullopt;
    std::string s = get(*r, "config");  // {fission=none, overlap=2, shares=[0.5, 0.5], schedule=dynamic}
    const auto open = s.find("shares=["), close = s.find(']', open);
    if (open == std::string::npos || close == std::string::npos) return std::nullopt;
    std::string spec;
    std::size_t d = 0;
    for (const auto& x : words(std::regex_replace(s.substr(open + 8, close - open - 8), std::regex(","), " ")))
      spec += (spec.empty() ? "" : ",") + std::to_string(d++) + "=" + x;
    s.erase(open, close - open + 1);
    for (const auto& item : words(std::regex_replace(s, std::regex("[{},]"), " ")))
      if (item.find('=') != std::string::npos) spec += "," + item;
    return sinew::Config::parse(spec, rt_.devices());
  }

  // Head to head (--versus-rounds R): the oracle's best split, each trained plan, the derived plan
  // and the best single device, each run once a round in turn for R rounds on the one runtime, so
  // that the machine's swings hit every plan alike; % of oracle per round. The sweep's best point
  // is its luckiest measurement among dozens (on the H100 machine points a step apart differ by
  // 20-40% from one run to the next): this is the fair comparison.
  void versus(const std::string& name, std::size_t n) {
    const unsigned rounds = versus_rounds_;
    if (!rounds || !oracle() || b_.find(key(name, n, "versus", "oracle")) || b_.find(key(name, n, "size"))) return;
    const std::string size = std::to_string(n);
    std::vector<std::pair<std::string, const Csv::Row*>> rows{{"oracle", best(name, size, "oracle")}};
    for (const auto& st : strategies_) rows.emplace_back(st, b_.find(key(name, n, "trained", st)));
    rows.emplace_back("derived", b_.find(key(name, n, "derived")));
    const Csv::Row *gpu = best(name, size, "gpu-only"), *cpu = b_.find(key(name, n, "cpu-only"));
    rows.emplace_back("single", std::isnan(ms(cpu)) || ms(gpu) < ms(cpu) ? gpu : cpu);
    auto sample = sinew::samples::find(name);
    std::vector<std::pair<std::string, sinew::Config>> plans;
    std::vector<Job> jobs;
    try {
      sample->prepare(n);
      for (const auto& [who, r] : rows)
        if (auto c = config_of(r)) {
          plans.emplace_back(who, *c);
          jobs.push_back(sinew_job(rt_, *sample, with_config(*c)));
        }
    } catch (const std::exception& e) {
      b_.record(key(name, n, "versus", "oracle"), {{"check", std::string("ERROR: ") + e.what()}});
      return;
    }
    if (plans.empty() || plans.front().first != "oracle") return;
    b_.progress(name + " " + size_label(name, n) + " head to head: " + std::to_string(plans.size()) + " plans, " +
                std::to_string(rounds) + " rounds");
    const Interleaved runs = interleave(jobs, rounds);
    for (std::size_t j = 0; j < plans.size(); ++j) {
      Csv::Row r;
      Bench::put(r, summarize(runs.ms[j]));
      plan_fields(r, plans[j].second, name, n);
      if (runs.check != "OK") r["check"] = runs.check;
      const Stats ratio = ratios(runs.ms[0], runs.ms[j]);  // oracle / this plan, per round
      r["note"] = fmt("%.3f", ratio.median_ms) + " [" + fmt("%.2f", ratio.min_ms) + "-" + fmt("%.2f", ratio.max_ms) + "]";
      b_.record(key(name, n, "versus", plans[j].first), r);
    }
  }

  Bench& b_;
  sinew::Runtime& rt_;
  Roles roles_;
  fs::path kb_dir_;
  std::vector<std::string> strategies_;
  std::vector<unsigned> overlaps_;
  double step_ = 0.05;
  unsigned max_executions_ = 0;
  unsigned versus_rounds_ = 0;

  // ----- the report, from the CSV --------------------------------------------------------------

  const Csv::Row* best(const std::string& name, const std::string& size, const std::string& variant) {
    const Csv::Row* r = nullptr;
    for (const auto& x : b_.csv().rows())
      if (get(x, "case") == name && get(x, "size") == size && get(x, "variant") == variant && !std::isnan(ms(&x)) &&
          (!r || ms(&x) < ms(r)))
        r = &x;
    return r;
  }
};

std::string gpu_cpu(const Csv::Row* r) {  // "91.8/8.2"; several GPUs: "45.0+46.8/8.2"
  if (!r || get(*r, "cpu_share").empty()) return "-";
  std::string gpu;
  const auto per_gpu = parse_shares(get(*r, "gpu_shares"));
  for (std::size_t i = 0; per_gpu.size() > 1 && i < per_gpu.size(); ++i)
    gpu += (i ? "+" : "") + fmt("%.1f", 100 * per_gpu[i]);
  return (gpu.empty() ? fmt("%.1f", 100 * to_num(get(*r, "gpu_share"))) : gpu) + "/" +
         fmt("%.1f", 100 * to_num(get(*r, "cpu_share")));
}
std::string plan_cell(const Csv::Row* r) {
  return !r || get(*r, "fission").empty() ? "-" : get(*r, "fission") + "/" + get(*r, "overlap");
}

std::string Table1::report() {
  std::vector<std::pair<std::string, std::string>> cases;  // (sample, size) in the order measured
  for (const auto& r : b_.csv().rows())
    if (std::find(cases.begin(), cases.end(), std::pair{get(r, "case"), get(r, "size")}) == cases.end())
      cases.emplace_back(get(r, "case"), get(r, "size"));
  auto row = [&](const auto& c, const std::string& variant, const std::string& strategy = "") {
    return b_.find(key(c.first, static_cast<std::size_t>(to_num(c.second)), variant, strategy));
  };
  const std::size_t g = roles_.gpus.size();
  const std::string fig = g >= 2 ? "Fig. 3 (CPU + " + std::to_string(g) + " GPUs vs " + std::to_string(g) + " GPUs)"
                                 : "Fig. 2 (CPU + 1 GPU vs 1 GPU)";
  std::vector<std::string> h1{"sample", "size", "GPU-only ms (ovl; GPU shares)", "CPU-only ms"}, h2{"sample", "size"},
      h3{"sample", "size", "oracle best (cpu, ovl, fission)", "oracle ms"}, cats, series, fseries;
  for (const auto& st : strategies_) {
    for (const char* x : {": fission/overlap", ": parallelism", ": GPU/CPU %", ": ms", ": training (runs, s)"})
      h1.push_back(st + x);
    h2.push_back(st + " vs GPU-only");
    h3.push_back(st + " % of oracle");
    series.push_back("Sinew trained, " + st);
    fseries.push_back("trained, " + st);
  }
  for (const char* x : {"oracle vs GPU-only", "best Sinew vs best single device"}) h2.push_back(x);
  for (const char* x : {"derived: plan (fission/ovl, GPU/CPU %)", "derived ms", "derived % of oracle", "derived from"})
    h3.push_back(x);
  series.push_back("oracle (best static split)");
  fseries.push_back("derived");
  Table t1(h1), t2(h2), t3(h3);
  std::vector<std::vector<double>> sp(series.size()), frac(fseries.size());
  for (const auto& c : cases) {
    if (row(c, "size")) continue;
    const auto* gb = best(c.first, c.second, "gpu-only");
    const auto* cpu = row(c, "cpu-only");
    const auto* ob = best(c.first, c.second, "oracle");
    const std::string label = gb ? get(*gb, "size_label") : cpu ? get(*cpu, "size_label") : c.second;
    std::vector<std::string> l1{
        c.first, label,
        gb ? ms_cell(gb) + " (" + get(*gb, "overlap") + (g > 1 ? "; " + get(*gb, "gpu_shares") : "") + ")" : "-",
        ms_cell(cpu)}, l2{c.first, label}, l3{c.first, label,
           ob ? pct(to_num(get(*ob, "cpu_share"))) + ", " + get(*ob, "overlap") + ", " + get(*ob, "fission") : "-",
           ms_cell(ob)};
    const double gpu = ms(gb),
                 single = std::isnan(gpu)       ? ms(cpu)
                          : std::isnan(ms(cpu)) ? gpu
                                                : std::min(gpu, ms(cpu)),
                 oracle = ms(ob);
    double best_sinew = kNaN;
    for (std::size_t i = 0; i < strategies_.size(); ++i) {
      const auto* tr = row(c, "trained", strategies_[i]);
      l1.insert(l1.end(),
                {plan_cell(tr), tr ? get(*tr, "parallelism") : "-", gpu_cpu(tr), ms_cell(tr),
                 tr && !get(*tr, "training_executions").empty()
                     ? get(*tr, "training_executions") + ", " + fmt("%.1f", to_num(get(*tr, "training_seconds")))
                     : "-"});
      if (!std::isnan(ms(tr))) best_sinew = std::isnan(best_sinew) ? ms(tr) : std::min(best_sinew, ms(tr));
      sp[i].push_back(gpu / ms(tr));
      frac[i].push_back(oracle / ms(tr));
      l2.push_back(fmt("%.2f", gpu / ms(tr)));
      l3.push_back(fmt("%.0f%%", 100 * oracle / ms(tr)));
    }
    sp.back().push_back(gpu / oracle);
    l2.push_back(fmt("%.2f", gpu / oracle));
    l2.push_back(fmt("%.2f", single / best_sinew));
    const auto* d = row(c, "derived");
    frac.back().push_back(oracle / ms(d));
    l3.insert(l3.end(), {d && !get(*d, "fission").empty() ? plan_cell(d) + ", " + gpu_cpu(d) : "-", ms_cell(d),
                         fmt("%.0f%%", 100 * oracle / ms(d)),
                         !d                                        ? "-"
                         : get(*d, "check").starts_with("SKIPPED") ? get(*d, "check")
                         : !get(*d, "note").empty()                ? get(*d, "note")
                                                                   : get(*d, "strategy")});
    t1.add(l1), t2.add(l2), t3.add(l3);
    cats.push_back(c.first + " " + label);
  }
  std::ostringstream md, notes;
  md << b_.header(&rt_) << "Roles: " << roles_.describe(rt_) << ". Medians of up to " << b_.repeat
     << " timed runs after " << std::max(1u, b_.warmup) << " warm-up run(s) (fewer when a run is slow: about "
     << b_.point_seconds
     << " s a measurement); host data in ordinary (pageable) memory; every run checked against the sample's C++ "
        "reference. Oracle: CPU share 0..100% in steps of "
     << pct(step_)
     << " at each overlap level. Trained: a fresh knowledge base per size and strategy (training budget "
     << (max_executions_ ? std::to_string(max_executions_) : "40")
     << " executions, the model strategy at most 10 of them); the timed runs reuse the stored plan with the online "
        "balancer off.\n\n### Table 1: baselines "
        "and trained plans\n\nGPU-only: every GPU at its fastest overlap level; CPU-only: every CPU device, no "
        "fission. Parallelism: partitions at once (CPU sub-devices + GPU queues).\n\n"
     << t1.str() << "\n### Speedups: " << fig
     << "\n\nGPU-only time / Sinew's time (above 1: CPU+GPU is faster than the GPU" << (g > 1 ? "s" : "")
     << " alone); the last column: the faster of GPU-only and CPU-only / the faster trained plan.\n\n"
     << t2.str() << "\n";
  if (auto n = plot_bars(b_.file("-speedup.svg"), fig + ": speedup over GPU-only", "GPU-only time / time", cats, series,
                         sp, 1);
      n.empty())
    md << "![" << fig << "](bench_table1-speedup.svg)\n\n";
  else
    notes << "- plot: " << n << "\n";
  md << "### Against the oracle\n\nThe oracle is the fastest static split of the sweep (the same execution path, a "
        "given Config); % of oracle = oracle time / Sinew's time (above 100% is possible: Sinew's plan may lie between "
        "the sweep's points or use another fission). Derived: a knowledge base that knows only the sample's other "
        "sizes plans this one (the cost model: each device's time alone at each level fitted over the size from "
        "their training runs, the fastest predicted plan, then checked by a few runs; `nearest` where it fitted no "
        "line).\n\n"
     << t3.str() << "\n";
  if (auto n = plot_bars(b_.file("-oracle.svg"), "Sinew's plans as a fraction of the oracle", "oracle time / time",
                         cats, fseries, frac, 1);
      n.empty())
    md << "![fraction of the oracle](bench_table1-oracle.svg)\n\n";
  else
    notes << "- plot: " << n << "\n";
  // Head to head: the same plans run in turn, round after round.
  std::vector<std::string> hv{"sample", "size", "oracle plan (cpu, ovl)", "oracle ms"};
  for (const auto& st : strategies_) hv.push_back(st + " % of oracle [min-max]");
  for (const char* x : {"derived % of oracle [min-max]", "best single device % of oracle", "best single / trained"})
    hv.push_back(x);
  Table tv(hv);
  auto share_of = [](const Csv::Row* r) {
    return !ok(r) ? std::string("-") : pct(to_num(get(*r, "cpu_share"))) + ", " + get(*r, "overlap");
  };
  auto percent = [](const Csv::Row* r) {  // the note "0.950 [0.80-1.10]" as "95% [80-110]"
    if (!ok(r)) return std::string("-");
    double m = 0, lo = 0, hi = 0;
    if (std::sscanf(get(*r, "note").c_str(), "%lf [%lf-%lf]", &m, &lo, &hi) != 3) return std::string("-");
    return fmt("%.0f%%", 100 * m) + " [" + fmt("%.0f", 100 * lo) + "-" + fmt("%.0f", 100 * hi) + "]";
  };
  for (const auto& c : cases) {
    const auto* o = row(c, "versus", "oracle");
    if (!o) continue;
    const auto* single = row(c, "versus", "single");
    std::vector<std::string> l{c.first, get(*o, "size_label"), share_of(o), ms_cell(o)};
    double best_trained = kNaN;
    for (const auto& st : strategies_) {
      const auto* tr = row(c, "versus", st);
      l.push_back(percent(tr));
      if (!std::isnan(ms(tr))) best_trained = std::isnan(best_trained) ? ms(tr) : std::min(best_trained, ms(tr));
    }
    l.push_back(percent(row(c, "versus", "derived")));
    l.push_back(percent(single));
    l.push_back(fmt("%.2f", ms(single) / best_trained));
    tv.add(l);
  }
  if (!tv.empty())
    md << "### Head to head\n\nThe oracle's best split, each trained plan, the derived plan and the best single device "
          "(the faster of GPU-only and CPU-only above) run in turn on one runtime, "
       << versus_rounds_
       << " rounds (--versus-rounds): medians, and % of oracle as the median over the rounds of oracle time / the "
          "plan's time in the same round, with its range. The sweep's best point above is its luckiest among dozens "
          "measured once each; here every plan meets the same moments of the machine.\n\n"
       << tv.str() << "\n";
  std::size_t skipped = 0, warm_only = 0;
  for (const auto& r : b_.csv().rows()) {
    const std::string& c = get(r, "check");
    skipped += get(r, "variant") == "oracle" && c == "SKIPPED";
    warm_only += get(r, "variant") == "oracle" && c == "OK" && get(r, "runs") == "0";
    if (c != "OK" && c != "SKIPPED")
      notes << "- " << get(r, "case") << " " << get(r, "size") << " " << get(r, "variant") << " " << get(r, "strategy")
            << (get(r, "variant") == "oracle" ? " cpu " + pct(to_num(get(r, "cpu_share"))) + " ovl " + get(r, "overlap")
                                              : "")
            << ": " << c << "\n";
  }
  if (skipped || warm_only)
    notes << "- oracle: " << skipped << " point(s) skipped and " << warm_only
          << " timed by untimed runs only (runs = 0), "
          << "being slower than --prune x the best time so far on the slow side of the sweep\n";
  if (!notes.str().empty()) md << "### Notes\n\n" << notes.str() << "\n";
  return md.str();
}

bool failed_row(const Csv::Row& r) {
  const std::string& c = get(r, "check");
  return c != "OK" && !c.starts_with("SKIPPED");
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("samples", po::value<Names>()->default_value(Names{kSamples}, "all five")->value_name("a,b"),
                    "samples: filter_pipeline, fft, nbody, saxpy, segmentation; also cg, kmeans, pagerank")(
      "sizes", po::value<std::vector<std::string>>()->value_name("name=a,b,c"),
      "a sample's sizes in its unit (repeatable; K/M/G = 1000s, Ki/Mi = 1024s). Default: the paper's classes where "
      "they fit: filter_pipeline 1024,2048,4096 (side); fft 256,512,1024 (transforms of 512 KB); nbody "
      "16384,32768,65536; saxpy 1M,10M,50M; segmentation 1Mi,8Mi,60Mi (voxels)")(
      "strategies",
      po::value<Names>()
          ->default_value(Names{{"even_split", "cpu_assisted", "model"}}, "even_split,cpu_assisted,model")
          ->value_name("a,b"),
      "training strategies, each reported with its plan, its training executions and its % of the oracle: "
      "even_split, cpu_assisted (the searches), model (SkePU's linear time models, at most 10 executions). The "
      "first one's knowledge bases feed the derivation")(
      "overlaps", po::value<Counts>()->value_name("a,b"),
      "GPU overlap levels (default: the GPU's, 1..4; --quick the first two)")(
      "step", po::value<double>()->default_value(0.05, "0.05")->value_name("X"),
      "the oracle's step in CPU share (--quick 0.25)")(
      "prune", po::value<double>()->default_value(3)->value_name("X"),
      "the oracle skips the rest of an overlap level once a point is slower than X times the best so far and slower "
      "than the point before")("max-executions", po::value<unsigned>()->default_value(0)->value_name("N"),
                                      "training budget per strategy (0: the library's, 40; --quick 12); the model "
                                      "strategy stays within 10 of it")(
      "no-oracle", po::bool_switch(), "skip the sweep of static splits")("no-derived", po::bool_switch(),
                                                                         "skip the derived plans")(
      "versus-rounds", po::value<unsigned>()->default_value(9)->value_name("R"),
      "head to head: the oracle's best split, the trained and derived plans and the best single device in turn, R "
      "rounds, % of oracle per round (0: none; --quick 2)");
  Bench b({"bench_table1", "Table 1 and Figs. 2-3 — CPU+GPU against GPU-only, Sinew's plans against the oracle",
           "The spec's Table 1 and Figs. 2-3: per sample and size, GPU-only and CPU-only, Sinew trained with "
           "each\nstrategy, the oracle sweep of static splits, the plan derived from the other sizes; speedups as "
           "PNGs.",
           5, 2, /*resumable=*/true, columns()},
          argc, argv, own);
  std::vector<std::string> samples = b.vm["samples"].as<Names>().v;
  std::map<std::string, std::vector<std::size_t>> sizes;
  for (const auto& s : samples)
    if (!kPaperSizes.count(s)) b.fail("--samples", "unknown sample '" + s + "'");
  if (b.vm.count("sizes"))
    for (const auto& item : b.vm["sizes"].as<std::vector<std::string>>()) {
      const auto eq = item.find('=');
      const std::string name = item.substr(0, eq);
      if (eq == std::string::npos || !kPaperSizes.count(name))
        b.fail("--sizes", "'" + item + "' is not name=a,b,c with a known sample");
      boost::any v;
      try {
        validate(v, {item.substr(eq + 1)}, static_cast<Counts*>(nullptr), 0);
      } catch (const po::error&) {
        b.fail("--sizes", "bad sizes in '" + item + "' (e.g. saxpy=1M,10M,50M)");
      }
      sizes[name] = boost::any_cast<Counts>(v).v;
    }
  for (const auto& s : samples)
    if (!sizes.count(s)) sizes[s] = (b.quick ? kQuickSizes : kPaperSizes).at(s);
  clear_overrides(b.d.name, {"SINEW_CONFIG", "SINEW_STRATEGY", "SINEW_TRAIN", "SINEW_UNSEEN", "SINEW_INTERPOLATOR"});
  try {
    auto rt = make_runtime(b.zero_copy_stand_in);
    Table1 t(b, *rt);
    std::cerr << b.d.name << ": " << t.roles().describe(*rt) << "\n";
    b.csv();
    t.run(samples, sizes);
    const bool failed = std::any_of(b.csv().rows().begin(), b.csv().rows().end(), failed_row);
    return b.finish(t.report() + (b.stopped() ? "Run again with the same --out and --resume to finish.\n" : ""),
                    failed);
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
