// tools/sinew.cpp — the `sinew` command line: a table of subcommands over the public API.
//
// Each subcommand is one entry of kCommands (name, one-line summary, handler). A handler gets the
// arguments after its name, parses its own options with Boost.Program_options and returns the
// process exit status: 0 success, 1 failure (a sinew::Error, a failed check), 2 bad usage.
#include <sinew/sinew.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace po = boost::program_options;

namespace {

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

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

class Json {
 public:
  explicit Json(std::ostream& out) : out_(out) {}

  Json& begin_object() { value_prefix(); out_ << '{'; first_.push_back(true); return *this; }
  Json& end_object() { close('}'); return *this; }
  Json& begin_array() { value_prefix(); out_ << '['; first_.push_back(true); return *this; }
  Json& end_array() { close(']'); return *this; }

  Json& key(std::string_view k) {
    separator();
    out_ << json_escape(k) << ": ";
    after_key_ = true;
    return *this;
  }
  Json& value(std::string_view s) { value_prefix(); out_ << json_escape(s); return *this; }
  Json& value(const char* s) { return value(std::string_view(s)); }
  Json& value(const std::string& s) { return value(std::string_view(s)); }
  Json& value(bool b) { value_prefix(); out_ << (b ? "true" : "false"); return *this; }
  template <class T>
    requires std::is_arithmetic_v<T>
  Json& value(T n) {
    value_prefix();
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isfinite(n)) out_ << n; else out_ << "null";
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
      if constexpr (std::is_arithmetic_v<T>) out_ << items[i]; else out_ << json_escape(items[i]);
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

void add_devices_option(po::options_description& options, std::string& devices) {
  options.add_options()("devices,d", po::value(&devices)->value_name("SPEC"),
                        "devices to use: all, cpu, gpu, gpu:0,cpu, cpu:1 (default: $SINEW_DEVICES, else all)");
}

sinew::RuntimeOptions runtime_options(const std::string& devices) {
  sinew::RuntimeOptions o;
  o.devices = devices;  // empty: the Runtime reads $SINEW_DEVICES itself
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

int cmd_devices(const Args& args) {
  std::string devices;
  po::options_description options("sinew devices [options]: the OpenCL devices Sinew uses");
  options.add_options()("json", "print JSON instead of a table");
  add_devices_option(options, devices);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }

  sinew::Runtime rt(runtime_options(devices));
  const auto& infos = rt.devices();
  if (p.vm.count("json")) {
    Json j(std::cout);
    j.begin_object().field("version", sinew::version).key("devices").begin_array();
    for (const auto& d : infos) print_device_json(j, d);
    j.end_array().end_object();
    return 0;
  }

  std::vector<std::vector<std::string>> summary = {{"id", "kind", "CUs", "memory", "name"}};
  for (const auto& d : infos)
    summary.push_back({d.id(), sinew::to_string(d.kind), std::to_string(d.compute_units), gib(d.global_memory), d.name});
  std::cout << infos.size() << (infos.size() == 1 ? " device" : " devices") << ":\n";
  print_table(std::cout, summary, "  ");
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
  std::string devices;
  std::size_t n = std::size_t(1) << 20;
  po::options_description options("sinew smoke [options]: runs y = 2x + y on each device alone and checks it");
  options.add_options()("elements,n", po::value(&n)->default_value(n), "vector length (a multiple of 1024)");
  add_devices_option(options, devices);
  auto p = parse(args, options);
  if (p.help) {
    std::cout << options;
    return 0;
  }
  if (n == 0 || n % 1024 != 0) throw po::error("--elements must be a positive multiple of 1024");

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
      auto report = rt.run(tree, {{x, hx}, {y, hy}}, sinew::RunOptions{.device = i, .config = {}}).get();
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
// The command table and dispatch.

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Args& args);
};

constexpr Command kCommands[] = {
    {"devices", "list the OpenCL devices, their fission configurations and overlap levels", cmd_devices},
    {"smoke", "run a small kernel on every device alone and check the result", cmd_smoke},
};

void usage(std::ostream& out) {
  out << "usage: sinew [--help | --version] <command> [options]\n\ncommands:\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : kCommands) rows.push_back({std::string(c.name), std::string(c.summary)});
  print_table(out, rows, "  ");
  out << "\n'sinew <command> --help' describes a command's options.\n"
         "SINEW_DEVICES selects devices (all, cpu, gpu, gpu:0,cpu, cpu:1).\n";
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
