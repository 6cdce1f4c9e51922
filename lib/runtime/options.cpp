// runtime/options.cpp — the one reader of the environment: every SINEW_* variable, parsed and
// checked here and nowhere else; the options' precedence (code, then environment, then default)
// and the table of variables that docs/guide/options.md prints.
#include "platform/error.hpp"
#include "platform/settings.hpp"

#include <sinew/cluster.hpp>
#include <sinew/options.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

extern char** environ;

namespace sinew {

using namespace detail;

namespace {

// Flags read 1/0, true/false, yes/no, on/off (sinew::parse::flag).
constexpr const char* kFlag = "1 or 0 (true/false, yes/no, on/off)";

using Setter = void (*)(RuntimeOptions& o, std::string_view text, const std::string& name);

struct Variable {
  EnvironmentVariable doc;
  Setter set;
};

const std::vector<Variable>& variables() {  // check-code: table
  static const std::vector<Variable> table = {
      {{"SINEW_DEVICES", "devices", "a device selection: all, cpu, gpu, accelerator, kind:N or an index, comma-separated",
        "all", "which devices a runtime uses, in this order"},
       [](RuntimeOptions& o, std::string_view t, const std::string&) { o.devices = std::string(t); }},
      {{"SINEW_DISCRETE", "discrete", "a device selection", "none",
        "drive these devices like GPUs (explicit transfers, overlap queues): a testing aid for CPU-only machines"},
       [](RuntimeOptions& o, std::string_view t, const std::string&) { o.discrete = std::string(t); }},
      {{"SINEW_VARIANT_GPU", "variant_gpu", "a device selection", "none",
        "leaves with per-kind variants run their GPU variant on these devices: a testing aid for CPU-only machines"},
       [](RuntimeOptions& o, std::string_view t, const std::string&) { o.variant_gpu = std::string(t); }},
      {{"SINEW_MEMORY_CAP", "memory_cap", "selection=size items, comma-separated, e.g. gpu:0=256MB,cpu:1=64MB",
        "none", "use at most this much memory of these devices (larger streamable shares are dragged through)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         parse::memory_caps(t, n);  // the sizes now; the selections against the devices found
         o.memory_cap = std::string(t);
       }},
      {{"SINEW_CONFIG", "config", "a plan in Config::parse syntax, e.g. cpu=0.6,overlap=2", "none",
        "the plan for runs that name none (instead of the knowledge base)"},
       [](RuntimeOptions& o, std::string_view t, const std::string&) { o.config = std::string(t); }},
      {{"SINEW_KB", "kb_path", "a file path, or :memory:", "${XDG_DATA_HOME:-~/.local/share}/sinew/kb.sqlite",
        "the knowledge base file"},
       [](RuntimeOptions& o, std::string_view t, const std::string&) { o.kb_path = std::string(t); }},
      {{"SINEW_TRAIN", "force_training", kFlag, "0",
        "train even for trees and inputs the knowledge base knows"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.force_training = parse::flag(t, n); }},
      {{"SINEW_UNSEEN", "unseen", spellings<UnseenPolicy>(), "derive",
        "what a run of a known tree does for an input the knowledge base has no plan for"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.unseen = parse::choice<UnseenPolicy>(t, n); }},
      {{"SINEW_INTERPOLATOR", "interpolation", spellings<Interpolation>(), "cost_model",
        "how a plan is derived for an unseen input"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.interpolation = parse::choice<Interpolation>(t, n);
       }},
      {{"SINEW_STRATEGY", "training.strategy", spellings<Strategy>(), "even_split", "how training searches"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.training.strategy = parse::choice<Strategy>(t, n);
       }},
      {{"SINEW_PRECISION", "training.precision", "a number greater than 0 and at most 1", "0.05",
        "training: device times within this fraction count as balanced"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.training.precision = rule::precision.read(t, n); }},
      {{"SINEW_QUALITY", "training.quality", "a whole number from 1 to 1000", "3",
        "training: executions per measured point (their median counts)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.training.quality = static_cast<unsigned>(rule::quality.read(t, n));
       }},
      {{"SINEW_EXHAUSTIVE", "training.exhaustive", kFlag, "0",
        "training: the strategy on every fission x overlap combination"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.training.exhaustive = parse::flag(t, n); }},
      {{"SINEW_DERIVE_EXECUTIONS", "training.derive_executions", "a whole number from 0 to 100000", "24",
        "runs that check a derived plan (0: the spec's unmeasured derivation)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.training.derive_executions = rule::derive_executions.read(t, n);
       }},
      {{"SINEW_TRAINING_TIME", "training.time_budget_s", "seconds, from 0 to 86400", "2",
        "training: stops after max(this, a multiple of the fastest plan measured) seconds or its executions, "
        "whichever comes first (0: executions only)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.training.time_budget_s = rule::time_budget_s.read(t, n);
       }},
      {{"SINEW_BALANCE", "balancer.enabled", kFlag, "1", "the online balancer"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.balancer.enabled = parse::flag(t, n); }},
      {{"SINEW_BALANCE_WITHIN", "balancer.balanced_within", "a number greater than 0 and at most 1", "0.88",
        "the balancer's bound: the fastest device may finish this fraction of the slowest's time early"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.balancer.balanced_within = rule::balanced_within.read(t, n);
       }},
      {{"SINEW_BALANCE_WEIGHT", "balancer.weight", "a number greater than 0 and at most 1", "0.5",
        "the balancer's lbt weight w"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.balancer.weight = rule::weight.read(t, n); }},
      {{"SINEW_CHUNK_MB", "chunk_mb", "a number greater than 0 and at most 65536", "by the data, 16 to 64",
        "streaming chunk size for discrete devices, in MB"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.chunk_mb = rule::chunk_mb.read(t, n); }},
      {{"SINEW_TRANSFER", "transfer", spellings<TransferMode>(), "staged",
        "direct hands pageable memory to the driver instead of staging it (for comparison)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.transfer = parse::choice<TransferMode>(t, n); }},
      {{"SINEW_COPY_THREADS", "copy_threads", "a whole number from 0 to 16", "0",
        "threads per staged copy between pageable memory and a GPU (0: the host's hardware threads shared among "
        "the queues, at most 8 each; at most 4 beside a CPU device's kernels)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) {
         o.copy_threads = static_cast<unsigned>(rule::copy_threads.read(t, n));
       }},
      {{"SINEW_WAIT", "wait", spellings<WaitMode>(), "automatic",
        "how host threads wait for GPUs: in the driver without CPU work, polling with naps beside it; block or "
        "poll forces one"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.wait = parse::choice<WaitMode>(t, n); }},
      {{"SINEW_MAP_ZERO_COPY", "map_zero_copy", kFlag, "0",
        "map and unmap a CPU device's zero-copy results even where its buffers are the host memory itself"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.map_zero_copy = parse::flag(t, n); }},
      {{"SINEW_SHARED_CONTEXT", "shared_context", kFlag, "0",
        "the discrete devices of one OpenCL platform share a context, so data moves between them on the devices (0: "
        "a context per device, through the host)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.shared_context = parse::flag(t, n); }},
      {{"SINEW_POISON_CHECK", "poison_check", kFlag, "0",
        "run each run twice with poison around every slice and halo on discrete devices; results that differ "
        "(a kernel read outside its slice and halo) are an error"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.poison_check = parse::flag(t, n); }},
      {{"SINEW_PROFILE", "profile", kFlag, "0", "profile every run's queues (device times in the report)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.profile = parse::flag(t, n); }},
      {{"SINEW_TRACE", "trace", "a file path", "none",
        "write a Chrome trace of each run to this file (-N appended when it exists)"},
       [](RuntimeOptions& o, std::string_view t, const std::string&) { o.trace = std::string(t); }},
      {{"SINEW_QUIET", "quiet", kFlag, "0", "no training progress or balancer lines (warnings still show)"},
       [](RuntimeOptions& o, std::string_view t, const std::string& n) { o.quiet = parse::flag(t, n); }},
  };
  return table;
}

template <class T>
void fill(std::optional<T>& mine, const std::optional<T>& fallback) {
  if (!mine) mine = fallback;
}
// An empty string is as unset: "" never names devices, a plan, a file or a directory.
void fill(std::optional<std::string>& mine, const std::optional<std::string>& fallback) {
  if (!mine || mine->empty()) mine = fallback;
}

// A Cluster's own variables (ClusterOptions), read by the same reader; the guide's table
// (docs/guide/options.md) lists them after the Runtime's.
using ClusterSetter = void (*)(ClusterOptions& o, std::string_view text, const std::string& name);

struct ClusterVariable {
  EnvironmentVariable doc;
  ClusterSetter set;
};

const std::vector<ClusterVariable>& cluster_variables() {
  static const std::vector<ClusterVariable> table = {
      {{"SINEW_MPI_TIMEOUT", "timeout_s", "seconds, 0 or more", "60",
        "the longest a Cluster's rank waits on the others at one step before every rank fails (0: no limit)"},
       [](ClusterOptions& o, std::string_view t, const std::string& n) { o.timeout_s = parse::number(t, n, 0, 1e9); }},
  };
  return table;
}

// The process's SINEW_* variables that are set: name -> value.
std::map<std::string, std::string> sinew_environment() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.rfind("SINEW_", 0) != 0) continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return vars;
}

std::string home_based(const char* xdg, const char* below_home) {
  namespace fs = std::filesystem;
  if (const char* v = std::getenv(xdg); v && *v == '/') return v;  // XDG: relative paths are invalid
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / below_home).string();
  return fs::temp_directory_path().string();  // no home: still somewhere writable
}

// A trace is written after each run to the path, or beside it with "-N" appended: a path that is
// a directory, or whose directory is missing or not writable, is refused when the Runtime is made
// rather than warned about after the first run. Nothing is created here.
void check_trace_path(const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  const std::string what = "RuntimeOptions::trace ($SINEW_TRACE)";
  std::error_code ec;
  const fs::path file(path);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::string why;
  if (fs::is_directory(file, ec) || !file.has_filename()) why = "it is a directory";
  else if (!fs::is_directory(dir, ec)) why = "its directory " + dir.string() + " does not exist";
  else if (::access(dir.c_str(), W_OK | X_OK) != 0) why = "its directory " + dir.string() + " is not writable";
  if (why.empty()) return;
  throw_error(errc::invalid_argument, what + " = '" + path + "' cannot be written: " + why,
              {.argument = what, .fix = "give a file path in a writable directory (e.g. /tmp/sinew-trace.json)"});
}

}  // namespace

const std::vector<EnvironmentVariable>& environment_variables() {
  static const std::vector<EnvironmentVariable> docs = [] {
    std::vector<EnvironmentVariable> out;
    for (const auto& v : variables()) {
      out.push_back(v.doc);
      out.back().setting = "RuntimeOptions::" + out.back().setting;
    }
    // A Cluster's own (used in builds with SINEW_MPI), listed in every build: the guide's
    // table names every variable Sinew reads.
    for (const auto& v : cluster_variables()) {
      out.push_back(v.doc);
      out.back().setting = "ClusterOptions::" + out.back().setting;
    }
    return out;
  }();
  return docs;
}

std::string environment_table_markdown() {
  std::ostringstream s;
  s << "| variable | setting | accepts | default | effect |\n|---|---|---|---|---|\n";
  for (const auto& v : environment_variables())
    s << "| `" << v.name << "` | `" << v.setting << "` | " << v.accepted << " | " << v.default_value << " | "
      << v.effect << " |\n";
  return s.str();
}

RuntimeOptions RuntimeOptions::from_variables(const std::map<std::string, std::string>& vars) {
  RuntimeOptions o;
  for (const auto& v : variables()) {
    auto it = vars.find(v.doc.name);
    if (it == vars.end() || it->second.empty()) continue;  // empty is unset
    v.set(o, it->second, v.doc.name);
  }
  return o;
}

RuntimeOptions RuntimeOptions::from_environment() { return from_variables(sinew_environment()); }

ClusterOptions ClusterOptions::from_variables(const std::map<std::string, std::string>& vars) {
  ClusterOptions o;
  for (const auto& v : cluster_variables()) {
    auto it = vars.find(v.doc.name);
    if (it == vars.end() || it->second.empty()) continue;  // empty is unset
    v.set(o, it->second, v.doc.name);
  }
  return o;
}

ClusterOptions ClusterOptions::from_environment() { return from_variables(sinew_environment()); }

RuntimeOptions RuntimeOptions::or_else(const RuntimeOptions& f) const {
  RuntimeOptions o = *this;
  fill(o.devices, f.devices);
  fill(o.discrete, f.discrete);
  fill(o.variant_gpu, f.variant_gpu);
  fill(o.memory_cap, f.memory_cap);
  fill(o.config, f.config);
  fill(o.chunk_mb, f.chunk_mb);
  fill(o.transfer, f.transfer);
  fill(o.copy_threads, f.copy_threads);
  fill(o.wait, f.wait);
  fill(o.map_zero_copy, f.map_zero_copy);
  fill(o.shared_context, f.shared_context);
  fill(o.profile, f.profile);
  fill(o.poison_check, f.poison_check);
  fill(o.trace, f.trace);
  fill(o.cache_dir, f.cache_dir);
  fill(o.disk_cache, f.disk_cache);
  fill(o.kb_path, f.kb_path);
  fill(o.force_training, f.force_training);
  fill(o.unseen, f.unseen);
  fill(o.interpolation, f.interpolation);
  fill(o.training.strategy, f.training.strategy);
  fill(o.training.precision, f.training.precision);
  fill(o.training.quality, f.training.quality);
  fill(o.training.exhaustive, f.training.exhaustive);
  fill(o.training.max_executions, f.training.max_executions);
  fill(o.training.derive_executions, f.training.derive_executions);
  fill(o.training.time_budget_s, f.training.time_budget_s);
  fill(o.balancer.enabled, f.balancer.enabled);
  fill(o.balancer.balanced_within, f.balancer.balanced_within);
  fill(o.balancer.weight, f.balancer.weight);
  fill(o.balancer.trigger, f.balancer.trigger);
  fill(o.balancer.level1_steps, f.balancer.level1_steps);
  fill(o.balancer.window, f.balancer.window);
  fill(o.balancer.level2_executions, f.balancer.level2_executions);
  fill(o.balancer.policy, f.balancer.policy);
  fill(o.balancer.tuning, f.balancer.tuning);
  fill(o.quiet, f.quiet);
  if (!o.log) o.log = f.log;
  return o;
}

RuntimeOptions RuntimeOptions::with_defaults() const {
  RuntimeOptions o = *this;
  if (!o.devices || o.devices->empty()) o.devices = "all";
  if (!o.discrete) o.discrete = "";
  if (!o.variant_gpu) o.variant_gpu = "";
  if (!o.memory_cap) o.memory_cap = "";
  parse::memory_caps(*o.memory_cap, "RuntimeOptions::memory_cap");
  if (!o.config) o.config = "";
  if (o.chunk_mb) rule::chunk_mb.check(*o.chunk_mb, "RuntimeOptions::chunk_mb");
  if (!o.transfer) o.transfer = TransferMode::staged;
  if (!o.copy_threads) o.copy_threads = 0;
  rule::copy_threads.check(*o.copy_threads, "RuntimeOptions::copy_threads");
  if (!o.wait) o.wait = WaitMode::automatic;
  if (!o.map_zero_copy) o.map_zero_copy = false;
  if (!o.shared_context) o.shared_context = false;  // docs/decisions/174
  if (!o.profile) o.profile = false;
  if (!o.poison_check) o.poison_check = false;
  if (!o.trace) o.trace = "";
  check_trace_path(*o.trace);
  if (!o.cache_dir || o.cache_dir->empty()) o.cache_dir = home_based("XDG_CACHE_HOME", ".cache") + "/sinew";
  if (!o.disk_cache) o.disk_cache = true;
  if (!o.kb_path || o.kb_path->empty())
    o.kb_path = home_based("XDG_DATA_HOME", ".local/share") + "/sinew/kb.sqlite";
  if (!o.force_training) o.force_training = false;
  if (!o.unseen) o.unseen = UnseenPolicy::derive;
  if (!o.interpolation) o.interpolation = Interpolation::cost_model;
  o.training = o.training.with_defaults();
  o.balancer = o.balancer.with_defaults();
  if (!o.quiet) o.quiet = false;
  if (!o.log) o.log = stderr_logger();
  return o;
}

RuntimeOptions RuntimeOptions::effective() const { return or_else(from_environment()).with_defaults(); }

}  // namespace sinew
