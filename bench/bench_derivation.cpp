// bench/bench_derivation.cpp — the spec's Table 2: the filter pipeline's plans trained for each
// image alone, against plans derived from earlier images by one knowledge base and then adjusted
// by the online balancer; and nearest neighbour against inverse-distance derivation.
//
// Left side (training): for each image alone, a runtime with a fresh knowledge base and forced
// training; its plan (fission, overlap, GPU and CPU shares), the training's own time for it and
// what training cost.
// Right side (derivation): one runtime and one knowledge base, empty at the start, fed the images
// in order. The first image trains; each later one is derived from the entries of the earlier
// ones (nearest neighbour, RuntimeOptions::unseen = "derive") and run --runs times with the
// balancer on, counting its level-1 and level-2 interventions. Each planned run alternates with
// a run of the image's trained plan (the left side's, as a manual plan) in the same runtime, so
// both see the same machine; the relative performance is trained / derived over the medians of
// the last --last runs of each (1 = as fast as training; the goal is >= 0.95).
// Interpolators: the same sequence with the balancer off, once with nearest neighbour and once
// with inverse-distance weighting ("idw"): the derived plan's own time against the trained one.
//
//   bench_derivation [--images 1024x1024,512x512,...] [--runs 100] [--out DIR] [--quick]
#include "common/descriptors.hpp"

#include <sinew/sinew.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using sinew::samples::FilterPipeline;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const auto kStart = std::chrono::steady_clock::now();

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

const char* const kProgram = "bench_derivation";

const char* const kUsage =
    "usage: bench_derivation [flags]\n"
    "The spec's Table 2 on the filter pipeline (gaussian noise -> solarise -> mirror, RGBA image\n"
    "split by lines): each image's plan trained alone, against one knowledge base deriving each\n"
    "image's plan from the earlier ones (nearest neighbour) with the online balancer adjusting it,\n"
    "and nearest neighbour against inverse-distance derivation with the balancer off.\n"
    "  --images LIST       images in order, WIDTHxHEIGHT or N (N x N), comma-separated\n"
    "                      (default 1024x1024,512x512,1024x2048,2048x512,2048x2048,4096x4096;\n"
    "                      --quick 128x128,64x64,128x256,256x64)\n"
    "  --runs N            planned runs per image with the balancer on (default 100; the spec ran\n"
    "                      500; --quick 12); as many runs of the trained plan alternate with them\n"
    "  --last N            the medians compare the last N runs of each (default 10; --quick 4)\n"
    "  --compare-runs N    runs per image in each interpolator sequence (default 10; --quick 3)\n"
    "  --no-compare        skip the interpolator sequences\n"
    "  --exhaustive        train over every fission x overlap combination (the spec's uniform search)\n"
    "  --max-executions N  training budget per image (default the runtime's 40; --quick 16)\n"
    "  --keep-kb           keep the knowledge bases as DIR/bench_derivation-*.sqlite (inspect them\n"
    "                      with `sinew kb show --kb FILE`); default: in memory or temporary files\n"
    "  --zero-copy-stand-in  without a GPU, keep the second CPU device zero-copy instead of\n"
    "                      driving it as a discrete device\n"
    "  --out DIR           write DIR/bench_derivation.csv (rows appended as measured),\n"
    "                      DIR/bench_derivation.md and DIR/bench_derivation-runs.png (created if missing)\n"
    "  --quick             a few small images, few runs: checks that everything runs\n"
    "  --help              this text\n"
    "Environment: SINEW_DEVICES, SINEW_DISCRETE (without a GPU the second CPU device is driven as a\n"
    "discrete stand-in GPU unless set), SINEW_STRATEGY / SINEW_PRECISION / SINEW_QUALITY (training),\n"
    "SINEW_BALANCE_WITHIN / SINEW_BALANCE_WEIGHT (balancer), SINEW_QUIET=1 (no training progress).\n"
    "Flags of the other benchmark programs (--sizes, --sides, --repeat, ...) are ignored with a note.\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << kProgram << ": " << message << "\n\n" << kUsage;
  std::exit(2);
}

struct Image {
  std::string label;  // as given: "1024x2048", or "4096" for a square
  std::string id;     // "Image 3"
  std::size_t width = 0, height = 0;
};

struct Options {
  std::vector<Image> images;
  std::size_t runs = 100, last = 10, compare_runs = 10, max_executions = 0;
  bool quick = false, compare = true, exhaustive = false, keep_kb = false, zero_copy_stand_in = false;
  std::string out;
  std::string command_line;
};

std::size_t parse_count(const std::string& flag, const std::string& text, std::size_t min) {
  std::size_t v = 0, used = 0;
  try {
    v = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-' || v < min)
    usage_error("--" + flag + " expects an integer >= " + std::to_string(min) + ", not '" + text + "'");
  return v;
}

std::vector<Image> parse_images(const std::string& text) {
  std::vector<Image> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    FilterPipeline probe;  // the sample itself judges the size, with its own message, before any work
    try {
      probe.prepare(item);
    } catch (const std::invalid_argument& e) {
      usage_error("--images: '" + item + "': " + e.what());
    }
    Image im;
    im.label = item;
    im.width = probe.width();
    im.height = probe.height();
    im.id = "Image " + std::to_string(out.size() + 1);
    out.push_back(im);
  }
  if (out.empty()) usage_error("--images needs at least one image, e.g. --images 1024x1024,512x512");
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  // Flags of bench_saxpy / bench_pipeline: scripts/bench passes one set of flags to every program.
  const std::vector<std::string> foreign_values = {"sizes",  "step",    "pinned-step", "sides",  "bodies",
                                                   "nbody-steps", "shares", "pinned-shares", "repeat", "warmup",
                                                   "overlaps", "queues", "chunk-mb"};
  const std::vector<std::string> foreign_switches = {"no-sinew", "no-handwritten", "no-pinned-splits", "verbose"};
  std::string images, csv;
  bool runs_set = false, last_set = false, compare_runs_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) usage_error("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) usage_error("--" + name + " needs a value");
      return argv[++i];
    };
    if (name == "images") images = take();
    else if (name == "runs") { o.runs = parse_count(name, take(), 1); runs_set = true; }
    else if (name == "last") { o.last = parse_count(name, take(), 1); last_set = true; }
    else if (name == "compare-runs") { o.compare_runs = parse_count(name, take(), 1); compare_runs_set = true; }
    else if (name == "max-executions") o.max_executions = parse_count(name, take(), 1);
    else if (name == "no-compare") o.compare = false;
    else if (name == "exhaustive") o.exhaustive = true;
    else if (name == "keep-kb") o.keep_kb = true;
    else if (name == "zero-copy-stand-in") o.zero_copy_stand_in = true;
    else if (name == "quick") o.quick = true;
    else if (name == "out") o.out = take();
    else if (name == "csv") csv = take();  // the older programs' flag: a directory here
    else if (std::find(foreign_values.begin(), foreign_values.end(), name) != foreign_values.end()) {
      const std::string v = take();
      std::cerr << kProgram << ": note: --" << name << " " << v << " is another benchmark program's flag; ignored\n";
    } else if (std::find(foreign_switches.begin(), foreign_switches.end(), name) != foreign_switches.end()) {
      std::cerr << kProgram << ": note: --" << name << " is another benchmark program's flag; ignored\n";
    } else {
      usage_error("unknown flag '--" + name + "'");
    }
  }
  if (o.out.empty() && !csv.empty()) {
    if (fs::path(csv).extension() == ".csv")
      usage_error("--csv " + csv + ": this program writes several files; give a directory with --out DIR");
    o.out = csv;
    std::cerr << kProgram << ": note: --csv " << csv << " taken as --out " << csv << "\n";
  }
  if (o.quick) {
    if (images.empty()) images = "128x128,64x64,128x256,256x64";
    if (!runs_set) o.runs = 12;
    if (!last_set) o.last = 4;
    if (!compare_runs_set) o.compare_runs = 3;
    if (!o.max_executions) o.max_executions = 16;
  }
  if (images.empty()) images = "1024x1024,512x512,1024x2048,2048x512,2048x2048,4096x4096";
  o.images = parse_images(images);
  if (o.keep_kb && o.out.empty()) usage_error("--keep-kb keeps the knowledge bases in the --out directory; give --out DIR");
  if (o.last > o.runs) usage_error("--last " + std::to_string(o.last) + " is more than --runs " + std::to_string(o.runs));
  return o;
}

// ----- formatting ------------------------------------------------------------------------------

std::string fmt(const char* spec, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string csv_number(double v) { return std::isnan(v) ? "" : fmt("%.6g", v); }

std::string csv_text(std::string s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void progress(const std::string& line) {
  std::cerr << "[" << fmt("%7.1f", seconds_since_start()) << " s] " << line << std::endl;
}

// Shares of the devices driven as discrete (GPUs, or the stand-in) and of the others (CPUs).
struct KindShares {
  double gpu = 0, cpu = 0;
};
KindShares kind_shares(const sinew::Config& c, const std::vector<sinew::DeviceInfo>& devs) {
  KindShares k;
  for (std::size_t i = 0; i < c.shares.size() && i < devs.size(); ++i)
    (devs[i].discrete || devs[i].kind != sinew::DeviceKind::cpu ? k.gpu : k.cpu) += c.shares[i];
  return k;
}

std::string percent(double share) { return fmt("%.1f", 100 * share); }

// "fission L2, overlap 3, gpu 90.8% / cpu 9.2%"
std::string plan_text(const sinew::Config& c, const std::vector<sinew::DeviceInfo>& devs) {
  if (c.shares.empty()) return "-";
  const KindShares k = kind_shares(c, devs);
  return "fission " + c.fission + ", overlap " + std::to_string(c.overlap) + ", gpu " + percent(k.gpu) + "% / cpu " +
         percent(k.cpu) + "%";
}

// ----- CSV -------------------------------------------------------------------------------------

const char* const kCsvHeader =
    "kind,sequence,interpolator,balancer,image,size,width,height,run,provenance,derived_from,fission,overlap,"
    "gpu_share,cpu_share,shares,time_ms,host_ms,lbt,deviation,balance_level,training_executions,"
    "training_seconds,level1,level2,final_fission,final_overlap,final_gpu_share,final_cpu_share,median_ms,"
    "derived_plan_ms,trained_median_ms,ratio,runs,check";

struct CsvRow {
  std::string kind, sequence, interpolator, balancer;
  const Image* image = nullptr;
  std::optional<std::size_t> run;
  std::string provenance, derived_from;
  std::optional<sinew::Config> config, final_config;
  double time_ms = kNaN, host_ms = kNaN, lbt = kNaN, deviation = kNaN;
  std::optional<int> balance_level;
  std::optional<std::size_t> training_executions, level1, level2, runs;
  double training_seconds = kNaN, median_ms = kNaN, derived_plan_ms = kNaN, trained_median_ms = kNaN, ratio = kNaN;
  std::string check;
};

CsvRow make_row(std::string kind, std::string sequence, std::string interpolator, std::string balancer,
                const Image& image) {
  CsvRow r;
  r.kind = std::move(kind);
  r.sequence = std::move(sequence);
  r.interpolator = std::move(interpolator);
  r.balancer = std::move(balancer);
  r.image = &image;
  return r;
}

class Csv {
 public:
  Csv(const std::string& path, const std::vector<sinew::DeviceInfo>* devs) : devs_(devs) {
    if (path.empty()) return;
    out_.open(path, std::ios::trunc);
    if (!out_) throw std::runtime_error("cannot write " + path);
    out_ << kCsvHeader << "\n" << std::flush;
  }
  void add(const CsvRow& r) {
    if (!out_.is_open()) return;
    auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string(); };
    auto plan = [&](const std::optional<sinew::Config>& c, bool with_shares) {
      if (!c) return std::string(with_shares ? ",,,," : ",,,");
      const KindShares k = kind_shares(*c, *devs_);
      std::string s = c->fission + "," + std::to_string(c->overlap) + "," + csv_number(k.gpu) + "," + csv_number(k.cpu);
      if (with_shares) {
        std::string list;
        for (double x : c->shares) list += (list.empty() ? "" : " ") + csv_number(x);
        s += "," + list;
      }
      return s;
    };
    out_ << r.kind << "," << r.sequence << "," << r.interpolator << "," << r.balancer << ","
         << (r.image ? r.image->id : "") << "," << (r.image ? r.image->label : "") << ","
         << (r.image ? std::to_string(r.image->width) : "") << "," << (r.image ? std::to_string(r.image->height) : "")
         << "," << opt(r.run) << "," << r.provenance << "," << r.derived_from << "," << plan(r.config, true) << ","
         << csv_number(r.time_ms) << "," << csv_number(r.host_ms) << "," << csv_number(r.lbt) << ","
         << csv_number(r.deviation) << "," << opt(r.balance_level) << "," << opt(r.training_executions) << ","
         << csv_number(r.training_seconds) << "," << opt(r.level1) << "," << opt(r.level2) << ","
         << plan(r.final_config, false) << "," << csv_number(r.median_ms) << "," << csv_number(r.derived_plan_ms)
         << "," << csv_number(r.trained_median_ms) << "," << csv_number(r.ratio) << "," << opt(r.runs) << ","
         << csv_text(r.check) << "\n"
         << std::flush;  // a killed run keeps every row written so far
  }

 private:
  std::ofstream out_;
  const std::vector<sinew::DeviceInfo>* devs_;
};

// ----- runs ------------------------------------------------------------------------------------

struct Timed {
  sinew::Report report;
  double host_ms = 0;
};

// One run of the prepared sample: the host clock around rt.run(...).get(), after bindings() has
// restored the input (that copy is not the plan's cost).
Timed timed_run(sinew::Runtime& rt, FilterPipeline& s, const sinew::RunOptions& options) {
  auto bindings = s.bindings();
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.report = rt.run(s.tree(), std::move(bindings), options).get();
  t.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

std::vector<double> last_n(const std::vector<double>& v, std::size_t n) {
  return std::vector<double>(v.end() - static_cast<std::ptrdiff_t>(std::min(n, v.size())), v.end());
}

// A unique path for a scratch knowledge base, removed (with its WAL files) when done.
class KbFile {
 public:
  KbFile(const Options& o, const std::string& name) {
    if (o.keep_kb) {
      path_ = (fs::path(o.out) / (std::string(kProgram) + "-" + name + ".sqlite")).string();
      keep_ = true;
    } else {
      path_ = (fs::temp_directory_path() /
               (std::string(kProgram) + "-" + std::to_string(::getpid()) + "-" + name + ".sqlite"))
                  .string();
    }
    remove();  // every knowledge base here starts empty
  }
  ~KbFile() {
    if (!keep_) remove();
  }
  const std::string& path() const { return path_; }

 private:
  void remove() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path_ + suffix, ec);
  }
  std::string path_;
  bool keep_ = false;
};

// ----- the two sides ---------------------------------------------------------------------------

struct Trained {
  bool ok = false;
  sinew::Config config;
  std::string provenance;
  double time_ms = kNaN;        // the training's own measurement of its best plan (KB entry)
  double request_seconds = kNaN;  // the whole first request: training, then the run
  std::size_t executions = 0;
  double seconds = kNaN;
  std::string check;
};

struct Derived {
  bool ran = false;
  sinew::Config first, last;  // the plan of the first run (derived or trained) and of the last
  std::string provenance;     // of the first run
  std::string nearest;        // the image it was derived from ("" when trained)
  std::size_t check_runs = 0; // runs that checked the derived plan (TrainingSettings::derive_executions)
  std::size_t level1 = 0, level2 = 0;
  double median_ms = kNaN;        // planned runs: median of the last --last
  double derived_plan_ms = kNaN;  // planned runs made with the first plan, before any rebalance
  double trained_ms = kNaN;       // the trained plan's runs alternating with them: median of the last --last
  std::vector<double> run_ms;     // every planned run's Report::wall_ms
  std::vector<int> run_level;     // the balance event each run triggered (0: none)
  std::string check;
  double ratio() const { return trained_ms / median_ms; }
};

struct Sequence {
  std::string name, interpolator;
  bool balancer = true;
  std::size_t runs = 0, last = 0;
  std::vector<Derived> images;
};

sinew::RuntimeOptions base_options(const Options& o, const std::string& discrete) {
  sinew::RuntimeOptions r;
  r.discrete = discrete;
  r.training.exhaustive = o.exhaustive;
  if (o.max_executions) r.training.max_executions = o.max_executions;
  return r;
}

std::string check_text(FilterPipeline& s) {
  const auto c = s.check();
  return c.ok ? "OK" : "MISMATCH " + c.message;
}

std::vector<Trained> train_each(const Options& o, const std::string& discrete, Csv& csv) {
  std::vector<Trained> out;
  for (const Image& im : o.images) {
    Trained t;
    KbFile kb(o, "train-" + im.label);
    try {
      sinew::RuntimeOptions ro = base_options(o, discrete);
      ro.kb_path = kb.path();
      ro.force_training = true;
      std::int64_t entry = 0;
      {
        sinew::Runtime rt(ro);
        FilterPipeline s;
        s.prepare(im.label);
        progress("training: " + im.id + " " + im.label + " alone, fresh knowledge base");
        sinew::RunOptions train_run;
        train_run.balance = false;  // training only: the balancer has nothing to watch here
        const Timed r = timed_run(rt, s, train_run);
        t.config = r.report.config;
        t.provenance = sinew::to_string(r.report.provenance);
        t.executions = r.report.training_executions;
        t.seconds = r.report.training_seconds;
        t.request_seconds = r.host_ms / 1000;
        t.check = check_text(s);
        entry = r.report.kb_entry;
        t.ok = t.check == "OK" && !t.config.shares.empty();
        auto store = sinew::KnowledgeBase::open(kb.path(), sinew::KbOptions{.log = {}});
        if (auto e = store->entry(entry)) t.time_ms = e->time_ms;
        progress("training: " + im.id + " " + im.label + ": " + plan_text(t.config, rt.devices()) + ", " +
                 fmt("%.3f", t.time_ms) + " ms, " + std::to_string(t.executions) + " executions in " +
                 fmt("%.1f", t.seconds) + " s; " + t.check);
        CsvRow row = make_row("training", "training", "", "off", im);
        row.provenance = t.provenance;
        row.config = t.config;
        row.time_ms = t.time_ms;
        row.host_ms = r.host_ms;
        row.training_executions = t.executions;
        row.training_seconds = t.seconds;
        row.check = t.check;
        csv.add(row);
      }
    } catch (const std::exception& e) {
      t.ok = false;
      t.check = std::string("error: ") + e.what();
      progress("training: " + im.id + " " + im.label + ": " + t.check);
      CsvRow row = make_row("training", "training", "", "off", im);
      row.check = t.check;
      csv.add(row);
    }
    out.push_back(t);
  }
  return out;
}

// One knowledge base, empty at the start, fed the images in order. Each planned run alternates
// with a run of the image's trained plan (a manual plan: no knowledge base, no balancer).
Sequence derive_in_order(const Options& o, const std::string& discrete, const std::vector<Trained>& trained,
                         const std::string& name, const std::string& interpolator, bool balancer, std::size_t runs,
                         std::size_t last, Csv& csv) {
  Sequence seq{name, interpolator, balancer, runs, last, {}};
  KbFile kb(o, name);
  sinew::RuntimeOptions ro = base_options(o, discrete);
  ro.kb_path = o.keep_kb ? kb.path() : ":memory:";
  ro.unseen = sinew::UnseenPolicy::derive;
  ro.interpolation = sinew::parse::choice<sinew::Interpolation>(interpolator, "--interpolator");
  ro.balancer.enabled = balancer;
  sinew::Runtime rt(ro);
  const auto& devs = rt.devices();
  std::map<std::int64_t, std::string> image_of_entry;
  const std::string bal = balancer ? "on" : "off";

  for (std::size_t i = 0; i < o.images.size(); ++i) {
    const Image& im = o.images[i];
    Derived d;
    try {
      FilterPipeline s;
      s.prepare(im.label);
      progress(name + ": " + im.id + " " + im.label + ", " + std::to_string(runs) + " planned runs" +
               (trained[i].ok ? " alternating with the trained plan" : " (no trained plan to compare)"));
      sinew::RunOptions planned;
      if (!balancer) planned.balance = false;  // on: the default for plans from the knowledge base
      sinew::RunOptions manual;
      manual.config = trained[i].config;
      std::vector<double> trained_ms;
      for (std::size_t r = 0; r < runs; ++r) {
        const Timed p = timed_run(rt, s, planned);
        const sinew::Report& rep = p.report;
        if (r == 0) {
          d.first = rep.config;
          d.provenance = sinew::to_string(rep.provenance);
          if (rep.provenance == sinew::Provenance::derived) d.check_runs = rep.training_executions;
          image_of_entry[rep.kb_entry] = im.id;
          if (rep.derived_from) {
            auto it = image_of_entry.find(rep.derived_from);
            d.nearest = it != image_of_entry.end() ? it->second : "entry #" + std::to_string(rep.derived_from);
          }
          d.check = check_text(s);
        }
        const int level = rep.balance ? rep.balance->level : 0;
        if (level == 1) ++d.level1;
        if (level == 2) ++d.level2;
        d.run_ms.push_back(rep.wall_ms);
        d.run_level.push_back(level);
        d.last = rep.config;
        if (r + 1 == runs && d.check == "OK") d.check = check_text(s);
        CsvRow row = make_row("run", name, interpolator, bal, im);
        row.run = r + 1;
        row.provenance = sinew::to_string(rep.provenance);
        row.derived_from = rep.derived_from ? std::to_string(rep.derived_from) : "";
        row.config = rep.config;
        row.time_ms = rep.wall_ms;
        row.host_ms = p.host_ms;
        row.lbt = rep.execution ? rep.lbt : kNaN;
        row.deviation = rep.execution ? rep.deviation : kNaN;
        if (level) row.balance_level = level;
        row.training_executions = rep.training_executions;
        row.training_seconds = rep.training_executions ? rep.training_seconds : kNaN;
        csv.add(row);
        if (level)
          progress(name + ": " + im.id + " run " + std::to_string(r + 1) + ": balancer level " + std::to_string(level) +
                   ", " + plan_text(rep.balance->before, devs) + " -> " + plan_text(rep.balance->after, devs));

        if (trained[i].ok) {
          const Timed t = timed_run(rt, s, manual);
          trained_ms.push_back(t.report.wall_ms);
          CsvRow trow = make_row("trained-run", name, "", "off", im);
          trow.run = r + 1;
          trow.provenance = sinew::to_string(t.report.provenance);
          trow.config = t.report.config;
          trow.time_ms = t.report.wall_ms;
          trow.host_ms = t.host_ms;
          csv.add(trow);
          if (r + 1 == runs) {
            const std::string c = check_text(s);
            if (c != "OK" && d.check == "OK") d.check = "trained plan: " + c;
          }
        }
      }
      // The derived plan's own time: the runs made with it before the balancer first changed it,
      // less the first when there are others (a new plan's first run pays one-off costs: on PoCL a
      // new partition geometry can cost a kernel compilation).
      std::vector<double> with_first;
      for (std::size_t r = 0; r < d.run_ms.size(); ++r) {
        with_first.push_back(d.run_ms[r]);
        if (d.run_level[r]) break;  // this run triggered a change: the next one ran another plan
      }
      if (with_first.size() > 1) with_first.erase(with_first.begin());
      d.derived_plan_ms = median(with_first);
      d.median_ms = median(last_n(d.run_ms, last));
      d.trained_ms = median(last_n(trained_ms, last));
      d.ran = true;
      progress(name + ": " + im.id + " " + im.label + ": " + d.provenance +
               (d.nearest.empty() ? "" : " from " + d.nearest) + " " + plan_text(d.first, devs) + "; level 1 x" +
               std::to_string(d.level1) + ", level 2 x" + std::to_string(d.level2) + "; final " +
               plan_text(d.last, devs) + "; " + fmt("%.3f", d.median_ms) + " ms vs trained " +
               fmt("%.3f", d.trained_ms) + " ms (" + fmt("%.2f", d.ratio()) + "); " + d.check);
    } catch (const std::exception& e) {
      d.check = std::string("error: ") + e.what();
      progress(name + ": " + im.id + " " + im.label + ": " + d.check);
    }
    CsvRow row = make_row("derivation", name, interpolator, bal, im);
    if (d.ran) {
      row.provenance = d.provenance;
      row.derived_from = d.nearest;
      row.config = d.first;
      row.final_config = d.last;
      row.level1 = d.level1;
      row.level2 = d.level2;
      row.median_ms = d.median_ms;
      row.derived_plan_ms = d.derived_plan_ms;
      row.trained_median_ms = d.trained_ms;
      row.ratio = d.ratio();
      row.runs = runs;
    }
    row.check = d.check;
    csv.add(row);
    seq.images.push_back(std::move(d));
  }
  return seq;
}

// ----- report ----------------------------------------------------------------------------------

std::string devices_text(const std::vector<sinew::DeviceInfo>& devs) {
  std::ostringstream s;
  for (const auto& d : devs)
    s << "- `" << d.id() << "` " << d.name << " — " << d.platform << " (" << d.platform_version << "), driver "
      << d.driver_version << ", " << d.compute_units << " compute units"
      << (d.discrete && d.kind == sinew::DeviceKind::cpu ? "; driven as a discrete device (stand-in GPU)" : "") << "\n";
  return s.str();
}

std::string markdown(const Options& o, const std::vector<sinew::DeviceInfo>& devs, const std::vector<Trained>& trained,
                     const std::vector<Sequence>& seqs, double seconds, bool plotted) {
  std::ostringstream m;
  m << "## bench_derivation: training vs derivation and balancing (the spec's Table 2)\n\n"
    << "Filter pipeline (gaussian noise -> solarise -> mirror on an RGBA image, split by lines). Left: each "
       "image trained alone from an empty knowledge base. Right: one knowledge base, empty at the start, fed "
       "the images in order; the first trains, each later one is derived from the earlier ones (nearest "
       "neighbour over the features image.size and width; the runtime then checks the derived plan with a "
       "few runs, TrainingSettings::derive_executions, unless $SINEW_DERIVE_EXECUTIONS=0) and run "
    << o.runs << " times with the online balancer on. Times are `Report::wall_ms` (the execution); *relative "
       "perf.* = trained / derived, medians of the last "
    << o.last << " runs of each, the trained plan run as a manual plan alternating with the planned runs in "
       "the same runtime (1.00 = as fast as training, goal >= 0.95). *gpu* = the devices driven as discrete, "
       "*cpu* = the others.\n\n";
  const Sequence* main = seqs.empty() ? nullptr : &seqs.front();
  m << "| image | size | fission | overlap | GPU % | CPU % | time ms | derived from | level 1 | level 2 | "
       "GPU % | CPU % | time ms | relative perf. |\n"
    << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < o.images.size(); ++i) {
    const Image& im = o.images[i];
    const Trained& t = trained[i];
    m << "| " << im.id << " | " << im.width << "x" << im.height << " | ";
    if (t.ok) {
      const KindShares k = kind_shares(t.config, devs);
      m << t.config.fission << " | " << t.config.overlap << " | " << percent(k.gpu) << " | " << percent(k.cpu)
        << " | " << fmt("%.3f", main && i < main->images.size() ? main->images[i].trained_ms : t.time_ms) << " | ";
    } else {
      m << "- | - | - | - | - | ";
    }
    const Derived* d = main && i < main->images.size() ? &main->images[i] : nullptr;
    if (d && d->ran) {
      const KindShares k = kind_shares(d->last, devs);
      m << (d->nearest.empty() ? "(" + d->provenance + ")" : d->nearest) << " | " << d->level1 << " | " << d->level2
        << " | " << percent(k.gpu) << " | " << percent(k.cpu) << " | " << fmt("%.3f", d->median_ms) << " | "
        << (std::isnan(d->ratio()) ? "-" : fmt("%.0f%%", 100 * d->ratio())) << " |\n";
    } else {
      m << "- | - | - | - | - | - | - |\n";
    }
  }
  m << "\nLeft *time ms*: the trained plan's median over the same runs (the training's own measurement is in "
       "the next table). Right *GPU % / CPU %*: the final plan (last run).\n\n";

  m << "Training cost and the plans in detail:\n\n"
    << "| image | trained plan | training's time ms | executions | training s | derived plan (first run) | "
       "its time ms | final plan (last run) | check |\n"
    << "|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < o.images.size(); ++i) {
    const Trained& t = trained[i];
    const Derived* d = main && i < main->images.size() ? &main->images[i] : nullptr;
    m << "| " << o.images[i].id << " " << o.images[i].label << " | " << (t.ok ? plan_text(t.config, devs) : t.check)
      << " | " << fmt("%.3f", t.time_ms) << " | " << t.executions << " | " << fmt("%.1f", t.seconds) << " | ";
    if (d && d->ran)
      m << d->provenance << (d->nearest.empty() ? "" : " from " + d->nearest)
        << (d->check_runs ? ", checked in " + std::to_string(d->check_runs) + " runs" : "") << ": "
        << plan_text(d->first, devs)
        << " | " << fmt("%.3f", d->derived_plan_ms) << " | " << plan_text(d->last, devs) << " | "
        << (t.check == "OK" ? d->check : t.check) << " |\n";
    else
      m << "- | - | - | " << (d ? d->check : "not run") << " |\n";
  }

  if (seqs.size() > 1) {
    m << "\nInterpolators, balancer off (" << seqs[1].runs << " runs per image; each sequence its own empty "
         "knowledge base; the first image trains again, so its row shows training's noise): the derived "
         "plan's median time against the trained plan's, alternating in the same runtime.\n\n"
      << "| image | size";
    for (std::size_t k = 1; k < seqs.size(); ++k)
      m << " | " << seqs[k].interpolator << ": plan | ms | trained ms | relative perf.";
    m << " |\n|---|---";
    for (std::size_t k = 1; k < seqs.size(); ++k) m << "|---|---|---|---";
    m << "|\n";
    for (std::size_t i = 0; i < o.images.size(); ++i) {
      m << "| " << o.images[i].id << " | " << o.images[i].label;
      for (std::size_t k = 1; k < seqs.size(); ++k) {
        const Derived* d = i < seqs[k].images.size() ? &seqs[k].images[i] : nullptr;
        if (d && d->ran)
          m << " | " << d->provenance << (d->nearest.empty() ? "" : " from " + d->nearest) << ": "
            << plan_text(d->first, devs) << " | " << fmt("%.3f", d->median_ms) << " | " << fmt("%.3f", d->trained_ms)
            << " | " << (std::isnan(d->ratio()) ? "-" : fmt("%.0f%%", 100 * d->ratio()));
        else
          m << " | " << (d ? d->check : "not run") << " | - | - | -";
      }
      m << " |\n";
    }
  }

  m << "\nDevices (Sinew " << SINEW_VERSION_STRING << "):\n\n" << devices_text(devs) << "\n"
    << "Balancer: balanced when the fastest device finishes within "
    << fmt("%.0f%%", 100 * sinew::BalancerSettings{}.with_defaults().balanced_within.value())
    << " of the slowest's time (the spec's 88%; $SINEW_BALANCE_WITHIN overrides). Training: "
    << (o.exhaustive ? "every fission x overlap combination" : "the runtime's default search")
    << (o.max_executions ? ", at most " + std::to_string(o.max_executions) + " executions per image" : "") << ".\n\n"
    << "Command: `" << o.command_line << "`" << (o.quick ? " (--quick)" : "") << "; " << fmt("%.0f", seconds)
    << " s in all.\n";
  if (!o.out.empty())
    m << "\nEvery run is a row of `bench_derivation.csv` (kind `run`: planned, `trained-run`: the trained plan; "
         "`training` and `derivation`: the summaries above).\n";
  if (plotted)
    m << "\n![planned run times per image](bench_derivation-runs.png)\n";
  else if (!o.out.empty())
    m << "\n(No plot: gnuplot was not found or failed.)\n";
  return m.str();
}

// Planned run times of the balanced sequence, one series per image, with the trained plan's
// median as a line: how the balancer converges. Returns false when gnuplot is missing or fails.
bool plot(const Options& o, const Sequence& seq) {
  if (o.out.empty() || std::system("command -v gnuplot >/dev/null 2>&1") != 0) return false;
  const fs::path png = fs::path(o.out) / (std::string(kProgram) + "-runs.png");
  const fs::path dat = fs::temp_directory_path() / (std::string(kProgram) + "-" + std::to_string(::getpid()) + ".dat");
  const fs::path gp = fs::temp_directory_path() / (std::string(kProgram) + "-" + std::to_string(::getpid()) + ".gp");
  {
    std::ofstream d(dat);
    for (std::size_t i = 0; i < seq.images.size(); ++i) {
      d << "# " << o.images[i].id << "\n";
      for (std::size_t r = 0; r < seq.images[i].run_ms.size(); ++r)
        d << r + 1 << " " << seq.images[i].run_ms[r] << " " << seq.images[i].trained_ms << " "
          << seq.images[i].run_level[r] << "\n";
      d << "\n\n";  // gnuplot data blocks: index i
    }
    std::ofstream g(gp);
    g << "set terminal pngcairo size 1100,650 noenhanced\n"
      << "set output '" << png.string() << "'\n"
      << "set title \"bench_derivation: planned runs per image, balancer on\\ndashed: median of the trained plan; "
         "triangles: the balancer moved work after this run (filled: level 2)\"\n"
      << "set xlabel 'run'\nset ylabel 'Report::wall_ms (log)'\nset logscale y\nset key outside right\n"
      << "plot ";
    for (std::size_t i = 0; i < seq.images.size(); ++i)
      g << (i ? ", " : "") << "'" << dat.string() << "' index " << i << " using 1:2 with linespoints pt 7 ps 0.4 lc "
        << i + 1 << " title '" << o.images[i].id << " " << o.images[i].label << "', '' index " << i
        << " using 1:3 with lines dt 2 lc " << i + 1 << " notitle, '' index " << i
        << " using 1:($4 == 1 ? $2 : 1/0) with points pt 8 ps 1.4 lc " << i + 1 << " notitle, '' index " << i
        << " using 1:($4 == 2 ? $2 : 1/0) with points pt 9 ps 1.4 lc " << i + 1 << " notitle";
    g << "\n";
  }
  const int rc = std::system(("gnuplot '" + gp.string() + "' 2>/dev/null").c_str());
  std::error_code ec;
  fs::remove(dat, ec);
  fs::remove(gp, ec);
  return rc == 0 && fs::exists(png);
}

// Without a GPU and with two CPU devices, the second is driven as a discrete stand-in GPU (as the
// other benchmark programs do), unless $SINEW_DISCRETE says otherwise.
std::string stand_in(bool zero_copy) {
  const char* env = std::getenv("SINEW_DISCRETE");
  if (zero_copy || (env && *env)) return "";
  sinew::Runtime probe;
  std::vector<std::string> cpus;
  for (const auto& d : probe.devices()) {
    if (d.kind != sinew::DeviceKind::cpu) return "";
    cpus.push_back(d.id());
  }
  return cpus.size() >= 2 ? cpus[1] : "";
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  try {
    if (!o.out.empty()) fs::create_directories(o.out);
    const std::string discrete = stand_in(o.zero_copy_stand_in);
    std::vector<sinew::DeviceInfo> devs;
    {
      sinew::Runtime probe(base_options(o, discrete));
      devs = probe.devices();
    }
    bool has_gpu = false, has_cpu = false;
    for (const auto& d : devs) (d.discrete || d.kind != sinew::DeviceKind::cpu ? has_gpu : has_cpu) = true;
    progress(std::string(kProgram) + ": " + std::to_string(o.images.size()) + " images, " + std::to_string(devs.size()) +
             " device(s)" + (discrete.empty() ? "" : ", " + discrete + " driven as a discrete stand-in GPU") +
             (has_gpu && has_cpu ? "" : "; NOTE: no CPU+GPU pair, every plan runs on one kind"));
    Csv csv(o.out.empty() ? "" : (fs::path(o.out) / (std::string(kProgram) + ".csv")).string(), &devs);

    std::vector<Sequence> seqs;
    const std::vector<Trained> trained = train_each(o, discrete, csv);
    seqs.push_back(derive_in_order(o, discrete, trained, "derive-balanced", "nearest", true, o.runs, o.last, csv));
    if (o.compare) {
      seqs.push_back(
          derive_in_order(o, discrete, trained, "derive-nearest", "nearest", false, o.compare_runs, o.compare_runs, csv));
      seqs.push_back(derive_in_order(o, discrete, trained, "derive-idw", "inverse_distance", false, o.compare_runs, o.compare_runs, csv));
    }
    const bool plotted = plot(o, seqs.front());
    const std::string md = markdown(o, devs, trained, seqs, seconds_since_start(), plotted);
    std::cout << md;
    if (!o.out.empty()) {
      std::ofstream(fs::path(o.out) / (std::string(kProgram) + ".md")) << md;
      progress("wrote " + (fs::path(o.out) / (std::string(kProgram) + ".{csv,md}")).string() +
               (plotted ? " and " + (fs::path(o.out) / (std::string(kProgram) + "-runs.png")).string() : ""));
    }
    bool ok = true;
    for (const auto& t : trained) ok = ok && t.check == "OK";
    for (const auto& s : seqs)
      for (const auto& d : s.images) ok = ok && d.check == "OK";
    return ok ? 0 : 1;
  } catch (const sinew::Error& e) {
    std::cerr << kProgram << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << kProgram << ": error: " << e.what() << "\n";
    return 2;
  }
}
