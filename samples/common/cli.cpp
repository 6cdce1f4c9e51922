// samples/common/cli.cpp — the benchmark sample programs' shared command line and main loop.
#include "common/cli.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace sinew::samples::cli {
namespace {

[[noreturn]] void usage_error(const std::string& program, const std::string& message) {
  std::cerr << program << ": " << message << " (see --help)\n";
  std::exit(2);
}

std::size_t parse_size(const std::string& program, const std::string& flag, const std::string& text) {
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    usage_error(program, "--" + flag + " expects a non-negative integer, not '" + text + "'");
  return v;
}

double parse_double(const std::string& program, const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  usage_error(program, "--" + flag + " expects a number, not '" + text + "'");
}

void print_usage(const std::string& program, const Sample& s, const std::vector<Flag>& extra) {
  const Sizes z = s.sizes();
  std::cout << "usage: " << program << " [options]\n"
            << s.description() << ".\n\n"
            << "  --size S          problem size in " << s.size_unit() << " (default " << z.standard << "; small "
            << z.small << ", large " << z.large << ")\n"
            << "  --device D        device index or id (cpu:0, gpu:1) to run on alone; 'all' lets the runtime\n"
            << "                    plan over every device (knowledge base / training). Default: the runtime's\n"
            << "                    default device (the first GPU, else the first device)\n"
            << "  --shares a,b,...  run with this plan: one share per runtime device (overrides --device)\n"
            << "  --fission NAME    CPU fission of the plan given with --shares (default none)\n"
            << "  --overlap N       GPU queues of the plan given with --shares (default 1)\n"
            << "  --repeat N        runs to time (default 1)\n"
            << "  --dump            print the skeleton tree\n"
            << "  --no-check        skip the comparison with the C++ reference\n"
            << "  --pinned          keep the host data in pinned memory (Runtime::pinned), where the\n"
            << "                    sample supports it\n"
            << "  --profile         profile the device queues: the report lists each partition's and\n"
            << "                    kernel's device times (RunOptions::profile; costs a little time)\n";
  for (const auto& f : extra) {
    std::string left = "--" + f.name + (f.is_switch ? "" : " V");
    std::cout << "  " << left << std::string(left.size() < 18 ? 18 - left.size() : 1, ' ') << f.help;
    if (!f.is_switch && !f.default_value.empty()) std::cout << " (default " << f.default_value << ")";
    std::cout << "\n";
  }
}

}  // namespace

std::string Options::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

std::size_t Options::get_size(const std::string& name, std::size_t fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : parse_size("sample", name, it->second);
}

double Options::get_double(const std::string& name, double fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : parse_double("sample", name, it->second);
}

Options parse(int argc, char** argv, const Sample& sample, const std::vector<Flag>& extra) {
  const std::string program = argc > 0 ? argv[0] : sample.name();
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_usage(program, sample, extra);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) usage_error(program, "unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) usage_error(program, "--" + name + " needs a value");
      return argv[++i];
    };
    if (name == "dump") {
      o.dump = true;
    } else if (name == "no-check") {
      o.check = false;
    } else if (name == "pinned") {
      o.pinned = true;
    } else if (name == "profile") {
      o.profile = true;
    } else if (name == "size") {
      o.size = take();  // the sample reads it (Sample::prepare(string)), so shaped sizes pass too
    } else if (name == "device") {
      o.device = take();
    } else if (name == "repeat") {
      o.repeat = std::max<std::size_t>(1, parse_size(program, name, take()));
    } else if (name == "shares") {
      std::stringstream ss(take());
      for (std::string part; std::getline(ss, part, ',');) o.shares.push_back(parse_double(program, name, part));
    } else if (name == "fission") {
      o.fission = take();
    } else if (name == "overlap") {
      o.overlap = static_cast<unsigned>(parse_size(program, name, take()));
    } else {
      auto f = std::find_if(extra.begin(), extra.end(), [&](const Flag& x) { return x.name == name; });
      if (f == extra.end()) usage_error(program, "unknown flag '--" + name + "'");
      o.values[name] = f->is_switch ? "1" : take();
    }
  }
  return o;
}

int run(Sample& sample, const Options& opts) {
  try {
    sinew::Runtime rt;
    if (opts.pinned && !sample.use_pinned_memory(rt)) {
      std::cerr << sample.name() << " does not support --pinned\n";
      return 2;
    }
    try {
      sample.prepare(opts.size);
    } catch (const std::invalid_argument& e) {
      std::cerr << "--size " << opts.size << ": " << e.what() << "\n";
      return 2;
    }
    if (opts.dump) std::cout << sample.tree().dump();

    const auto& devices = rt.devices();
    RunOptions ro;
    if (opts.profile) ro.profile = true;  // else as $SINEW_PROFILE says
    std::string where;
    if (!opts.shares.empty()) {
      if (opts.shares.size() != devices.size()) {
        std::cerr << "--shares gives " << opts.shares.size() << " shares but the runtime has " << devices.size()
                  << " devices\n";
        return 2;
      }
      ro.config = Config{opts.shares, opts.fission, opts.overlap};
      where = "plan " + ro.config->str();
    } else if (opts.device == "all") {
      where = "all devices (plan chosen by the runtime)";
    } else {
      std::size_t index = rt.default_device();
      if (!opts.device.empty()) {
        if (std::all_of(opts.device.begin(), opts.device.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          index = std::stoul(opts.device);
          if (index >= devices.size()) {
            std::cerr << "--device " << index << ": the runtime has " << devices.size() << " device(s), 0 to "
                    << devices.size() - 1 << "\n";
            return 2;
          }
        } else {
          auto chosen = sinew::select_devices(devices, opts.device);
          if (chosen.size() != 1) {
            std::cerr << "--device '" << opts.device << "' names " << chosen.size()
                      << " devices; name one, or use --shares for a plan over several\n";
            return 2;
          }
          index = chosen.front();
        }
      }
      ro.device = index;
      where = "device " + std::to_string(index) + " (" + devices[index].id() + ": " + devices[index].name + ")";
    }

    std::cout << sample.name() << ": " << sample.description() << "\n"
              << "size " << sample.size_text() << " (" << sample.size_unit() << "), on " << where << "\n";

    Report last;
    double best = 0, total = 0;
    for (std::size_t r = 0; r < opts.repeat; ++r) {
      last = sample.run(rt, ro);
      best = r == 0 ? last.wall_ms : std::min(best, last.wall_ms);
      total += last.wall_ms;
    }
    const double mean = total / static_cast<double>(opts.repeat);
    std::printf("time: %.3f ms", best);
    if (opts.repeat > 1) std::printf(" best, %.3f ms mean of %zu runs", mean, opts.repeat);
    if (best > 0) std::printf(" (%.2f GB/s of data)", static_cast<double>(sample.bytes()) / (best * 1e6));
    std::printf("\n");
    std::cout << last.str();
    if (!last.str().empty() && last.str().back() != '\n') std::cout << "\n";

    if (!opts.check) {
      std::cout << "result: not checked\n";
      return 0;
    }
    const Check c = sample.check();
    if (c.ok) {
      std::cout << "result: OK (max error " << c.max_error << ", tolerance " << c.tolerance << ": " << c.measure
                << ")\n";
      return 0;
    }
    std::cout << "result: MISMATCH " << c.message << " (max error " << c.max_error << ", tolerance " << c.tolerance
              << ": " << c.measure << ")\n";
    return 1;
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";  // what() carries the node, the fix and any build log
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace sinew::samples::cli
