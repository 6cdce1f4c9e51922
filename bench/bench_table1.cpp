// bench/bench_table1.cpp — the spec's Table 1 and Figs. 2-3: for each sample of the registry at
// three sizes, the GPU-only and CPU-only baselines, Sinew trained with each strategy (its plan,
// level of parallelism, shares and training cost), the oracle (a sweep of static CPU/GPU splits
// at every GPU overlap level) and Sinew's plan derived from the other sizes' knowledge; the
// speedups of CPU+GPU over GPU-only as bar charts.
//
//   bench_table1 [--samples a,b] [--sizes name=a,b,c] [--quick] [--out DIR] [--resume]
//                [--max-seconds S]
//
// Every measurement is a row of DIR/bench_table1.csv, appended as measured; DIR/bench_table1.md
// and the plots are made from that file at the end, so a run stopped by --max-seconds (or
// killed) and resumed with --resume reports everything measured by either invocation. Works with
// any number of GPUs (their shares are balanced) and without any: a CPU device driven as
// discrete stands in. See docs/BENCHMARKS.md.
#include "bench_common.hpp"
#include "output.hpp"
#include "plans.hpp"

#include <sinew/kb.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace sinew_bench;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSamples = {"filter_pipeline", "fft", "nbody", "saxpy", "segmentation"};

// The paper's parameterisation classes (Table 1), in each sample's size unit.
std::map<std::string, std::vector<std::size_t>> paper_sizes() {
  return {{"filter_pipeline", {1024, 2048, 4096}},            // image side
          {"fft", {256, 512, 1024}},                          // transforms of 512 KB: 128/256/512 MB
          {"nbody", {16384, 32768, 65536}},                   // bodies
          {"saxpy", {1000000, 10000000, 50000000}},           // elements
          {"segmentation", {1u << 20, 8u << 20, 60u << 20}}}; // voxels: 1/8/60 MB
}

std::map<std::string, std::vector<std::size_t>> quick_sizes() {
  return {{"filter_pipeline", {64, 128, 256}},
          {"fft", {2, 4, 8}},
          {"nbody", {256, 512, 1024}},
          {"saxpy", {65536, 262144, 1000000}},
          {"segmentation", {65536, 262144, 1u << 20}}};
}

// Rough host bytes a sample needs at a size (inputs, outputs, reference, training copies), to
// leave out paper classes that do not fit this machine. 0: unknown, not checked.
double estimate_bytes(const std::string& name, std::size_t n) {
  const double x = static_cast<double>(n);
  if (name == "filter_pipeline") return 4.0 * x * x * 4;  // RGBA: input, image, reference, scratch
  if (name == "fft") return 4.0 * x * 65536 * 8;          // float2 x 65536 points per transform
  if (name == "nbody") return 7.0 * x * 16;
  if (name == "saxpy") return 5.0 * x * 4;
  if (name == "segmentation") return 4.0 * x;
  return 0;
}

std::string size_label(const std::string& name, std::size_t n) {
  if (name == "filter_pipeline") return std::to_string(n) + "x" + std::to_string(n);
  if (name == "fft") return fmt("%g MB", static_cast<double>(n) * 0.5);  // 512 KB per transform
  if (name == "segmentation")
    return n % (1u << 20) == 0 ? std::to_string(n >> 20) + " MB"
           : n % 1024 == 0     ? std::to_string(n >> 10) + " KB"
                               : std::to_string(n) + " B";
  return count_label(n);
}

struct Settings {
  Common c;
  std::vector<std::string> samples = kSamples;
  std::map<std::string, std::vector<std::size_t>> sizes;  // --sizes
  std::vector<std::string> strategies{"even_split", "cpu_assisted"};
  std::vector<unsigned> overlaps;  // empty: the first GPU's levels
  double step = 0.05;
  bool step_set = false;
  double prune = 3;
  std::size_t max_executions = 0;  // 0: the library's default
  bool oracle = true, derived = true;
};

const std::vector<std::string> kColumns = {
    "sample",   "size",      "size_label", "variant",   "strategy", "cpu_share", "gpu_share", "gpu_shares",
    "fission",  "overlap",   "config",     "provenance", "parallelism", "median_ms", "min_ms", "max_ms",
    "iqr_ms",   "runs",      "training_executions", "training_seconds", "note", "check"};

// Rows of the CSV by what they measured.
struct Key {
  std::string sample;
  std::size_t size;
  std::string variant, strategy;
  long share_permille = -1;
  unsigned overlap = 0;
  auto tie() const { return std::tie(sample, size, variant, strategy, share_permille, overlap); }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
};
long permille(double share) { return std::isnan(share) ? -1 : std::lround(share * 1000); }

bool row_ok(const CsvLog::Row& r) { return r.at("check") == "OK"; }
bool row_failed(const CsvLog::Row& r) {
  const auto& c = r.at("check");
  return c != "OK" && c.rfind("SKIPPED", 0) != 0;
}

class Table1 {
 public:
  Table1(Settings s, CsvLog& csv, sinew::Runtime& rt)
      : s_(std::move(s)), csv_(csv), rt_(rt), roles_(Roles::of(rt)), deadline_(s_.c.max_seconds),
        kb_dir_(s_.c.out / "bench_table1-kb") {
    fs::create_directories(kb_dir_);
    overlaps_ = s_.overlaps.empty() ? roles_.overlaps : s_.overlaps;
    if (s_.c.quick && s_.overlaps.empty() && overlaps_.size() > 2) overlaps_.resize(2);
    for (std::size_t i = 0; i < csv_.rows().size(); ++i) index(i);
  }

  // Measures everything not measured yet. False when --max-seconds stopped it.
  bool run() {
    for (const auto& name : s_.samples) {
      const auto& sizes = s_.sizes.at(name);
      for (std::size_t n : sizes) {
        if (stopped()) return false;
        measure_size(name, n);
      }
      if (s_.derived)
        for (std::size_t n : sizes) {
          if (stopped()) return false;
          derive_size(name, n, sizes);
        }
    }
    return !stopped();
  }

  const Roles& roles() const { return roles_; }
  const std::vector<unsigned>& overlaps() const { return overlaps_; }

 private:
  bool stopped() const { return deadline_.check(s_.c.program); }

  void index(std::size_t i) {
    const auto& r = csv_.rows()[i];
    // The key of each variant: what tells its rows apart (see the Key{...} of each measurement).
    const std::string& v = r.at("variant");
    Key k{r.at("sample"), static_cast<std::size_t>(to_num(r.at("size"))), v, v == "trained" ? r.at("strategy") : "",
          v == "oracle" ? permille(to_num(r.at("cpu_share"))) : -1,
          v == "oracle" || v == "gpu-only" ? static_cast<unsigned>(to_num(r.at("overlap"))) : 0u};
    rows_[k] = i;
  }
  const CsvLog::Row* find(const Key& k) const {
    auto it = rows_.find(k);
    return it == rows_.end() ? nullptr : &csv_.rows()[it->second];
  }
  void append(CsvLog::Row r, const Key& k) {
    r["sample"] = k.sample;
    r["size"] = std::to_string(k.size);
    r["size_label"] = size_label(k.sample, k.size);
    r["variant"] = k.variant;
    if (!r.count("strategy")) r["strategy"] = k.strategy;
    csv_.append(r);
    rows_[k] = csv_.rows().size() - 1;
  }
  static void put(CsvLog::Row& r, const Measurement& m) {
    r["median_ms"] = num(m.median_ms);
    r["min_ms"] = num(m.min_ms);
    r["max_ms"] = num(m.max_ms);
    r["iqr_ms"] = num(m.iqr_ms);
    r["runs"] = std::to_string(m.runs);
    r["check"] = m.check;
  }
  void put_plan(CsvLog::Row& r, const sinew::Config& c) const {
    const SplitShares sh = shares_of(c, roles_);
    r["cpu_share"] = num(sh.cpu);
    r["gpu_share"] = num(sh.gpu);
    r["gpu_shares"] = join_shares(sh.per_gpu);
    r["fission"] = c.fission;
    r["overlap"] = std::to_string(c.overlap);
    r["config"] = c.str();
  }
  static std::string get(const CsvLog::Row& r, const std::string& column) {
    auto it = r.find(column);
    return it == r.end() ? std::string() : it->second;
  }
  void progress(const Key& k, const CsvLog::Row& r) const {
    std::cerr << "  [" << fmt("%6.1f", seconds_since_start()) << " s] " << k.sample << " " << size_label(k.sample, k.size)
              << " " << k.variant << (k.strategy.empty() ? "" : " " + k.strategy)
              << (k.variant == "gpu-only" ? " ovl " + std::to_string(k.overlap) : "") << ": "
              << fmt("%.3f", to_num(get(r, "median_ms"))) << " ms " << get(r, "check")
              << (get(r, "config").empty() ? "" : " [" + get(r, "config") + "]") << "\n";
  }

  fs::path kb_file(const std::string& name, std::size_t n, const std::string& what) const {
    return kb_dir_ / (name + "-" + std::to_string(n) + "-" + what + ".sqlite");
  }
  static void remove_kb(const fs::path& p) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(p.string() + suffix, ec);
  }
  sinew::RuntimeOptions kb_options(const fs::path& kb) const {
    sinew::RuntimeOptions o;
    o.kb_path = kb.string();
    if (s_.max_executions) o.training.max_executions = s_.max_executions;
    o.quiet = !s_.c.verbose;
    return o;
  }
  double budget_ms() const { return s_.c.point_seconds * 1000; }

  // Whether every row of a size is in the CSV already (resumed): then it is not even prepared.
  bool measured(const std::string& name, std::size_t n) const {
    std::vector<Key> keys;
    if (!roles_.gpus.empty())
      for (unsigned ov : overlaps_) keys.push_back({name, n, "gpu-only", "", -1, ov});
    if (!roles_.cpus.empty()) keys.push_back({name, n, "cpu-only", "", -1, 0});
    for (const auto& st : s_.strategies) keys.push_back({name, n, "trained", st, -1, 0});
    if (s_.oracle && roles_.hybrid())
      for (unsigned ov : overlaps_)
        for (double share : sweep_shares(s_.step)) keys.push_back({name, n, "oracle", "", permille(share), ov});
    return std::all_of(keys.begin(), keys.end(), [&](const Key& k) { return find(k) != nullptr; });
  }

  // GPU-only at each overlap level, CPU-only, trained with each strategy, the oracle.
  void measure_size(const std::string& name, std::size_t n) {
    const Key size_key{name, n, "size", "", -1, 0};
    if (find(size_key)) return;  // could not be prepared before: said so then
    if (measured(name, n)) return;
    auto sample = sinew::samples::find(name);
    if (const double need = estimate_bytes(name, n); need > 0) {
      const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
      std::string why;
      if (avail > 0 && need > avail) why = "needs about " + fmt("%.1f", need / 1e9) + " GB of host memory, " + fmt("%.1f", avail / 1e9) + " GB free";
      for (const auto& d : rt_.devices())
        if (need / 2 > static_cast<double>(d.global_memory))
          why = "needs about " + fmt("%.1f", need / 2e9) + " GB on " + d.id() + ", which has " +
                fmt("%.1f", static_cast<double>(d.global_memory) / 1e9);
      if (!why.empty()) {
        CsvLog::Row r;
        r["check"] = "SKIPPED: does not fit this machine (" + why + ")";
        append(r, size_key);
        std::cerr << s_.c.program << ": " << name << " " << n << ": " << r["check"] << "\n";
        return;
      }
    }
    try {
      sample->prepare(n);
    } catch (const std::exception& e) {
      CsvLog::Row r;
      r["check"] = std::string("ERROR: prepare: ") + e.what();
      append(r, size_key);
      std::cerr << s_.c.program << ": " << name << " " << n << ": " << r["check"] << "\n";
      return;
    }
    std::cerr << s_.c.program << ": " << name << " " << size_label(name, n) << "\n";
    const unsigned warmup = s_.c.warmup, repeat = s_.c.repeat;

    // 1. GPU-only (every GPU; several GPUs get balanced shares) at each overlap level.
    if (!roles_.gpus.empty())
      for (unsigned ov : overlaps_) {
        const Key k{name, n, "gpu-only", "", -1, ov};
        if (find(k)) continue;
        if (stopped()) return;
        CsvLog::Row r;
        std::vector<double> w;
        try {
          w = balance_gpus(rt_, roles_, *sample, ov);
          const sinew::Config c = make_plan(roles_, 0, w, "none", ov);
          put_plan(r, c);
          sinew::Report last;
          put(r, time_sinew(rt_, *sample, with_config(c), warmup, repeat, &last, nullptr, budget_ms()));
          r["parallelism"] = std::to_string(parallelism(last));
          r["provenance"] = "manual";
          if (roles_.gpus.size() > 1) r["note"] = "GPU shares balanced by measurement";
        } catch (const std::exception& e) {
          r["check"] = std::string("ERROR: ") + e.what();
        }
        r["overlap"] = std::to_string(ov);
        append(r, k);
        progress(k, r);
      }

    // 2. CPU-only (every CPU device, no fission).
    if (!roles_.cpus.empty()) {
      const Key k{name, n, "cpu-only", "", -1, 0};
      if (!find(k) && !stopped()) {
        CsvLog::Row r;
        const sinew::Config c = make_plan(roles_, 1, {}, "none", 1);
        put_plan(r, c);
        sinew::Report last;
        put(r, time_sinew(rt_, *sample, with_config(c), warmup, repeat, &last, nullptr, budget_ms()));
        r["parallelism"] = std::to_string(parallelism(last));
        r["provenance"] = "manual";
        append(r, k);
        progress(k, r);
      }
    }

    // 3. Sinew trained by the knowledge base with each strategy, in a runtime of its own whose
    // knowledge base (a file per size: the derivation below reads it) starts empty.
    for (const auto& strategy : s_.strategies) {
      const Key k{name, n, "trained", strategy, -1, 0};
      if (find(k)) continue;
      if (stopped()) return;
      const fs::path kb = kb_file(name, n, strategy);
      remove_kb(kb);
      sinew::RuntimeOptions o = kb_options(kb);
      o.training.strategy = sinew::parse::choice<sinew::Strategy>(strategy, "--strategies");
      CsvLog::Row r;
      {
        auto trt = make_runtime(false, o);
        std::cerr << "  [" << fmt("%6.1f", seconds_since_start()) << " s] " << name << " " << size_label(name, n)
                  << " training (" << strategy << ")...\n";
        const PlannedTiming t = time_planned(*trt, *sample, /*train=*/true, warmup, repeat, budget_ms());
        put(r, t.m);
        if (t.m.ok() || t.first.training_executions > 0) {
          put_plan(r, t.first.config);
          r["provenance"] = sinew::to_string(t.first.provenance);
          r["parallelism"] = std::to_string(parallelism(t.last.partitions.empty() ? t.first : t.last));
          r["training_executions"] = std::to_string(t.first.training_executions);
          r["training_seconds"] = num(t.first.training_seconds);
          if (t.first.provenance != sinew::Provenance::trained) r["note"] = "expected provenance 'trained'";
          if (s_.c.verbose) std::cerr << t.last.str() << "\n";
        }
      }
      append(r, k);
      progress(k, r);
    }

    // 4. The oracle: static splits at the first strategy's trained fission, each overlap level.
    if (s_.oracle && roles_.hybrid()) oracle(name, n, *sample);
  }

  void oracle(const std::string& name, std::size_t n, sinew::samples::Sample& sample) {
    SweepSpec spec;
    spec.shares = sweep_shares(s_.step);
    spec.overlaps = overlaps_;
    spec.prune = s_.prune;
    spec.warmup = s_.c.warmup;
    spec.repeat = s_.c.repeat;
    spec.budget_ms = budget_ms();
    double best = std::numeric_limits<double>::quiet_NaN();
    auto consider = [&](const CsvLog::Row* r) {
      if (r && row_ok(*r) && !std::isnan(to_num(r->at("median_ms"))))
        best = std::isnan(best) ? to_num(r->at("median_ms")) : std::min(best, to_num(r->at("median_ms")));
    };
    if (const auto* t = find({name, n, "trained", s_.strategies.front(), -1, 0}); t && row_ok(*t) && !t->at("fission").empty())
      spec.fission = t->at("fission");
    for (const auto& st : s_.strategies) consider(find({name, n, "trained", st, -1, 0}));
    consider(find({name, n, "cpu-only", "", -1, 0}));
    for (unsigned ov : overlaps_) {
      const auto* g = find({name, n, "gpu-only", "", -1, ov});
      consider(g);
      if (g && row_ok(*g) && roles_.gpus.size() > 1) spec.gpu_weights[ov] = parse_shares(g->at("gpu_shares"));
    }
    auto point_of = [&](const CsvLog::Row& r, double share, unsigned ov) {
      SweepPoint p;
      p.cpu_share = share;
      p.overlap = ov;
      p.m.median_ms = to_num(r.at("median_ms"));
      p.m.min_ms = to_num(r.at("min_ms"));
      p.m.max_ms = to_num(r.at("max_ms"));
      p.m.iqr_ms = to_num(r.at("iqr_ms"));
      p.m.runs = static_cast<unsigned>(to_num(r.at("runs")));
      p.m.check = r.at("check").rfind("SKIPPED", 0) == 0 ? "OK" : r.at("check");
      p.skipped = r.at("check").rfind("SKIPPED", 0) == 0;
      p.note = r.at("note");
      return p;
    };
    auto row_of = [&](const SweepPoint& p) {
      CsvLog::Row r;
      put_plan(r, p.config);
      r["cpu_share"] = num(p.cpu_share);
      r["overlap"] = std::to_string(p.overlap);
      r["provenance"] = "manual";
      r["note"] = p.note;
      if (p.skipped) {
        r["check"] = "SKIPPED";
        r["runs"] = "0";
      } else {
        put(r, p.m);
      }
      return r;
    };
    const KnownPoint known = [&](double share, unsigned ov) -> std::optional<SweepPoint> {
      const Key k{name, n, "oracle", "", permille(share), ov};
      if (const auto* r = find(k)) return point_of(*r, share, ov);
      // No CPU work: the same plan as the GPU-only row at this overlap level (its GPU shares).
      if (permille(share) == 0)
        if (const auto* g = find({name, n, "gpu-only", "", -1, ov}); g && row_ok(*g)) {
          SweepPoint p = point_of(*g, 0, ov);
          p.config = make_plan(roles_, 0, spec.gpu_weights.count(ov) ? spec.gpu_weights[ov] : std::vector<double>{},
                               spec.fission, ov);
          p.note = "same plan as the gpu-only row";
          append(row_of(p), k);
          return p;
        }
      return std::nullopt;
    };
    const auto done = [&](const SweepPoint& p) {
      append(row_of(p), Key{name, n, "oracle", "", permille(p.cpu_share), p.overlap});
    };
    sweep_splits(rt_, roles_, sample, spec, best, known, done, [&] { return stopped(); });
  }

  // Sinew with a knowledge base that knows the sample's other sizes (trained with the first
  // strategy): the plan for this size is derived from the nearest of them.
  void derive_size(const std::string& name, std::size_t n, const std::vector<std::size_t>& sizes) {
    const Key k{name, n, "derived", "", -1, 0};
    if (find(k) || find({name, n, "size", "", -1, 0})) return;
    const std::string strategy = s_.strategies.front();
    std::vector<std::size_t> others;
    for (std::size_t o : sizes)
      if (o != n)
        if (const auto* t = find({name, o, "trained", strategy, -1, 0}); t && row_ok(*t) && fs::exists(kb_file(name, o, strategy)))
          others.push_back(o);
    CsvLog::Row r;
    if (others.empty()) {
      r["check"] = "SKIPPED: no other size of " + name + " was trained (" + strategy + ")";
      append(r, k);
      return;
    }
    std::string from;
    for (std::size_t o : others) from += (from.empty() ? "" : ",") + size_label(name, o);
    r["strategy"] = "KB of " + from + " (" + strategy + ")";
    auto sample = sinew::samples::find(name);
    try {
      sample->prepare(n);
    } catch (const std::exception& e) {
      r["check"] = std::string("ERROR: prepare: ") + e.what();
      append(r, k);
      return;
    }
    const fs::path kb = kb_file(name, n, "derived");
    remove_kb(kb);
    try {
      auto merged = sinew::KnowledgeBase::open(kb.string());
      for (std::size_t o : others) merged->import_json(sinew::KnowledgeBase::open(kb_file(name, o, strategy).string())->export_json());
    } catch (const std::exception& e) {
      r["check"] = std::string("ERROR: merging the knowledge bases: ") + e.what();
      append(r, k);
      return;
    }
    sinew::RuntimeOptions o = kb_options(kb);
    o.unseen = sinew::UnseenPolicy::derive;
    PlannedTiming t;
    {
      auto drt = make_runtime(false, o);
      t = time_planned(*drt, *sample, /*train=*/false, s_.c.warmup, s_.c.repeat, budget_ms());
    }
    put(r, t.m);
    put_plan(r, t.first.config);
    r["provenance"] = sinew::to_string(t.first.provenance);
    r["parallelism"] = std::to_string(parallelism(t.last.partitions.empty() ? t.first : t.last));
    // Which size it was derived from: the source entry's features against each size's entries.
    std::string note = t.first.provenance == sinew::Provenance::derived ? "" : "expected provenance 'derived'";
    try {
      auto merged = sinew::KnowledgeBase::open(kb.string());
      if (auto src = merged->entry(t.first.derived_from))
        for (std::size_t o : others)
          for (const auto& e : sinew::KnowledgeBase::open(kb_file(name, o, strategy).string())->entries_for_tree(src->key.tree))
            if (e.features == src->features) note = "derived from " + size_label(name, o) + (note.empty() ? "" : "; " + note);
    } catch (const std::exception&) {
    }
    r["note"] = note;
    append(r, k);
    progress(k, r);
  }

  Settings s_;
  CsvLog& csv_;
  sinew::Runtime& rt_;
  Roles roles_;
  Deadline deadline_;
  fs::path kb_dir_;
  std::vector<unsigned> overlaps_;
  std::map<Key, std::size_t> rows_;
};

// ----- the report, from the CSV ----------------------------------------------------------------

struct Summary {
  const std::vector<CsvLog::Row>& rows;
  const Settings& s;
  const Roles& roles;

  const CsvLog::Row* row(const std::string& sample, const std::string& size, const std::string& variant,
                         const std::string& strategy = "") const {
    for (const auto& r : rows)
      if (r.at("sample") == sample && r.at("size") == size && r.at("variant") == variant &&
          (strategy.empty() || r.at("strategy") == strategy))
        return &r;
    return nullptr;
  }
  // The fastest OK row of a variant (gpu-only over its overlap levels, oracle over its points).
  const CsvLog::Row* best(const std::string& sample, const std::string& size, const std::string& variant) const {
    const CsvLog::Row* b = nullptr;
    for (const auto& r : rows)
      if (r.at("sample") == sample && r.at("size") == size && r.at("variant") == variant && row_ok(r) &&
          !std::isnan(to_num(r.at("median_ms"))) && (!b || to_num(r.at("median_ms")) < to_num(b->at("median_ms"))))
        b = &r;
    return b;
  }
  static double ms(const CsvLog::Row* r) { return r && row_ok(*r) ? to_num(r->at("median_ms")) : NAN; }
  static std::string ms_cell(const CsvLog::Row* r) {
    if (!r) return "-";
    if (r->at("check").rfind("SKIPPED", 0) == 0) return "skipped";
    if (!row_ok(*r)) return "FAILED";
    return fmt("%.3f", to_num(r->at("median_ms")));
  }
  // "91.8/8.2"; with several GPUs each GPU's share: "45.0+46.8/8.2".
  static std::string gpu_cpu(const CsvLog::Row* r) {
    if (!r || r->at("cpu_share").empty()) return "-";
    const auto per_gpu = parse_shares(r->at("gpu_shares"));
    std::string gpu;
    if (per_gpu.size() > 1)
      for (std::size_t i = 0; i < per_gpu.size(); ++i) gpu += (i ? "+" : "") + fmt("%.1f", 100 * per_gpu[i]);
    else
      gpu = fmt("%.1f", 100 * to_num(r->at("gpu_share")));
    return gpu + "/" + fmt("%.1f", 100 * to_num(r->at("cpu_share")));
  }
  static std::string plan_cell(const CsvLog::Row* r) {
    if (!r || r->at("fission").empty()) return "-";
    return r->at("fission") + "/" + r->at("overlap");
  }

  // (sample, size) in the order measured.
  std::vector<std::pair<std::string, std::string>> cases() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& r : rows) {
      std::pair<std::string, std::string> c{r.at("sample"), r.at("size")};
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
    return out;
  }
  std::string label(const std::pair<std::string, std::string>& c) const {
    for (const auto& r : rows)
      if (r.at("sample") == c.first && r.at("size") == c.second) return r.at("size_label");
    return c.second;
  }

  std::string markdown(const Common& c, const sinew::Runtime& rt, std::vector<std::string>& plot_notes) const {
    std::ostringstream md;
    const std::size_t g = roles.gpus.size();
    const std::string fig = g >= 2 ? "Fig. 3 (CPU + " + std::to_string(g) + " GPUs vs " + std::to_string(g) + " GPUs)"
                                   : "Fig. 2 (CPU + 1 GPU vs 1 GPU)";
    md << "## bench_table1: Table 1 and " << (g >= 2 ? "Fig. 3" : "Fig. 2")
       << " — CPU+GPU against GPU-only, Sinew's plans against the oracle\n\n"
       << md_run_header(c, &rt);
    md << "Roles: " << roles.describe(rt) << ". Medians of up to " << s.c.repeat << " timed runs after "
       << std::max(1u, s.c.warmup) << " warm-up run(s) (fewer when a run is slow: about " << s.c.point_seconds
       << " s a measurement); host data in ordinary (pageable) memory; every run checked against the sample's "
          "C++ reference. Oracle: CPU share 0..100% in steps of "
       << pct(s.step) << " at each overlap level; Sinew trained: a fresh knowledge base per size and strategy "
       << "(training budget " << (s.max_executions ? std::to_string(s.max_executions) : std::string("40"))
       << " executions); timed runs reuse the stored plan with the online balancer off. Rows: `bench_table1.csv`.\n\n";

    // Table 1.
    MdTable t1({"sample", "size", "GPU-only ms (ovl; GPU shares)", "CPU-only ms",
                s.strategies[0] + ": fission/overlap", "parallelism", "GPU/CPU %", "ms", "training (runs, s)",
                s.strategies.size() > 1 ? s.strategies[1] + ": fission/overlap" : "", "parallelism", "GPU/CPU %", "ms",
                "training (runs, s)"});
    for (const auto& cs : cases()) {
      if (row(cs.first, cs.second, "size")) continue;
      const auto* gbest = best(cs.first, cs.second, "gpu-only");
      std::vector<std::string> line{cs.first, label(cs)};
      line.push_back(gbest ? ms_cell(gbest) + " (" + gbest->at("overlap") + (g > 1 ? "; " + gbest->at("gpu_shares") : "") + ")"
                           : (row(cs.first, cs.second, "gpu-only") ? "FAILED" : "-"));
      line.push_back(ms_cell(row(cs.first, cs.second, "cpu-only")));
      for (std::size_t i = 0; i < 2; ++i) {
        const CsvLog::Row* tr = i < s.strategies.size() ? row(cs.first, cs.second, "trained", s.strategies[i]) : nullptr;
        line.push_back(plan_cell(tr));
        line.push_back(tr && !tr->at("parallelism").empty() ? tr->at("parallelism") : "-");
        line.push_back(gpu_cpu(tr));
        line.push_back(ms_cell(tr));
        line.push_back(tr && !tr->at("training_executions").empty()
                           ? tr->at("training_executions") + ", " + fmt("%.1f", to_num(tr->at("training_seconds")))
                           : "-");
      }
      t1.add(line);
    }
    md << "### Table 1: baselines and trained plans\n\n"
       << "GPU-only: every GPU at its fastest overlap level" << (g > 1 ? " (shares between the GPUs balanced)" : "")
       << "; CPU-only: every CPU device, no fission. Fission/overlap, level of parallelism (partitions at once: "
          "CPU sub-devices + GPU queues) and the GPU/CPU distribution of the plan the knowledge base trained.\n\n"
       << t1.str() << "\n";

    // Speedups (Figs. 2-3).
    std::vector<std::string> cats;
    std::vector<std::vector<double>> sp(s.strategies.size() + 1), frac(s.strategies.size() + 1);
    MdTable t2({"sample", "size"});
    {
      std::vector<std::string> h{"sample", "size"};
      for (const auto& st : s.strategies) h.push_back(st + " vs GPU-only");
      h.push_back("oracle vs GPU-only");
      h.push_back("best Sinew vs best single device");
      t2 = MdTable(h);
    }
    MdTable t3({"sample", "size", "oracle best (cpu, ovl, fission)", "oracle ms"});
    {
      std::vector<std::string> h{"sample", "size", "oracle best (cpu, ovl, fission)", "oracle ms"};
      for (const auto& st : s.strategies) h.push_back(st + " % of oracle");
      h.push_back("derived: plan (fission/ovl, GPU/CPU %)");
      h.push_back("derived ms");
      h.push_back("derived % of oracle");
      h.push_back("derived from");
      t3 = MdTable(h);
    }
    for (const auto& cs : cases()) {
      if (row(cs.first, cs.second, "size")) continue;
      const double gpu = ms(best(cs.first, cs.second, "gpu-only"));
      const double cpu = ms(row(cs.first, cs.second, "cpu-only"));
      const double single = std::isnan(gpu) ? cpu : std::isnan(cpu) ? gpu : std::min(gpu, cpu);
      const auto* ob = best(cs.first, cs.second, "oracle");
      const double oracle = ms(ob);
      cats.push_back(cs.first + " " + label(cs));
      std::vector<std::string> l2{cs.first, label(cs)}, l3{cs.first, label(cs)};
      double best_sinew = NAN;
      for (std::size_t i = 0; i < s.strategies.size(); ++i) {
        const double t = ms(row(cs.first, cs.second, "trained", s.strategies[i]));
        if (!std::isnan(t)) best_sinew = std::isnan(best_sinew) ? t : std::min(best_sinew, t);
        sp[i].push_back(gpu / t);
        frac[i].push_back(oracle / t);
        l2.push_back(fmt("%.2f", gpu / t));
      }
      sp.back().push_back(gpu / oracle);
      l2.push_back(fmt("%.2f", gpu / oracle));
      l2.push_back(fmt("%.2f", single / best_sinew));
      t2.add(l2);
      l3.push_back(ob ? pct(to_num(ob->at("cpu_share"))) + ", " + ob->at("overlap") + ", " + ob->at("fission") : "-");
      l3.push_back(ms_cell(ob));
      for (std::size_t i = 0; i < s.strategies.size(); ++i)
        l3.push_back(fmt("%.0f%%", 100 * oracle / ms(row(cs.first, cs.second, "trained", s.strategies[i]))));
      const auto* d = row(cs.first, cs.second, "derived");
      const double dt = ms(d);
      frac.back().push_back(oracle / dt);
      l3.push_back(d && !d->at("fission").empty() ? plan_cell(d) + ", " + gpu_cpu(d) : "-");
      l3.push_back(ms_cell(d));
      l3.push_back(fmt("%.0f%%", 100 * oracle / dt));
      l3.push_back(!d                          ? "-"
                   : d->at("check").rfind("SKIPPED", 0) == 0 ? d->at("check")
                   : !d->at("note").empty()    ? d->at("note")
                                               : d->at("strategy"));
      t3.add(l3);
    }
    md << "### Speedups: " << fig << "\n\n"
       << "GPU-only time / Sinew's time (above 1: CPU+GPU is faster than the GPU" << (g > 1 ? "s" : "")
       << " alone); the last column: the faster of GPU-only and CPU-only / the faster trained plan.\n\n"
       << t2.str() << "\n";
    std::vector<std::string> series;
    for (const auto& st : s.strategies) series.push_back("Sinew trained, " + st);
    series.push_back("oracle (best static split)");
    const std::string fig_note = plot_bars(c.png("-speedup"), fig + ": speedup over GPU-only", "GPU-only time / time",
                                           cats, series, sp, 1.0);
    if (fig_note.empty()) md << "![" << fig << "](bench_table1-speedup.png)\n\n";
    else plot_notes.push_back(fig_note);

    md << "### Against the oracle\n\n"
       << "The oracle is the fastest static split of the sweep (the same execution path, a given Config); % of "
          "oracle = oracle time / Sinew's time (100%: as fast as the best split found; above 100% is possible: "
          "Sinew's plan may lie between the sweep's points or use another fission). Derived: a knowledge base "
          "that knows only the sample's other sizes plans this one by nearest-neighbour derivation.\n\n"
       << t3.str() << "\n";
    std::vector<std::string> fseries;
    for (const auto& st : s.strategies) fseries.push_back("trained, " + st);
    fseries.push_back("derived");
    const std::string oracle_note = plot_bars(c.png("-oracle"), "Sinew's plans as a fraction of the oracle",
                                              "oracle time / time", cats, fseries, frac, 1.0);
    if (oracle_note.empty()) md << "![fraction of the oracle](bench_table1-oracle.png)\n\n";
    else plot_notes.push_back(oracle_note);

    // What failed or was left out.
    std::ostringstream notes;
    for (const auto& r : rows)
      if (!row_ok(r) && r.at("check") != "SKIPPED")
        notes << "- " << r.at("sample") << " " << r.at("size_label") << " " << r.at("variant")
              << (r.at("strategy").empty() ? "" : " " + r.at("strategy"))
              << (r.at("variant") == "oracle" ? " cpu " + pct(to_num(r.at("cpu_share"))) : "")
              << (r.at("variant") == "oracle" || r.at("variant") == "gpu-only" ? " ovl " + r.at("overlap") : "")
              << ": " << r.at("check") << "\n";
    std::size_t skipped = 0, warm_only = 0;
    for (const auto& r : rows) {
      if (r.at("variant") == "oracle" && r.at("check") == "SKIPPED") ++skipped;
      if (r.at("variant") == "oracle" && row_ok(r) && r.at("runs") == "0") ++warm_only;
    }
    if (skipped || warm_only)
      notes << "- oracle: " << skipped << " point(s) skipped and " << warm_only
            << " timed by two untimed runs only (runs = 0), being slower than " << fmt("%g", s.prune)
            << "x the best time so far on the slow side of the sweep (`--prune`)\n";
    for (const auto& n : plot_notes) notes << "- plot: " << n << "\n";
    if (!notes.str().empty()) md << "### Notes\n\n" << notes.str() << "\n";
    return md.str();
  }
};

// Each of these, when set, would change what the program measures behind its back.
void clear_overrides(const std::string& program) {
  for (const char* v : {"SINEW_CONFIG", "SINEW_STRATEGY", "SINEW_TRAIN", "SINEW_UNSEEN", "SINEW_INTERPOLATOR"})
    if (const char* x = std::getenv(v); x && *x) {
      std::cerr << program << ": note: ignoring " << v << "=" << x << " (the program sets what it measures itself)\n";
      unsetenv(v);
    }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  Cli cli(
      "The spec's Table 1 and Figs. 2-3. For each sample (filter_pipeline, fft, nbody, saxpy,\n"
      "segmentation) at three sizes: GPU-only (every GPU, best overlap level) and CPU-only times;\n"
      "Sinew trained by a fresh knowledge base with each strategy (plan, level of parallelism,\n"
      "GPU/CPU shares, training cost); the oracle, a sweep of static CPU/GPU splits at every GPU\n"
      "overlap level; Sinew's plan derived from a knowledge base that knows the other sizes; the\n"
      "speedups as PNG bar charts. Several GPUs: GPU-only uses them all, their shares balanced.\n");
  cli.section("What to run");
  cli.option("--samples", "a,b", "samples (default: all five)", [&](const std::string& v) {
    s.samples.clear();
    std::stringstream ss(v);
    std::string x;
    while (std::getline(ss, x, ','))
      if (!x.empty()) {
        if (std::find(kSamples.begin(), kSamples.end(), x) == kSamples.end())
          cli.fail("--samples", "unknown sample '" + x + "' (choose from filter_pipeline, fft, nbody, saxpy, segmentation)");
        s.samples.push_back(x);
      }
    if (s.samples.empty()) cli.fail("--samples", "empty list");
  });
  cli.option("--sizes", "name=a,b,c",
             "a sample's sizes in its unit (may be repeated; K/M/G = 1000s, Ki/Mi =\n"
             "1024s). Defaults: the paper's classes where they fit the machine:\n"
             "filter_pipeline 1024,2048,4096 (side); fft 256,512,1024 (transforms\n"
             "of 512 KB); nbody 16384,32768,65536; saxpy 1M,10M,50M; segmentation\n"
             "1Mi,8Mi,60Mi (voxels)",
             [&](const std::string& v) {
               std::stringstream ss(v);
               std::string item;
               while (std::getline(ss, item, ';')) {
                 const auto eq = item.find('=');
                 if (eq == std::string::npos) cli.fail("--sizes", "'" + item + "' is not name=a,b,c (e.g. saxpy=1M,10M,50M)");
                 const std::string name = item.substr(0, eq);
                 if (std::find(kSamples.begin(), kSamples.end(), name) == kSamples.end())
                   cli.fail("--sizes", "unknown sample '" + name + "'");
                 s.sizes[name] = cli.to_counts("--sizes", item.substr(eq + 1));
               }
             });
  cli.option("--strategies", "a,b", "training strategies (default even_split,cpu_assisted; the first\none's knowledge bases feed the derivation)",
             [&](const std::string& v) {
               s.strategies.clear();
               std::stringstream ss(v);
               std::string x;
               while (std::getline(ss, x, ','))
                 if (!x.empty()) {
                   if (x != "even_split" && x != "cpu_assisted")
                     cli.fail("--strategies", "unknown strategy '" + x + "' (even_split or cpu_assisted)");
                   s.strategies.push_back(x);
                 }
               if (s.strategies.empty()) cli.fail("--strategies", "empty list");
             });
  cli.option("--overlaps", "a,b", "GPU overlap levels for GPU-only and the oracle (default: the GPU's\nlevels, 1..4; --quick the first two)",
             [&](const std::string& v) {
               s.overlaps = cli.to_unsigneds("--overlaps", v);
               for (unsigned o : s.overlaps)
                 if (o < 1 || o > 16) cli.fail("--overlaps", "levels are 1..16");
             });
  cli.option("--step", "X", "the oracle's step in CPU share (default 0.05; --quick 0.25)", [&](const std::string& v) {
    s.step = cli.to_double("--step", v, 0.001, 1);
    s.step_set = true;
  });
  cli.option("--prune", "X",
             "the oracle skips the rest of an overlap level once a point is slower\nthan X times the best so far and slower than the point before (default 3)",
             [&](const std::string& v) { s.prune = cli.to_double("--prune", v, 1, 1e9); });
  cli.option("--max-executions", "N", "training budget per strategy (default: the library's, 40; --quick 12)",
             [&](const std::string& v) { s.max_executions = std::max(1u, cli.to_unsigned("--max-executions", v)); });
  cli.flag("--no-oracle", "skip the sweep of static splits", [&] { s.oracle = false; });
  cli.flag("--no-derived", "skip the derived plans", [&] { s.derived = false; });
  add_common(cli, s.c, 5, /*resumable=*/true);
  cli.parse(argc, argv);
  finish_common(cli, s.c, 2);
  if (s.c.quick) {
    if (!s.step_set) s.step = 0.25;
    if (!s.max_executions) s.max_executions = 12;
  }
  const auto defaults = s.c.quick ? quick_sizes() : paper_sizes();
  for (const auto& name : s.samples)
    if (!s.sizes.count(name)) s.sizes[name] = defaults.at(name);

  clear_overrides(s.c.program);
  try {
    CsvLog csv(s.c.csv(), kColumns, s.c.resume);
    if (csv.resumed()) std::cerr << s.c.program << ": resuming: " << csv.resumed() << " row(s) in " << csv.path().string() << "\n";
    auto rt = make_runtime(false);
    Table1 t(s, csv, *rt);
    std::cerr << s.c.program << ": " << t.roles().describe(*rt) << "\n";
    if (t.roles().gpus.empty()) std::cerr << s.c.program << ": note: no GPU: GPU-only, speedups and the oracle are left out\n";
    if (t.roles().cpus.empty()) std::cerr << s.c.program << ": note: no CPU device: CPU-only and the oracle are left out\n";
    const bool complete = t.run();

    std::vector<std::string> plot_notes;
    Summary rep{csv.rows(), s, t.roles()};
    std::string md = rep.markdown(s.c, *rt, plot_notes);
    if (!complete)
      md += "**Incomplete:** stopped by --max-seconds; run again with the same --out and --resume to finish.\n";
    write_file(s.c.md(), md);
    std::cout << md;
    std::cerr << s.c.program << ": wrote " << s.c.csv().string() << " and " << s.c.md().string() << " ("
              << std::lround(seconds_since_start()) << " s)\n";
    if (!complete) return kExitStopped;
    const bool failed = std::any_of(csv.rows().begin(), csv.rows().end(), row_failed);
    if (failed) std::cerr << s.c.program << ": some measurements failed (see the Notes of the report)\n";
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << s.c.program << ": " << e.what() << "\n";
    return 2;
  }
}
