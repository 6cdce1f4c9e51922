// tools/sinew.cpp — the `sinew` command line: a table of subcommands over the public API.
//
// Each subcommand is one entry of kCommands (name, one-line summary, handler). A handler gets the
// arguments after its name, parses its own options with Boost.Program_options and returns the
// process exit status: 0 success, 1 failure (a sinew::Error, a failed check), 2 bad usage. Every
// number a subcommand takes is read as text by sinew::parse (read_count, read_number) or by the
// library's rule for the setting it gives (read_setting), before anything runs.
#include <sinew/sinew.hpp>

#include "platform/json_text.hpp"
#include "platform/settings.hpp"
#include "kb_plot.hpp"
#include "svg.hpp"
#include "load.hpp"

#ifdef SINEW_HAVE_SAMPLES
#include "common/sample.hpp"
#endif

#include <boost/program_options.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace po = boost::program_options;

namespace {

sinew::RunOptions device_only(std::size_t device) {
  sinew::RunOptions o;
  o.device = device;
  return o;
}

sinew::RunOptions training_run() {
  sinew::RunOptions o;
  o.train = true;
  return o;
}

using Args = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// Formatting helpers.

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

template <class T>
std::string join_numbers(const std::vector<T>& items, std::string_view sep) {
  std::vector<std::string> text;
  for (const auto& v : items) text.push_back(std::to_string(v));
  return join(text, sep);
}

std::string fixed(double value, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << value;
  return s.str();
}

std::string gib(std::uint64_t bytes) { return fixed(double(bytes) / (1ull << 30), 2) + " GiB"; }
std::string mib(std::uint64_t bytes) { return fixed(double(bytes) / (1ull << 20), 0) + " MiB"; }
std::string kib(std::uint64_t bytes) { return fixed(double(bytes) / (1ull << 10), 0) + " KiB"; }

// "4 x 2" when every group has the same size, else "4,4,2".
std::string describe_groups(const std::vector<unsigned>& groups) {
  if (groups.empty()) return "whole device";
  if (std::all_of(groups.begin(), groups.end(), [&](unsigned g) { return g == groups.front(); }))
    return std::to_string(groups.size()) + " x " + std::to_string(groups.front());
  return join_numbers(groups, ",");
}

// Left-aligned columns, widths from the widest cell.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, std::string_view indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

// ---------------------------------------------------------------------------------------------
// A small JSON writer: enough for flat objects, arrays and nesting, with correct escaping.

using sinew::detail::json_quote;

class Json {
 public:
  explicit Json(std::ostream& out) : out_(out) {}

  Json& begin_object() { value_prefix(); out_ << '{'; first_.push_back(true); return *this; }
  Json& end_object() { close('}'); return *this; }
  Json& begin_array() { value_prefix(); out_ << '['; first_.push_back(true); return *this; }
  Json& end_array() { close(']'); return *this; }

  Json& key(std::string_view k) {
    separator();
    out_ << json_quote(k) << ": ";
    after_key_ = true;
    return *this;
  }
  Json& value(std::string_view s) { value_prefix(); out_ << json_quote(s); return *this; }
  Json& value(const char* s) { return value(std::string_view(s)); }
  Json& value(const std::string& s) { return value(std::string_view(s)); }
  Json& value(bool b) { value_prefix(); out_ << (b ? "true" : "false"); return *this; }
  template <class T>
    requires std::is_arithmetic_v<T>
  Json& value(T n) {
    value_prefix();
    if constexpr (std::is_floating_point_v<T>) {
      out_ << sinew::detail::json_number(n);  // every digit; null for NaN and infinities
    } else {
      out_ << n;
    }
    return *this;
  }
  template <class T>
  Json& field(std::string_view k, const T& v) { return key(k).value(v); }
  // An array of strings or numbers, on one line.
  template <class T>
  Json& array(std::string_view k, const std::vector<T>& items) {
    key(k);
    after_key_ = false;
    out_ << '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out_ << ", ";
      if constexpr (std::is_floating_point_v<T>)
        out_ << sinew::detail::json_number(items[i]);
      else if constexpr (std::is_arithmetic_v<T>)
        out_ << items[i];
      else
        out_ << json_quote(items[i]);
    }
    out_ << ']';
    return *this;
  }

 private:
  void separator() {
    if (!first_.empty()) {
      if (!first_.back()) out_ << ',';
      out_ << '\n' << std::string(2 * first_.size(), ' ');
      first_.back() = false;
    }
  }
  void value_prefix() {
    if (after_key_) after_key_ = false;
    else separator();
  }
  void close(char c) {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) out_ << '\n' << std::string(2 * first_.size(), ' ');
    out_ << c;
    if (first_.empty()) out_ << '\n';
  }

  std::ostream& out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

// ---------------------------------------------------------------------------------------------
// Option parsing shared by the subcommands.

struct Parsed {
  po::variables_map vm;
  bool help = false;
};

// Parses `args` against `options` (plus --help). Throws po::error on bad usage.
Parsed parse(const Args& args, po::options_description& options) {
  options.add_options()("help,h", "show this help");
  Parsed p;
  po::store(po::command_line_parser(args).options(options).run(), p.vm);
  po::notify(p.vm);
  p.help = p.vm.count("help") > 0;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Numbers from the command line. Every numeric flag is taken as text and read here, never by
// Boost (which wraps "-1" into an unsigned): through sinew::parse, so an empty string, a sign on a
// count, trailing characters, an overflowing value or one out of range is bad usage (exit 2) with
// a one-line message naming the flag, the text and what is accepted.

// Runs `read` (a sinew::parse call), turning its refusal into bad usage.
template <class Read>
auto usage_checked(Read&& read) {
  try {
    return read();
  } catch (const sinew::Error& e) {
    throw po::error(e.message());  // "--flag = 'text' is not <what it accepts>"
  }
}

std::uint64_t read_count(const std::string& flag, const std::string& text, std::uint64_t min, std::uint64_t max) {
  return usage_checked([&] { return sinew::parse::count(text, flag, min, max); });
}

double read_number(const std::string& flag, const std::string& text, double min, double max, bool min_open = false) {
  return usage_checked([&] { return sinew::parse::number(text, flag, min, max, min_open); });
}

// A training setting given on the command line, read by the library's own rule for it (the one
// TrainingSettings::with_defaults() checks against), before any Runtime is made.
template <class Rule>
auto read_setting(const std::string& flag, const std::string& text, const Rule& rule) {
  return usage_checked([&] { return rule.read(text, flag); });
}

// This machine's physical memory in bytes; 0 when the system does not say.
std::uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

void add_devices_option(po::options_description& options, std::string& devices) {
  options.add_options()("devices,d", po::value(&devices)->value_name("SPEC"),
                        "devices to use: all, cpu, gpu, gpu:0,cpu, cpu:1 (default: $SINEW_DEVICES, else all)");
}

sinew::RuntimeOptions runtime_options(const std::string& devices) {
  sinew::RuntimeOptions o;
  if (!devices.empty()) o.devices = devices;  // else $SINEW_DEVICES, else all
  return o;
}

// ---------------------------------------------------------------------------------------------
// sinew devices

void print_device(std::ostream& out, const sinew::DeviceInfo& d) {
  out << d.id() << "  " << d.name << '\n';
  std::vector<std::vector<std::string>> rows = {
      {"index", std::to_string(d.index)},
      {"kind", sinew::to_string(d.kind)},
      {"platform", d.platform + (d.platform_version.empty() ? "" : " (" + d.platform_version + ")")},
      {"vendor", d.vendor},
      {"driver", d.driver_version},
      {"OpenCL version", d.opencl_version},
      {"compute units", std::to_string(d.compute_units)},
      {"global memory", gib(d.global_memory)},
      {"local memory", kib(d.local_memory)},
      {"max alloc", mib(d.max_alloc)},
      {"max work-group size", std::to_string(d.max_work_group_size)},
      {"work-group multiple", std::to_string(d.preferred_work_group_multiple)},
      {"host-unified memory", d.host_unified_memory ? "yes" : "no"},
      {"host pointers aliased", d.host_pointer_aliased ? "yes (zero-copy results need no map)" : "no"},
      {"partition types", d.partition_types.empty() ? "none" : join(d.partition_types, ", ")},
  };
  print_table(out, rows, "  ");

  if (!d.fission_configs.empty()) {
    out << "  fission configurations:\n";
    std::vector<std::vector<std::string>> fc = {{"name", "sub-devices", "CUs per group", "method", "same as"}};
    for (const auto& f : d.fission_configs)
      fc.push_back({f.name, std::to_string(f.sub_devices()), describe_groups(f.groups),
                    f.method.empty() ? "-" : f.method, f.same_as.empty() ? "-" : join(f.same_as, ", ")});
    print_table(out, fc, "    ");
  }
  if (!d.overlap_levels.empty())
    out << "  overlap levels (queues per device): " << join_numbers(d.overlap_levels, ", ") << '\n';
}

void print_device_json(Json& j, const sinew::DeviceInfo& d) {
  j.begin_object()
      .field("index", d.index)
      .field("id", d.id())
      .field("kind", sinew::to_string(d.kind))
      .field("platform", d.platform)
      .field("platform_version", d.platform_version)
      .field("name", d.name)
      .field("vendor", d.vendor)
      .field("driver_version", d.driver_version)
      .field("opencl_version", d.opencl_version)
      .field("compute_units", d.compute_units)
      .field("global_memory", d.global_memory)
      .field("local_memory", d.local_memory)
      .field("max_alloc", d.max_alloc)
      .field("max_work_group_size", d.max_work_group_size)
      .field("preferred_work_group_multiple", d.preferred_work_group_multiple)
      .field("host_unified_memory", d.host_unified_memory)
      .field("host_pointer_aliased", d.host_pointer_aliased)
      .array("partition_types", d.partition_types);
  j.key("fission_configs").begin_array();
  for (const auto& f : d.fission_configs) {
    j.begin_object()
        .field("name", f.name)
        .field("sub_devices", f.sub_devices())
        .array("groups", f.groups)
        .field("method", f.method)
        .array("same_as", f.same_as)
        .end_object();
  }
  j.end_array();
  j.array("overlap_levels", d.overlap_levels);
  j.end_object();
}

// One line per device: id, kind, compute units, memory, name.
void print_device_summary(std::ostream& out, const std::vector<sinew::DeviceInfo>& infos, const std::string& indent) {
  std::vector<std::vector<std::string>> summary = {{"id", "kind", "CUs", "memory", "name"}};
  for (const auto& d : infos)
    summary.push_back({d.id(), sinew::to_string(d.kind), std::to_string(d.compute_units), gib(d.global_memory), d.name});
  print_table(out, summary, indent);
}

// sinew devices --mpi: every rank's devices, gathered to rank 0, which prints them.
int devices_of_ranks(const std::string& devices) {
#ifdef SINEW_HAS_MPI
  sinew::ClusterOptions o;
  o.runtime = runtime_options(devices);
  sinew::Cluster cluster(o);
  const auto all = cluster.devices();
  if (!cluster.is_root()) return 0;
  std::cout << all.size() << (all.size() == 1 ? " MPI rank" : " MPI ranks") << ":\n";
  for (const auto& r : all) {
    std::cout << "rank " << r.rank << " on " << r.host << ": " << r.devices.size()
              << (r.devices.size() == 1 ? " device" : " devices") << "\n";
    print_device_summary(std::cout, r.devices, "  ");
  }
  return 0;
#else
  (void)devices;
  std::cerr << "sinew devices: --mpi: this Sinew was built without MPI (configure with SINEW_MPI=ON)\n";
  return 2;
#endif
}

int cmd_devices(const Args& args) {
  std::string devices;
  po::options_description options("sinew devices [options]: the OpenCL devices Sinew uses");
  options.add_options()("json", "print JSON instead of a table")(
      "mpi", "every MPI rank's devices, printed by rank 0 (mpirun -np N sinew devices --mpi)");
  add_devices_option(options, devices);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  if (p.vm.count("mpi")) return devices_of_ranks(devices);

  sinew::Runtime rt(runtime_options(devices));
  const auto& infos = rt.devices();
  if (p.vm.count("json")) {
    Json j(std::cout);
    j.begin_object().field("version", sinew::version).key("devices").begin_array();
    for (const auto& d : infos) print_device_json(j, d);
    j.end_array().end_object();
    return 0;
  }

  std::cout << infos.size() << (infos.size() == 1 ? " device" : " devices") << ":\n";
  print_device_summary(std::cout, infos, "  ");
  for (const auto& d : infos) {
    std::cout << '\n';
    print_device(std::cout, d);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// sinew smoke

constexpr const char* kSmokeSource = R"CL(
// y = a * x + y, one element per work-item.
__kernel void smoke(__global const float* x, __global float* y, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
)CL";

int cmd_smoke(const Args& args) {
  std::string devices, elements = std::to_string(std::size_t(1) << 20);
  po::options_description options("sinew smoke [options]: runs y = 2x + y on each device alone and checks it");
  options.add_options()("elements,n", po::value(&elements)->default_value(elements)->value_name("N"),
                        "vector length (a multiple of 1024)");
  add_devices_option(options, devices);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  const std::size_t n = read_count("--elements", elements, 1024, std::numeric_limits<std::size_t>::max());
  if (n % 1024 != 0)
    throw po::error("--elements = '" + elements + "' is not a multiple of 1024 (give a whole number of 1024s, e.g. " +
                    std::to_string(n / 1024 * 1024) + ")");
  // x, y, y's initial and expected values on the host, and each device's copy of y in turn.
  constexpr std::uint64_t kBytesPerElement = 4 * sizeof(cl_float);
  if (const std::uint64_t memory = physical_memory();
      memory && n > memory / kBytesPerElement)
    throw po::error("--elements = '" + elements + "' is refused: its vectors take " +
                    (n > std::numeric_limits<std::uint64_t>::max() / kBytesPerElement
                         ? "more than 2^64 bytes"
                         : std::to_string(n * kBytesPerElement) + " bytes (" + gib(n * kBytesPerElement) + ")") +
                    ", more than this machine's physical memory, " + std::to_string(memory) + " bytes (" +
                    gib(memory) + ")");

  constexpr float a = 2.0f;
  auto x = sinew::vector<cl_float>(n).name("x");
  auto y = sinew::vector<cl_float>(n).name("y");
  auto tree = sinew::kernel_source(kSmokeSource, "smoke", "sinew smoke")
                  .args(sinew::in(x), sinew::inout(y), sinew::scalar(a));

  // Values that are exact in float, so every device must agree with the host bit for bit
  // (a fused multiply-add changes nothing either).
  std::vector<cl_float> hx(n), y0(n), expected(n);
  for (std::size_t i = 0; i < n; ++i) {
    hx[i] = float(i % 1024) * 0.25f;
    y0[i] = float(i % 7) - 3.0f;
    expected[i] = a * hx[i] + y0[i];
  }

  sinew::Runtime rt(runtime_options(devices));
  const auto& infos = rt.devices();
  int failures = 0;
  std::vector<std::string> details;
  std::vector<std::vector<std::string>> rows = {{"device", "name", "result", "wall"}};
  for (std::size_t i = 0; i < infos.size(); ++i) {
    std::vector<cl_float> hy = y0;
    std::string result;
    std::string wall = "-";
    try {
      auto report = rt.run(tree, {{x, hx}, {y, hy}}, device_only(i)).get();
      std::size_t bad = 0, first_bad = 0;
      for (std::size_t k = 0; k < n; ++k) {
        if (hy[k] != expected[k] && bad++ == 0) first_bad = k;
      }
      if (bad == 0) {
        result = "OK";
      } else {
        std::ostringstream s;
        s << "FAILED (" << bad << " wrong, y[" << first_bad << "] = " << hy[first_bad] << ", expected "
          << expected[first_bad] << ")";
        result = s.str();
      }
      wall = fixed(report.wall_ms, 2) + " ms";
    } catch (const sinew::Error& e) {
      result = "FAILED: " + e.message();       // one line for the table ...
      details.push_back(infos[i].id() + ": " + e.what());  // ... the whole story after it
    }
    if (result != "OK") ++failures;
    rows.push_back({infos[i].id(), infos[i].name, result, wall});
  }
  std::cout << "smoke: y = 2x + y over " << n << " floats on each device alone\n";
  print_table(std::cout, rows, "  ");
  for (const auto& d : details) std::cerr << d << '\n';
  const std::string devices_text = std::to_string(infos.size()) + (infos.size() == 1 ? " device" : " devices");
  std::cout << (failures ? std::to_string(failures) + " of " + devices_text + " FAILED" : devices_text + ": OK") << '\n';
  return failures ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// sinew kb list | show | export | import | clear

sinew::ErrorContext fix_context(std::string fix) {
  sinew::ErrorContext c;
  c.fix = std::move(fix);
  return c;
}

// The knowledge base a kb subcommand works on. Read-only subcommands on a missing file return
// null (nothing has been learnt yet) instead of creating one. A file that cannot be used is an
// error here: a command line tool must not silently work on an in-memory copy.
// How a kb subcommand uses the file: reading (list, show, export: nothing is created, moved,
// converted or written; a file that cannot be read is an error, exit 1), writing an existing one
// (clear), or writing one that may not exist yet (import).
enum class KbUse { read, write, create };

// Opens the knowledge base --kb names (or the default); null, after saying so on `says` (standard
// error for a command printing JSON), when there is none and `use` does not create one.
std::unique_ptr<sinew::KnowledgeBase> open_kb(const std::string& option, KbUse use, std::ostream& says = std::cout) {
  sinew::RuntimeOptions o;
  if (!option.empty()) o.kb_path = option;
  const std::string path = *o.effective().kb_path;
  if (use != KbUse::create && path != ":memory:" && !std::filesystem::exists(path)) {
    says << "no knowledge base at " << path << " (Sinew creates it on the first run that learns something)\n";
    return nullptr;
  }
  auto kb = sinew::KnowledgeBase::open(path, {.log = {}, .read_only = use == KbUse::read && path != ":memory:"});
  if (!kb->persistent() && path != ":memory:")
    throw sinew::Error(sinew::errc::knowledge_base, kb->warning(),
                       fix_context("pass another file with --kb PATH or SINEW_KB"));
  return kb;
}

void add_kb_option(po::options_description& options, std::string& path) {
  options.add_options()("kb", po::value(&path)->value_name("PATH"),
                        "the knowledge base file (default: $SINEW_KB, else $XDG_DATA_HOME/sinew/kb.sqlite, "
                        "else ~/.local/share/sinew/kb.sqlite)");
}

// Like parse(), with positional arguments bound to the named options.
Parsed parse_positional(const Args& args, po::options_description& options,
                        const po::positional_options_description& positional) {
  options.add_options()("help,h", "show this help");
  Parsed p;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), p.vm);
  po::notify(p.vm);
  p.help = p.vm.count("help") > 0;
  return p;
}

std::string features_text(const sinew::KbFeatures& features) {
  std::vector<std::string> items;
  for (const auto& [name, value] : features) {
    std::ostringstream s;
    s << name << '=' << std::setprecision(15) << value;
    items.push_back(s.str());
  }
  return items.empty() ? "(none)" : join(items, ", ");
}

std::string ms_text(double ms) { return fixed(ms, ms < 10 ? 3 : 2) + " ms"; }

std::string plural(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + ' ' + (n == 1 ? one : many);
}

std::string counts_text(const sinew::KbCounts& c) {
  return plural(c.entries, "entry", "entries") + ", " + plural(c.runs, "run", "runs") + " and " +
         plural(c.events, "event", "events");
}

// The one tree a (possibly abbreviated) signature names.
std::string resolve_tree(const sinew::KnowledgeBase& kb, const std::string& prefix) {
  auto matches = kb.match_trees(prefix);
  if (matches.size() == 1) return matches.front();
  if (matches.empty())
    throw sinew::Error(sinew::errc::invalid_argument, "no tree in " + kb.path() + " starts with '" + prefix + "'",
                       fix_context("'sinew kb list' shows the stored trees"));
  throw sinew::Error(sinew::errc::invalid_argument,
                     "'" + prefix + "' starts " + std::to_string(matches.size()) + " trees: " + join(matches, ", "),
                     fix_context("give more of the signature"));
}

void print_trees_json(const sinew::KnowledgeBase& kb, const std::vector<sinew::KbTreeSummary>& trees) {
  Json j(std::cout);
  j.begin_object().field("knowledge_base", kb.path()).key("trees").begin_array();
  for (const auto& t : trees)
    j.begin_object()
        .field("tree", t.tree)
        .field("label", t.label)
        .field("description", t.description)
        .field("entries", t.entries)
        .field("runs", t.runs)
        .field("events", t.events)
        .field("updated", t.updated)
        .end_object();
  j.end_array().end_object();
}

int kb_list(const Args& args) {
  std::string path;
  po::options_description options("sinew kb list [options]: the trees the knowledge base knows");
  options.add_options()("json", "print JSON instead of a table");
  add_kb_option(options, path);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  const bool json = p.vm.count("json") > 0;
  auto kb = open_kb(path, KbUse::read, json ? std::cerr : std::cout);
  if (!kb) {
    if (json) std::cout << "{\"knowledge_base\": null, \"trees\": []}\n";
    return 0;
  }
  auto trees = kb->trees();
  if (json) {
    print_trees_json(*kb, trees);
    return 0;
  }
  std::cout << "knowledge base " << kb->path() << ": " << plural(std::int64_t(trees.size()), "tree", "trees") << '\n';
  if (trees.empty()) return 0;
  std::vector<std::vector<std::string>> rows = {{"tree", "label", "entries", "runs", "events", "updated"}};
  for (const auto& t : trees)
    rows.push_back({t.tree, t.label.empty() ? "-" : t.label, std::to_string(t.entries), std::to_string(t.runs),
                    std::to_string(t.events), t.updated.empty() ? "-" : t.updated});
  print_table(std::cout, rows, "  ");
  return 0;
}

void print_entry_json(Json& j, const sinew::KnowledgeBase& kb, const sinew::KbEntry& e) {
  j.begin_object()
      .field("id", e.id)
      .field("devices", e.key.devices)
      .field("library", e.key.library)
      .key("features").begin_object();
  for (const auto& [name, value] : e.features) j.field(name, value);
  j.end_object()
      .field("config", e.config.str())
      .array("shares", e.config.shares)
      .field("time_ms", e.time_ms)
      .field("provenance", std::string(sinew::to_string(e.provenance)));
  if (e.source) j.field("source", *e.source);
  j.field("strategy", e.strategy)
      .field("precision", e.precision)
      .field("quality", e.quality)
      .field("executions", e.executions)
      .field("created", e.created)
      .field("updated", e.updated);
  j.key("events").begin_array();
  for (const auto& x : kb.events(e.id))
    j.begin_object()
        .field("execution", x.execution)
        .field("level", x.level)
        .field("before", x.before.str())
        .field("after", x.after.str())
        .field("time_ms", x.time_ms)
        .array("partition_ms", x.partition_ms)
        .field("deviation", x.deviation)
        .field("lbt", x.lbt)
        .field("created", x.created)
        .end_object();
  j.end_array().end_object();
}

// `sinew kb show --json`: the tree, its entries with their balancer events, and every run.
void print_tree_json(const sinew::KnowledgeBase& kb, const std::string& tree) {
  std::string label, description;
  for (const auto& t : kb.trees())
    if (t.tree == tree) label = t.label, description = t.description;
  Json j(std::cout);
  j.begin_object()
      .field("knowledge_base", kb.path())
      .field("tree", tree)
      .field("label", label)
      .field("description", description)
      .key("entries").begin_array();
  for (const auto& e : kb.entries_for_tree(tree)) print_entry_json(j, kb, e);
  j.end_array().key("runs").begin_array();
  for (const auto& r : kb.runs_for_tree(tree)) {
    j.begin_object()
        .field("id", r.id)
        .field("devices", r.key.devices)
        .field("library", r.key.library)
        .key("features").begin_object();
    for (const auto& [name, value] : r.features) j.field(name, value);
    j.end_object()
        .field("config", r.config.str())
        .array("shares", r.config.shares)
        .field("time_ms", r.time_ms)
        .array("partition_ms", r.partition_ms)
        .field("purpose", r.purpose)
        .field("created", r.created)
        .end_object();
  }
  j.end_array().end_object();
}

int kb_show(const Args& args) {
  std::string path, prefix, runs_text = "10";
  po::options_description options("sinew kb show [options] TREE: a tree's entries, events and measurements "
                                  "(TREE: its signature or the start of it)");
  options.add_options()("tree", po::value(&prefix)->value_name("TREE"), "tree signature (prefix)")(
      "runs", po::value(&runs_text)->default_value(runs_text)->value_name("N"), "show the last N runs of each input (0: all)")(
      "json", "print JSON instead of tables: every entry, balancer event and run");
  add_kb_option(options, path);
  po::positional_options_description positional;
  positional.add("tree", 1);
  auto p = parse_positional(args, options, positional);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  const std::size_t last = read_count("--runs", runs_text, 0, std::numeric_limits<std::size_t>::max());
  if (prefix.empty()) throw po::error("which tree? give its signature, or the start of it ('sinew kb list')");
  const bool json = p.vm.count("json") > 0;
  auto kb = open_kb(path, KbUse::read, json ? std::cerr : std::cout);
  if (!kb) return 1;
  const std::string tree = resolve_tree(*kb, prefix);
  if (json) {
    print_tree_json(*kb, tree);
    return 0;
  }

  std::string label, description;
  for (const auto& t : kb->trees())
    if (t.tree == tree) {
      label = t.label;
      description = t.description;
    }
  std::cout << "tree " << tree << (label.empty() ? "" : "  " + label) << '\n';
  if (!description.empty()) {
    std::istringstream lines(description);
    for (std::string line; std::getline(lines, line);) std::cout << "  | " << line << '\n';
  }

  auto entries = kb->entries_for_tree(tree);
  auto runs = kb->runs_for_tree(tree);
  // Group by device set and library, in order of first appearance.
  std::vector<std::pair<std::string, std::string>> groups;
  auto note = [&](const sinew::KbKey& k) {
    std::pair<std::string, std::string> g{k.devices, k.library};
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  };
  for (const auto& e : entries) note(e.key);
  for (const auto& r : runs) note(r.key);

  for (const auto& [devices, library] : groups) {
    std::cout << "\ndevices: " << devices << "\nlibrary: " << library << '\n';
    std::vector<std::vector<std::string>> rows = {
        {"id", "features", "config", "time", "provenance", "strategy", "precision", "quality", "executions", "updated"}};
    std::vector<const sinew::KbEntry*> mine;
    for (const auto& e : entries) {
      if (e.key.devices != devices || e.key.library != library) continue;
      mine.push_back(&e);
      std::string provenance(sinew::to_string(e.provenance));
      if (e.source) provenance += " from #" + std::to_string(*e.source);
      rows.push_back({"#" + std::to_string(e.id), features_text(e.features), e.config.str(), ms_text(e.time_ms),
                      provenance, e.strategy.empty() ? "-" : e.strategy, fixed(e.precision, 3),
                      std::to_string(e.quality), std::to_string(e.executions), e.updated});
    }
    if (mine.empty()) {
      std::cout << "  no entries (measurements only: training did not finish)\n";
    } else {
      std::cout << "  " << plural(std::int64_t(mine.size()), "entry", "entries") << ":\n";
      print_table(std::cout, rows, "    ");
    }
    for (const auto* e : mine) {
      auto events = kb->events(e->id);
      if (events.empty()) continue;
      std::cout << "  balancer events of #" << e->id << ":\n";
      std::vector<std::vector<std::string>> ev = {{"execution", "level", "before", "after", "time", "deviation", "lbt", "created"}};
      for (const auto& x : events)
        ev.push_back({std::to_string(x.execution), std::to_string(x.level), x.before.str(), x.after.str(),
                      ms_text(x.time_ms), fixed(x.deviation, 3), fixed(x.lbt, 3), x.created});
      print_table(std::cout, ev, "    ");
    }

    // Measurements, by input.
    std::vector<std::string> inputs;
    std::map<std::string, std::vector<const sinew::KbRun*>> by_input;
    for (const auto& r : runs) {
      if (r.key.devices != devices || r.key.library != library) continue;
      auto f = features_text(r.features);
      if (!by_input.count(f)) inputs.push_back(f);
      by_input[f].push_back(&r);
    }
    for (const auto& f : inputs) {
      const auto& list = by_input[f];
      std::size_t from = last == 0 || list.size() <= last ? 0 : list.size() - last;
      std::cout << "  " << plural(std::int64_t(list.size()), "run", "runs") << " with " << f
                << (from ? " (the last " + std::to_string(last) + ")" : "") << ":\n";
      std::vector<std::vector<std::string>> rr = {{"created", "purpose", "config", "time", "partitions (ms)"}};
      for (std::size_t i = from; i < list.size(); ++i) {
        const auto& r = *list[i];
        std::vector<std::string> parts;
        for (double ms : r.partition_ms) parts.push_back(fixed(ms, 3));
        rr.push_back({r.created, r.purpose, r.config.str(), ms_text(r.time_ms), parts.empty() ? "-" : join(parts, " ")});
      }
      print_table(std::cout, rr, "    ");
    }
  }
  return 0;
}

int kb_export(const Args& args) {
  std::string path, out, prefix;
  po::options_description options("sinew kb export [options]: the knowledge base as JSON");
  options.add_options()("out,o", po::value(&out)->value_name("FILE"), "write to FILE instead of standard output")(
      "tree", po::value(&prefix)->value_name("TREE"), "only this tree (signature or the start of it)");
  add_kb_option(options, path);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  auto kb = open_kb(path, KbUse::read);
  if (!kb) return 1;
  std::optional<std::string> tree;
  if (p.vm.count("tree")) tree = resolve_tree(*kb, prefix);
  const std::string json = kb->export_json(tree);
  if (out.empty() || out == "-") {
    std::cout << json;
    return 0;
  }
  // Through a temporary file, so an interrupted export never leaves half a file under the name.
  const std::string tmp = out + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    file << json;
    file.close();
    if (!file) throw sinew::Error(sinew::errc::io, "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) throw sinew::Error(sinew::errc::io, "cannot rename " + tmp + " to " + out + ": " + ec.message());
  std::cout << "exported " << kb->path() << (tree ? " (tree " + *tree + ")" : "") << " to " << out << '\n';
  return 0;
}

int kb_import(const Args& args) {
  std::string path, in;
  po::options_description options("sinew kb import [options] FILE: merges an export into the knowledge base "
                                  "(FILE '-': standard input)");
  options.add_options()("file", po::value(&in)->value_name("FILE"), "the JSON export");
  add_kb_option(options, path);
  po::positional_options_description positional;
  positional.add("file", 1);
  auto p = parse_positional(args, options, positional);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  if (in.empty()) throw po::error("which file? give the export to import ('-': standard input)");
  std::ostringstream text;
  if (in == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream file(in, std::ios::binary);
    if (!file) throw sinew::Error(sinew::errc::io, "cannot read " + in + ": " + std::strerror(errno));
    text << file.rdbuf();
  }
  auto kb = open_kb(path, KbUse::create);
  auto counts = kb->import_json(text.str());
  std::cout << "imported " << counts_text(counts) << " into " << kb->path()
            << (counts.total() ? "" : " (everything was already there)") << '\n';
  return 0;
}

int kb_clear(const Args& args) {
  std::string path, prefix;
  po::options_description options("sinew kb clear [options]: removes everything (or one tree) from the knowledge "
                                  "base, without asking");
  options.add_options()("tree", po::value(&prefix)->value_name("TREE"), "only this tree (signature or the start of it)");
  add_kb_option(options, path);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  auto kb = open_kb(path, KbUse::write);
  if (!kb) return 0;
  std::optional<std::string> tree;
  if (p.vm.count("tree")) tree = resolve_tree(*kb, prefix);
  auto removed = kb->clear(tree);
  std::cout << "removed " << counts_text(removed) << " from " << kb->path() << (tree ? " (tree " + *tree + ")" : "")
            << '\n';
  return 0;
}

int kb_plot(const Args& args) {
  std::string path, prefix, out;
  po::options_description options("sinew kb plot [options] TREE: an SVG chart of the tree's measured points: "
                                  "time against each device's share, per device and plan, the stored plan ringed");
  options.add_options()("tree", po::value(&prefix)->value_name("TREE"), "tree signature (prefix)")(
      "out,o", po::value(&out)->value_name("FILE"), "the SVG file (default: TREE.svg, the full signature; '-': standard output)");
  add_kb_option(options, path);
  po::positional_options_description positional;
  positional.add("tree", 1);
  auto p = parse_positional(args, options, positional);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  if (prefix.empty()) throw po::error("which tree? give its signature, or the start of it ('sinew kb list')");
  auto kb = open_kb(path, KbUse::read);
  if (!kb) return 1;
  const std::string tree = resolve_tree(*kb, prefix);
  const std::string svg = sinew::tools::kb_plot_svg(*kb, tree);
  if (out == "-") {
    std::cout << svg;
    return 0;
  }
  if (out.empty()) out = tree + ".svg";
  if (const std::string why = sinew::plot::write_svg(out, svg); !why.empty()) throw sinew::Error(sinew::errc::io, why);
  std::cout << "wrote " << out << " (tree " << tree << ")\n";
  return 0;
}

struct KbCommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Args& args);
};

constexpr KbCommand kKbCommands[] = {
    {"list", "the trees it knows, with their numbers of entries, runs and events", kb_list},
    {"show", "one tree's entries (plan, time, provenance), balancer events and measurements", kb_show},
    {"plot", "an SVG chart of one tree's measured points (time against share), the stored plan ringed", kb_plot},
    {"export", "everything, or one tree, as JSON", kb_export},
    {"import", "merge a JSON export (nothing is duplicated)", kb_import},
    {"clear", "remove everything, or one tree (--tree), without asking", kb_clear},
};

void kb_usage(std::ostream& out) {
  out << "usage: sinew kb <command> [options]: what Sinew has learnt about running trees here\n\ncommands:\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : kKbCommands) rows.push_back({std::string(c.name), std::string(c.summary)});
  print_table(out, rows, "  ");
  out << "\nEvery command takes --kb PATH; the default is $SINEW_KB, else $XDG_DATA_HOME/sinew/kb.sqlite,\n"
         "else ~/.local/share/sinew/kb.sqlite. 'sinew kb <command> --help' describes its options.\n";
}

int cmd_kb(const Args& args) {
  if (args.empty()) {
    kb_usage(std::cerr);
    return 2;
  }
  if (args.front() == "--help" || args.front() == "-h" || args.front() == "help") {
    kb_usage(std::cout);
    return 0;
  }
  auto it = std::find_if(std::begin(kKbCommands), std::end(kKbCommands),
                         [&](const KbCommand& c) { return c.name == args.front(); });
  if (it == std::end(kKbCommands)) {
    std::cerr << "sinew kb: unknown command '" << args.front() << "'\n\n";
    kb_usage(std::cerr);
    return 2;
  }
  return it->run(Args(args.begin() + 1, args.end()));
}

// ---------------------------------------------------------------------------------------------
// sinew train <sample>

int cmd_train(const Args& args) {
#ifdef SINEW_HAVE_SAMPLES
  // Settings left out come from the SINEW_* variables, else the library's defaults (shown in --help).
  const sinew::TrainingSettings defaults = sinew::TrainingSettings{}.with_defaults();
  std::string devices, kb, sample_name, strategy, size, precision, quality, max_executions;
  bool exhaustive = false, pinned = false;
  std::string names;
  for (const auto& n : sinew::samples::names()) names += (names.empty() ? "" : ", ") + n;
  std::ostringstream default_precision;
  default_precision << *defaults.precision;
  po::options_description options("sinew train <sample> [options]: trains the sample's tree for an input size on "
                                  "every device and stores the plan in the knowledge base (samples: " + names + ")");
  options.add_options()("sample", po::value(&sample_name)->value_name("NAME"), "the sample to train")(
      "size", po::value(&size)->value_name("N"),
      "problem size (default: the sample's standard size); filter_pipeline also takes WIDTHxHEIGHT")(
      "strategy", po::value(&strategy)->value_name("NAME"),
      ("even_split (50/50), cpu_assisted or model (SkePU's linear time models, at most 10 executions) "
       "(default: $SINEW_STRATEGY, else " +
       std::string(sinew::to_string(*defaults.strategy)) + ")").c_str())(
      "precision", po::value(&precision)->value_name("P"),
      ("device times within this fraction are balanced (default: $SINEW_PRECISION, else " + default_precision.str() +
       ")").c_str())(
      "quality", po::value(&quality)->value_name("N"),
      ("executions per measured point (default: $SINEW_QUALITY, else " + std::to_string(*defaults.quality) + ")")
          .c_str())(
      "max-executions", po::value(&max_executions)->value_name("N"),
      ("training budget (default " + std::to_string(*defaults.max_executions) + ")").c_str())(
      "exhaustive", po::bool_switch(&exhaustive), "every fission x overlap combination (the spec's uniform search)")(
      "pinned", po::bool_switch(&pinned), "keep the sample's host data in pinned memory, where it supports it");
  add_devices_option(options, devices);
  add_kb_option(options, kb);
  po::positional_options_description positional;
  positional.add("sample", 1);
  auto p = parse_positional(args, options, positional);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  auto sample = sinew::samples::find(sample_name);
  if (!sample) throw po::error("unknown sample '" + sample_name + "'; the samples are: " + names);

  // Everything is checked before a Runtime is made, so a bad flag trains nothing.
  const std::optional<std::string> size_given = p.vm.count("size") ? std::optional(size) : std::nullopt;
  try {
    sinew::samples::check_size_argument(*sample, "--size", size_given);  // range and physical memory
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  sinew::RuntimeOptions o = runtime_options(devices);
  if (!kb.empty()) o.kb_path = kb;
  if (p.vm.count("strategy"))
    o.training.strategy = usage_checked([&] { return sinew::parse::choice<sinew::Strategy>(strategy, "--strategy"); });
  namespace rule = sinew::detail::rule;
  if (p.vm.count("precision")) o.training.precision = read_setting("--precision", precision, rule::precision);
  if (p.vm.count("quality"))
    o.training.quality = static_cast<unsigned>(read_setting("--quality", quality, rule::quality));
  if (p.vm.count("max-executions"))
    o.training.max_executions = read_setting("--max-executions", max_executions, rule::max_executions);
  if (exhaustive) o.training.exhaustive = true;
  sinew::Runtime rt(o);  // reads and checks the SINEW_* variables before any device work
  if (pinned && !sample->use_pinned_memory(rt)) throw po::error(sample_name + " does not support --pinned");
  try {
    sample->prepare(size_given.value_or(""));
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  sinew::Report r = sample->run(rt, training_run());
  const auto check = sample->check();
  std::cout << sample_name << " size " << sample->size_text() << " (" << sample->size_unit() << "): trained "
            << r.config.str() << " in " << r.training_executions << " executions, " << r.training_seconds
            << " s; knowledge-base entry #" << r.kb_entry << "\n"
            << r.str() << "result: " << (check.ok ? "OK" : "MISMATCH " + check.message) << "\n";
  return check.ok ? 0 : 1;
#else
  (void)args;
  std::cerr << "sinew train: this sinew was built without the samples (SINEW_BUILD_SAMPLES=OFF)\n";
  return 1;
#endif
}

// ---------------------------------------------------------------------------------------------
// sinew load

// Set by SIGINT/SIGTERM while `sinew load` runs; the main thread polls it and stops the load.
volatile std::sig_atomic_t load_interrupted = 0;

void on_load_signal(int) { load_interrupted = 1; }

int cmd_load(const Args& args) {
  std::string threads_text = "0", seconds_text = "0";
  po::options_description options(
      "sinew load [options]: loads the CPU with busy threads, each solving random dense " +
      std::to_string(sinew_tools::LoadGenerator::kOrder) + "x" + std::to_string(sinew_tools::LoadGenerator::kOrder) +
      " linear systems (the spec's load-fluctuation experiment); Ctrl-C stops it");
  options.add_options()("threads", po::value(&threads_text)->value_name("N"),
                        "busy threads, 0 to 4096 (default 0: one per hardware thread)")(
      "seconds", po::value(&seconds_text)->value_name("S"),
      "run this long, up to 1e9 s (default 0: until SIGINT/SIGTERM)");
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  const auto threads = static_cast<unsigned>(read_count("--threads", threads_text, 0, 4096));
  // Up to 1e9 s (31 years): a deadline the steady clock can still hold.
  const double seconds = read_number("--seconds", seconds_text, 0, 1e9);

  load_interrupted = 0;
  std::signal(SIGINT, on_load_signal);
  std::signal(SIGTERM, on_load_signal);
  sinew_tools::LoadGenerator load;
  const unsigned started = load.start(threads);
  std::cout << "sinew load: " << started << " thread(s) solving random " << sinew_tools::LoadGenerator::kOrder << "x"
            << sinew_tools::LoadGenerator::kOrder << " dense linear systems (Gaussian elimination, partial pivoting) "
            << (seconds > 0 ? "for " + fixed(seconds, 1) + " s" : std::string("until interrupted (Ctrl-C)"))
            << std::endl;
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds));
  // Short sleeps: a signal or the deadline stops the load within ~50 ms.
  while (!load_interrupted && (seconds == 0 || std::chrono::steady_clock::now() < deadline))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t solved = load.stop();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "sinew load: " << (load_interrupted ? "interrupted; " : "") << "solved " << solved << " problems in "
            << fixed(elapsed, 2) << " s (" << fixed(solved / std::max(elapsed, 1e-9), 0) << " per second, "
            << fixed(solved / std::max(elapsed, 1e-9) / started, 0) << " per thread per second)\n";
  return 0;
}

// ---------------------------------------------------------------------------------------------
// sinew cache

int cmd_cache(const Args& args) {
  std::string action;
  po::options_description options(
      "sinew cache <path|clear>: the on-disk program cache (RuntimeOptions::cache_dir). `clear` removes every "
      "cached binary; programs are built again on their next use. A remedy when a driver misbehaves on a "
      "cached binary, and always safe");
  options.add_options()("action", po::value(&action)->value_name("ACTION"), "path or clear");
  po::positional_options_description positional;
  positional.add("action", 1);
  auto p = parse_positional(args, options, positional);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  const std::string dir = *sinew::RuntimeOptions{}.effective().cache_dir;
  if (action == "path") {
    std::cout << dir << "\n";
    return 0;
  }
  if (action != "clear") throw po::error(action.empty() ? "name an action: path or clear" : "unknown action '" + action + "'");
  std::error_code ec;
  std::size_t removed = 0;
  if (std::filesystem::is_directory(dir, ec))
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      // Binaries, their markers and temporaries; lock files stay (another process may hold one).
      if (name.find(".bin") == std::string::npos || name.size() < 5 || name.substr(name.size() - 5) == ".lock")
        continue;
      if (std::filesystem::remove(e.path(), ec)) ++removed;
    }
  std::cout << "removed " << removed << " file(s) from " << dir << "\n";
  return ec ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// sinew options

int cmd_options(const Args& args) {
  po::options_description options(
      "sinew options [options]: the SINEW_* variables and the settings they give, and what a runtime made "
      "here would use (variables are read and checked like a Runtime reads them)");
  options.add_options()("markdown", "print the table of variables as Markdown (docs/guide/options.md's)");
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  if (p.vm.count("markdown")) {
    std::cout << sinew::environment_table_markdown();
    return 0;
  }
  const sinew::RuntimeOptions env = sinew::RuntimeOptions::from_environment();  // throws on a bad value
  std::vector<std::vector<std::string>> rows = {{"variable", "setting", "accepts", "default"}};
  for (const auto& v : sinew::environment_variables()) rows.push_back({v.name, v.setting, v.accepted, v.default_value});
  print_table(std::cout, rows, "");
  const sinew::RuntimeOptions o = env.with_defaults();
  std::cout << "\nin force here: devices " << *o.devices << ", knowledge base " << *o.kb_path << ", program cache "
            << *o.cache_dir << ", strategy " << sinew::to_string(*o.training.strategy) << ", balancer "
            << (*o.balancer.enabled ? "on" : "off") << "\n";
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The command table and dispatch.

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Args& args);
};

constexpr Command kCommands[] = {
    {"devices", "list the OpenCL devices, their fission configurations and overlap levels", cmd_devices},
    {"smoke", "run a small kernel on every device alone and check the result", cmd_smoke},
    {"kb", "the knowledge base: list, show, plot, export, import, clear", cmd_kb},
    {"train", "train a sample's tree on every device and store the plan in the knowledge base", cmd_train},
    {"load", "load the CPU with busy threads (dense linear solves) for the balancing experiments", cmd_load},
    {"cache", "the program cache: its path, or clear it", cmd_cache},
    {"options", "the SINEW_* variables, what they accept, and the settings in force", cmd_options},
};

void usage(std::ostream& out) {
  out << "usage: sinew [--help | --version] <command> [options]\n\ncommands:\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : kCommands) rows.push_back({std::string(c.name), std::string(c.summary)});
  print_table(out, rows, "  ");
  out << "\n'sinew <command> --help' describes a command's options.\n"
         "SINEW_DEVICES selects devices (all, cpu, gpu, gpu:0,cpu, cpu:1); SINEW_KB the knowledge base file.\n";
}

}  // namespace

int main(int argc, char** argv) {
  Args args(argv + 1, argv + argc);
  if (args.empty()) {
    usage(std::cerr);
    return 2;
  }
  const std::string& first = args.front();
  if (first == "--help" || first == "-h" || first == "help") {
    usage(std::cout);
    return 0;
  }
  if (first == "--version" || first == "-V") {
    std::cout << "sinew " << SINEW_VERSION_STRING << '\n';
    return 0;
  }
  auto it = std::find_if(std::begin(kCommands), std::end(kCommands), [&](const Command& c) { return c.name == first; });
  if (it == std::end(kCommands)) {
    std::cerr << "sinew: unknown command '" << first << "'\n\n";
    usage(std::cerr);
    return 2;
  }

  try {
    return it->run(Args(args.begin() + 1, args.end()));
  } catch (const po::error& e) {
    std::cerr << "sinew " << it->name << ": " << e.what() << "\n(see 'sinew " << it->name << " --help')\n";
    return 2;
  } catch (const sinew::Error& e) {
    std::cerr << "sinew " << it->name << ": " << e.what() << '\n';  // what() names node, device and fix
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "sinew " << it->name << ": unexpected error: " << e.what() << '\n';
    return 1;
  }
}
