// samples/common/cli.cpp — the benchmark sample programs' shared command line and main loop.
#include "common/cli.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>

namespace sinew::samples::cli {
namespace {

[[noreturn]] void usage_error(const std::string& program, const std::string& message) {
  std::cerr << program << ": " << message << " (see --help)\n";
  std::exit(2);
}

// The most runs --repeat times.
constexpr std::uint64_t kMaxRepeat = 1000000;

// Runs `read` (a sinew::parse call or a Config check); its refusal is bad usage.
template <class Read>
auto checked(const std::string& program, Read&& read) {
  try {
    return read();
  } catch (const sinew::Error& e) {
    usage_error(program, e.message());  // one line: the flag, the text, what is accepted
  }
}

// Stand-ins for `n` runtime devices, for checking a plan before a Runtime is made (Config's
// checks of shares and overlap look at nothing but the number of devices).
std::vector<DeviceInfo> devices_for_checks(std::size_t n) {
  std::vector<DeviceInfo> devices(n);
  for (std::size_t i = 0; i < n; ++i) devices[i].index = i;
  return devices;
}

// --overlap N, read and range-checked by Config::parse (the one rule of overlap levels).
unsigned read_overlap(const std::string& program, const std::string& text) {
  // Digits only: Config::parse reads lists, so "2,cpu=1" or " 2" must not reach it as an overlap.
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  const std::string spec = "overlap=" + (digits ? text : std::string("?"));
  try {
    return Config::parse(spec, devices_for_checks(1)).overlap;
  } catch (const sinew::Error& e) {
    // "plan 'overlap=17': overlap is not a whole number from 1 to 16", told of the flag.
    std::string why = e.message();
    if (const std::string plan = "plan '" + spec + "': "; why.rfind(plan, 0) == 0) why.erase(0, plan.size());
    usage_error(program, "--overlap = '" + text + "' is refused: " + why);
  }
}

// --shares a,b,...: each a number in [0, 1] (every item, empty ones too), and together a plan
// Config accepts: adding up to 1.
std::vector<double> read_shares(const std::string& program, const std::string& text, unsigned overlap,
                                const std::string& flag = "--shares") {
  std::vector<double> shares;
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = text.find(',', from);
    const std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    shares.push_back(checked(program, [&] { return sinew::parse::number(item, flag, 0, 1); }));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  checked(program, [&] {
    Config c;
    c.shares = shares, c.fission = "none", c.overlap = overlap;
    c.check(devices_for_checks(shares.size()), flag + " = '" + text + "' is refused: plan");
    return 0;
  });
  return shares;
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
            << "  --shares a,b,...  run with this plan: one share per runtime device, each from 0 to 1, adding\n"
            << "                    up to 1 (overrides --device)\n"
            << "  --fission NAME    CPU fission of the plan given with --shares (default none)\n"
            << "  --overlap N       GPU queues of the plan given with --shares (default 1)\n"
            << "  --repeat N        runs to time, 1 to " << kMaxRepeat << " (default 1)\n"
            << "  --dump            print the skeleton tree\n"
            << "  --no-check        skip the comparison with the C++ reference\n"
            << "  --pinned          keep the host data in pinned memory (Runtime::pinned), where the\n"
            << "                    sample supports it\n"
            << "  --profile         profile the device queues: the report lists each partition's and\n"
            << "                    kernel's device times (RunOptions::profile; costs a little time)\n"
            << "  --mpi             run over every rank of the MPI job (mpirun -np 3 ... --mpi): the units are\n"
            << "                    split over the ranks, each runs its part as --device/--shares say on its own\n"
            << "                    devices; rank 0 prints and checks (needs Sinew built with SINEW_MPI)\n"
            << "  --rank-shares a,b,...  with --mpi: one share per rank, adding up to 1 (default: even, then as\n"
            << "                    measured)\n";
  for (const auto& f : extra) {
    std::string left = "--" + f.name + (f.is_switch ? "" : " V");
    std::cout << "  " << left << std::string(left.size() < 18 ? 18 - left.size() : 1, ' ') << f.help;
    if (!f.is_switch && !f.default_value.empty()) std::cout << " (default " << f.default_value << ")";
    std::cout << "\n";
  }
}

// The run's device or plan as the flags say (--shares, --device), on `rt`'s devices; "where" says
// it in words. Returns 0, or 2 after printing why the flags do not fit the runtime.
int choose_plan(const Options& opts, Runtime& rt, RunOptions& ro, std::string& where) {
  const auto& devices = rt.devices();
  if (opts.profile) ro.profile = true;  // else as $SINEW_PROFILE says
  if (!opts.shares.empty()) {
    if (opts.shares.size() != devices.size()) {
      std::cerr << "--shares gives " << opts.shares.size() << " shares but the runtime has " << devices.size()
                << " devices\n";
      return 2;
    }
    ro.config.emplace();
    ro.config->shares = opts.shares, ro.config->fission = opts.fission, ro.config->overlap = opts.overlap;
    where = "plan " + ro.config->str();
  } else if (opts.device == "all") {
    where = "all devices (plan chosen by the runtime)";
  } else {
    std::size_t index = rt.default_device();
    if (!opts.device.empty()) {
      if (std::all_of(opts.device.begin(), opts.device.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        index = sinew::parse::count(opts.device, "--device", 0, std::numeric_limits<std::size_t>::max());
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
  return 0;
}

// Compares the last run with the reference and prints the verdict; the exit code (0 OK, 1 mismatch).
int print_check(Sample& sample, const Options& opts) {
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
}

// "time: best (mean of n runs) (GB/s)".
void print_time(const Sample& sample, const Options& opts, double best, double total) {
  const double mean = total / static_cast<double>(opts.repeat);
  std::printf("time: %.3f ms", best);
  if (opts.repeat > 1) std::printf(" best, %.3f ms mean of %zu runs", mean, opts.repeat);
  if (best > 0) std::printf(" (%.2f GB/s of data)", static_cast<double>(sample.bytes()) / (best * 1e6));
  std::printf("\n");
}

#ifdef SINEW_HAS_MPI
// --mpi: the run over every rank of the MPI job (sinew::Cluster). Every rank prepares the sample
// (the same data: only the root's are read), picks its plan on its own devices and runs; a rank
// whose set-up fails makes every rank stop (Cluster::agree) rather than leave the others waiting.
// Rank 0 prints and checks; the other ranks print nothing and return 0, or 2 on an error.
int run_cluster(Sample& sample, const Options& opts) {
  const std::string program = opts.program.empty() ? sample.name() : opts.program;
  std::unique_ptr<Cluster> cluster;
  try {
    ClusterOptions co;
    co.rank_shares = opts.rank_shares;
    cluster = std::make_unique<Cluster>(std::move(co));
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  const bool root = cluster->is_root();
  try {
    std::string problem;
    RunOptions ro;
    std::string where;
    if (opts.pinned && !sample.use_pinned_memory(cluster->runtime())) problem = sample.name() + " does not support --pinned";
    if (problem.empty()) {
      try {
        sample.prepare(opts.size.value_or(""));
      } catch (const std::invalid_argument& e) {
        problem = (opts.size ? "--size = '" + *opts.size + "': " : "") + std::string(e.what());
      }
    }
    if (problem.empty() && choose_plan(opts, cluster->runtime(), ro, where))
      problem = "the flags do not fit this rank's devices";
    cluster->agree(problem, program + " set-up");
    if (root) {
      if (opts.dump) std::cout << sample.tree().dump();
      std::cout << sample.name() << ": " << sample.description() << "\n"
                << "size " << sample.size_text() << " (" << sample.size_unit() << "), over " << cluster->ranks()
                << " MPI ranks, rank 0 on " << where << "\n";
    }
    ClusterReport last;
    double best = 0, total = 0;
    for (std::size_t r = 0; r < opts.repeat; ++r) {
      last = cluster->run(sample.tree(), sample.bindings(), ro);
      best = r == 0 ? last.wall_ms : std::min(best, last.wall_ms);
      total += last.wall_ms;
    }
    if (!root) return 0;
    print_time(sample, opts, best, total);
    std::cout << last.str();
    if (last.shares.front().units == 0) {
      std::cout << "rank 0 ran no units\n";
    } else {
      const std::string own = last.local.str();
      std::cout << "rank 0's own run:\n" << own << (own.empty() || own.back() == '\n' ? "" : "\n");
    }
    return print_check(sample, opts);
  } catch (const std::exception& e) {
    if (root) std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
#endif

}  // namespace

std::string Options::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

std::uint64_t Options::get_count(const std::string& name, std::uint64_t fallback, std::uint64_t min,
                                 std::uint64_t max) const {
  auto it = values.find(name);
  if (it == values.end()) return fallback;
  return checked(program, [&] { return sinew::parse::count(it->second, "--" + name, min, max); });
}

std::uint64_t Options::get_power_of_two(const std::string& name, std::uint64_t fallback, std::uint64_t min,
                                        std::uint64_t max) const {
  const std::uint64_t v = get_count(name, fallback, min, max);
  if ((v & (v - 1)) != 0)
    usage_error(program, "--" + name + " = '" + values.at(name) + "' is not a power of two from " + std::to_string(min) +
                             " to " + std::to_string(max) + " (e.g. " + std::to_string(std::bit_floor(v)) + ")");
  return v;
}

double Options::get_number(const std::string& name, double fallback, double min, double max, bool min_open) const {
  auto it = values.find(name);
  if (it == values.end()) return fallback;
  return checked(program, [&] { return sinew::parse::number(it->second, "--" + name, min, max, min_open); });
}

std::map<std::string, double> parse_numbers(int argc, char** argv, const std::string& program,
                                            const std::string& about, const std::vector<Flag>& flags) {
  namespace po = boost::program_options;
  po::options_description described;
  described.add_options()("help,h", "")("unexpected", po::value<std::vector<std::string>>());
  for (const auto& f : flags) described.add_options()(f.name.c_str(), po::value<std::string>());
  po::positional_options_description words;  // no flag takes words: collected only to be refused
  words.add("unexpected", -1);
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  po::variables_map given;
  try {
    po::store(po::command_line_parser(argc, argv).options(described).positional(words).style(style).run(), given);
  } catch (const po::error& e) {
    usage_error(program, e.what());
  }
  if (given.count("help")) {
    std::cout << "usage: " << program << " [options]\n" << about << ".\n\n";
    for (const auto& f : flags)
      std::cout << "  --" << f.name << " N  " << f.help << " (default " << f.default_value << ")\n";
    std::exit(0);
  }
  if (given.count("unexpected"))
    usage_error(program, "unexpected argument '" + given["unexpected"].as<std::vector<std::string>>().front() + "'");
  std::map<std::string, double> values;
  for (const auto& f : flags)
    if (given.count(f.name))
      values[f.name] = checked(program, [&] {
        return sinew::parse::number(given[f.name].as<std::string>(), "--" + f.name, 0,
                                    std::numeric_limits<double>::max());
      });
  return values;
}

Options parse(int argc, char** argv, const Sample& sample, const std::vector<Flag>& extra) {
  namespace po = boost::program_options;
  const std::string program = argc > 0 ? argv[0] : sample.name();
  po::options_description flags;
  flags.add_options()("help,h", "")("size", po::value<std::string>())("device", po::value<std::string>())(
      "shares", po::value<std::string>())("fission", po::value<std::string>())("overlap", po::value<std::string>())(
      "repeat", po::value<std::string>())("dump", po::bool_switch())("no-check", po::bool_switch())(
      "pinned", po::bool_switch())("profile", po::bool_switch())("mpi", po::bool_switch())(
      "rank-shares", po::value<std::string>())("unexpected", po::value<std::vector<std::string>>());
  po::positional_options_description words;  // no flag takes words: collected only to be refused
  words.add("unexpected", -1);
  for (const auto& f : extra) {
    if (f.is_switch)
      flags.add_options()(f.name.c_str(), po::bool_switch());
    else
      flags.add_options()(f.name.c_str(), po::value<std::string>());
  }
  // No abbreviations: "--dev" is an unknown flag, not --device. A value on a switch ("--dump=no")
  // is refused by program_options itself, naming the switch.
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  po::variables_map given;
  try {
    po::store(po::command_line_parser(argc, argv).options(flags).positional(words).style(style).run(), given);
  } catch (const po::error& e) {
    usage_error(program, e.what());
  }
  if (given.count("help")) {
    print_usage(program, sample, extra);
    std::exit(0);
  }
  if (given.count("unexpected"))
    usage_error(program, "unexpected argument '" + given["unexpected"].as<std::vector<std::string>>().front() + "'");
  auto text = [&](const char* name) -> std::optional<std::string> {
    if (!given.count(name)) return std::nullopt;
    return given[name].as<std::string>();
  };
  auto on = [&](const std::string& name) { return given.count(name) && given[name].as<bool>(); };

  Options o;
  o.program = program;
  o.dump = on("dump");
  o.check = !on("no-check");
  o.pinned = on("pinned");
  o.profile = on("profile");
  o.mpi = on("mpi");
  o.size = text("size");  // the sample reads it (Sample::prepare(string)), so shaped sizes pass too; run() checks it
  if (auto device = text("device")) {
    o.device = *device;
    if (o.device.empty()) usage_error(program, "--device = '' is refused: give a device index, an id (cpu:0) or all");
    if (o.device.find_first_not_of("0123456789") == std::string::npos)  // an index: a whole number
      checked(program, [&] { return sinew::parse::count(o.device, "--device", 0, std::numeric_limits<std::size_t>::max()); });
  }
  if (auto repeat = text("repeat")) o.repeat = checked(program, [&] { return sinew::parse::count(*repeat, "--repeat", 1, kMaxRepeat); });
  if (auto fission = text("fission")) o.fission = *fission;
  if (auto overlap = text("overlap")) o.overlap = read_overlap(program, *overlap);
  for (const auto& f : extra) {
    if (f.is_switch && on(f.name)) o.values[f.name] = "1";
    if (!f.is_switch && given.count(f.name)) o.values[f.name] = given[f.name].as<std::string>();
  }
  if (auto shares = text("shares")) o.shares = read_shares(program, *shares, o.overlap);
  if (auto rank_shares = text("rank-shares")) {
    if (!o.mpi) usage_error(program, "--rank-shares needs --mpi");
    o.rank_shares = read_shares(program, *rank_shares, 1, "--rank-shares");
  }
  return o;
}

int run(Sample& sample, const Options& opts) {
  const std::string program = opts.program.empty() ? sample.name() : opts.program;
  try {
    // The size (and the parameters the program set) against the sample and this machine's
    // memory, before a Runtime is made or anything allocated.
    check_size_argument(sample, "--size", opts.size);
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << " (see --help)\n";
    return 2;
  }
  if (opts.mpi) {
#ifdef SINEW_HAS_MPI
    return run_cluster(sample, opts);
#else
    std::cerr << program << ": --mpi: this Sinew was built without MPI (configure with SINEW_MPI=ON)\n";
    return 2;
#endif
  }
  try {
    sinew::Runtime rt;
    if (opts.pinned && !sample.use_pinned_memory(rt)) {
      std::cerr << sample.name() << " does not support --pinned\n";
      return 2;
    }
    try {
      sample.prepare(opts.size.value_or(""));
    } catch (const std::invalid_argument& e) {
      std::cerr << program << ": " << (opts.size ? "--size = '" + *opts.size + "': " : "") << e.what() << "\n";
      return 2;
    }
    if (opts.dump) std::cout << sample.tree().dump();

    RunOptions ro;
    std::string where;
    if (const int bad = choose_plan(opts, rt, ro, where)) return bad;

    std::cout << sample.name() << ": " << sample.description() << "\n"
              << "size " << sample.size_text() << " (" << sample.size_unit() << "), on " << where << "\n";

    Report last;
    double best = 0, total = 0;
    for (std::size_t r = 0; r < opts.repeat; ++r) {
      last = sample.run(rt, ro);
      best = r == 0 ? last.wall_ms : std::min(best, last.wall_ms);
      total += last.wall_ms;
    }
    print_time(sample, opts, best, total);
    std::cout << last.str();
    if (!last.str().empty() && last.str().back() != '\n') std::cout << "\n";

    return print_check(sample, opts);
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";  // what() carries the node, the fix and any build log
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace sinew::samples::cli
