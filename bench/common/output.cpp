// bench/common/output.cpp — command line, output directory, CSV log, Markdown and gnuplot
// helpers of the benchmark suite (see output.hpp).
#include "output.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

namespace sinew_bench {

namespace fs = std::filesystem;

namespace {
const auto kStart = std::chrono::steady_clock::now();

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+%@") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

}  // namespace

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
}

namespace {
std::string utc(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, format, &tm);
  return b;
}
}  // namespace

std::string utc_now() { return utc("%Y-%m-%d %H:%M:%S UTC"); }

std::string utc_stamp() { return utc("%Y%m%d-%H%M%S"); }

bool Deadline::check(const std::string& program) const {
  if (!expired()) return false;
  if (!said_)
    std::cerr << program << ": --max-seconds " << seconds_ << " reached after " << std::lround(seconds_since_start())
              << " s: stopping here; run again with the same --out and --resume to go on\n";
  said_ = true;
  return true;
}

// ----- Cli -----------------------------------------------------------------------------------

Cli::Cli(std::string summary) : summary_(std::move(summary)) {}

void Cli::flag(const std::string& name, const std::string& help, std::function<void()> on) {
  entries_.push_back({name, "", help, std::move(on), nullptr, false});
}

void Cli::option(const std::string& name, const std::string& metavar, const std::string& help,
                 std::function<void(const std::string&)> on) {
  entries_.push_back({name, metavar, help, nullptr, std::move(on), false});
}

void Cli::section(const std::string& title) { entries_.push_back({title, "", "", nullptr, nullptr, true}); }

std::string Cli::usage() const {
  std::ostringstream os;
  os << "usage: " << program_ << " [flags]\n" << summary_;
  if (!summary_.empty() && summary_.back() != '\n') os << "\n";
  for (const auto& e : entries_) {
    if (e.heading) {
      os << "\n" << e.name << ":\n";
      continue;
    }
    std::string left = "  " + e.name + (e.metavar.empty() ? "" : " " + e.metavar);
    // Help text wrapped under the flag when the flag is long.
    std::istringstream lines(e.help);
    std::string line;
    bool first = true;
    while (std::getline(lines, line)) {
      if (first && left.size() < 24) os << left << std::string(24 - left.size(), ' ') << line << "\n";
      else if (first) os << left << "\n" << std::string(24, ' ') << line << "\n";
      else os << std::string(24, ' ') << line << "\n";
      first = false;
    }
    if (first) os << left << "\n";
  }
  os << "  --help                this text\n";
  return os.str();
}

void Cli::fail(const std::string& flag, const std::string& message) const {
  std::cerr << program_ << ": " << (flag.empty() ? "" : flag + ": ") << message << "\n(" << program_
            << " --help lists every flag)\n";
  std::exit(2);
}

void Cli::parse(int argc, char** argv) {
  program_ = fs::path(argv[0]).filename().string();
  command_.clear();
  for (int i = 0; i < argc; ++i) {
    if (i) command_ += ' ';
    command_ += shell_quote(argv[i]);
  }
  const char* lenient_env = std::getenv("SINEW_BENCH_LENIENT");
  const bool lenient = lenient_env && std::string(lenient_env) == "1";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    if (a == "--help" || a == "-h") {
      std::cout << usage();
      std::exit(0);
    }
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return !e.heading && e.name == a; });
    if (it == entries_.end()) {
      if (!lenient) fail("", "unknown flag '" + a + "'");
      std::string skipped = a;
      if (!has_value && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) skipped += " " + std::string(argv[++i]);
      std::cerr << program_ << ": note: '" << skipped << "' is not a flag of this program; ignored\n";
      continue;
    }
    if (it->on_flag) {
      if (has_value) fail(a, "takes no value");
      it->on_flag();
    } else {
      if (!has_value) {
        if (i + 1 >= argc) fail(a, "needs a value (" + it->metavar + ")");
        value = argv[++i];
      }
      it->on_value(value);
    }
  }
}

unsigned Cli::to_unsigned(const std::string& flag, const std::string& v) const {
  try {
    std::size_t pos = 0;
    const long x = std::stol(v, &pos);
    if (pos == v.size() && x >= 0 && x <= std::numeric_limits<unsigned>::max()) return static_cast<unsigned>(x);
  } catch (const std::exception&) {
  }
  fail(flag, "not a whole number: '" + v + "'");
}

double Cli::to_double(const std::string& flag, const std::string& v, double lo, double hi) const {
  try {
    std::size_t pos = 0;
    const double x = std::stod(v, &pos);
    if (pos == v.size() && x >= lo && x <= hi) return x;
  } catch (const std::exception&) {
  }
  fail(flag, "'" + v + "' is not a number in [" + fmt("%g", lo) + ", " + fmt("%g", hi) + "]");
}

std::vector<std::size_t> Cli::to_counts(const std::string& flag, const std::string& v) const {
  std::vector<std::size_t> out;
  for (const auto& item : split_list(v)) {
    std::size_t pos = 0;
    double x = 0;
    try {
      x = std::stod(item, &pos);
    } catch (const std::exception&) {
      fail(flag, "bad count '" + item + "' (use e.g. 4096, 64K, 10M)");
    }
    const std::string suffix = item.substr(pos);
    double mult = 1;
    if (suffix == "K" || suffix == "k") mult = 1e3;
    else if (suffix == "M" || suffix == "m") mult = 1e6;
    else if (suffix == "G" || suffix == "g") mult = 1e9;
    else if (suffix == "Ki") mult = 1024;
    else if (suffix == "Mi") mult = 1024.0 * 1024;
    else if (!suffix.empty()) fail(flag, "bad count '" + item + "' (use e.g. 4096, 64K, 10M, 8Mi)");
    if (!(x > 0)) fail(flag, "counts are positive, not '" + item + "'");
    out.push_back(static_cast<std::size_t>(std::llround(x * mult)));
  }
  if (out.empty()) fail(flag, "empty list");
  return out;
}

std::vector<unsigned> Cli::to_unsigneds(const std::string& flag, const std::string& v) const {
  std::vector<unsigned> out;
  for (const auto& item : split_list(v)) out.push_back(to_unsigned(flag, item));
  if (out.empty()) fail(flag, "empty list");
  return out;
}

void add_common(Cli& cli, Common& c, unsigned default_repeat, bool resumable) {
  c.repeat = default_repeat;
  cli.section("Output and run control (every benchmark program)");
  cli.option("--out", "DIR",
             "write DIR/<program>.csv, .md and plots there (created when missing;\n"
             "default bench-results/<UTC date-time>)",
             [&c](const std::string& v) { c.out = v; });
  cli.flag("--quick", "tiny sizes and few runs: checks that everything runs (well under a\nminute on a 2-core PoCL machine)",
           [&c] { c.quick = true; });
  if (resumable)
    cli.flag("--resume", "keep DIR/<program>.csv and skip the measurements it already holds",
             [&c] { c.resume = true; });
  cli.option("--repeat", "N",
             "timed runs per measurement; the median is reported (default " + std::to_string(default_repeat) +
                 ")",
             [&c, &cli](const std::string& v) {
               c.repeat = std::max(1u, cli.to_unsigned("--repeat", v));
               c.repeat_set = true;
             });
  cli.option("--warmup", "N", "untimed runs first (default 1)", [&c, &cli](const std::string& v) {
    c.warmup = cli.to_unsigned("--warmup", v);
    c.warmup_set = true;
  });
  cli.option("--max-seconds", "S",
             "stop cleanly between measurements once S seconds have passed (exit\nstatus 3; --resume goes on)",
             [&c, &cli](const std::string& v) { c.max_seconds = cli.to_double("--max-seconds", v, 0, 1e9); });
  cli.option("--point-seconds", "S",
             "a measurement whose warm-up run is slow gets fewer timed runs, so that\n"
             "they take about S seconds (at least 1 run; default 10)",
             [&c, &cli](const std::string& v) { c.point_seconds = cli.to_double("--point-seconds", v, 0, 1e6); });
  cli.flag("--verbose", "more detail on stderr (each Sinew run's Report)", [&c] { c.verbose = true; });
}

void finish_common(const Cli& cli, Common& c, unsigned quick_repeat) {
  c.program = cli.program();
  c.command = cli.command();
  if (c.quick && !c.repeat_set) c.repeat = quick_repeat;
  if (c.out.empty()) c.out = fs::path("bench-results") / utc_stamp();
  std::error_code ec;
  fs::create_directories(c.out, ec);
  if (ec || !fs::is_directory(c.out)) cli.fail("--out", "cannot create directory " + c.out.string() + ": " + ec.message());
  if (c.resume && !fs::exists(c.csv()))
    std::cerr << c.program << ": note: --resume but " << c.csv().string() << " does not exist yet: starting afresh\n";
}

// ----- CSV -----------------------------------------------------------------------------------

std::string csv_escape(const std::string& s) {
  std::string t = s;
  std::replace(t.begin(), t.end(), '\n', ' ');
  std::replace(t.begin(), t.end(), '\r', ' ');
  if (t.find_first_of(",\"") == std::string::npos) return t;
  std::string q = "\"";
  for (char ch : t) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

std::string num(double v) {
  if (std::isnan(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

double to_num(const std::string& s) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

CsvLog::CsvLog(fs::path path, std::vector<std::string> columns, bool resume)
    : path_(std::move(path)), columns_(std::move(columns)) {
  std::string header;
  for (std::size_t i = 0; i < columns_.size(); ++i) header += (i ? "," : "") + columns_[i];
  if (resume && fs::exists(path_)) {
    std::ifstream in(path_);
    std::string line;
    if (!std::getline(in, line) || line != header)
      throw std::runtime_error(path_.string() +
                               " was written with other columns (another version of the program): start "
                               "a new --out directory, or run without --resume to start this one over");
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const auto f = csv_split(line);
      if (f.size() != columns_.size()) continue;  // a row cut short by a kill: measured again
      Row r;
      for (std::size_t i = 0; i < columns_.size(); ++i) r[columns_[i]] = f[i];
      rows_.push_back(std::move(r));
    }
    resumed_ = rows_.size();
    // Rewrite without a torn last line, so that appends start on a fresh line.
    std::ofstream out(path_, std::ios::trunc);
    out << header << "\n";
    for (const auto& r : rows_) {
      for (std::size_t i = 0; i < columns_.size(); ++i) out << (i ? "," : "") << csv_escape(r.at(columns_[i]));
      out << "\n";
    }
    if (!out) throw std::runtime_error("cannot write " + path_.string());
    return;
  }
  std::ofstream out(path_, std::ios::trunc);
  out << header << "\n";
  if (!out) throw std::runtime_error("cannot write " + path_.string());
}

void CsvLog::append(const Row& row) {
  Row full;
  for (const auto& c : columns_) {
    auto it = row.find(c);
    full[c] = it == row.end() ? "" : it->second;
    // One line per row: multi-line messages (OpenCL errors) are folded, in memory as on disk.
    std::replace(full[c].begin(), full[c].end(), '\n', ' ');
    std::replace(full[c].begin(), full[c].end(), '\r', ' ');
  }
  for (const auto& [k, v] : row)
    if (!full.count(k)) throw std::logic_error("CsvLog: unknown column '" + k + "'");
  std::ofstream out(path_, std::ios::app);
  for (std::size_t i = 0; i < columns_.size(); ++i) out << (i ? "," : "") << csv_escape(full[columns_[i]]);
  out << "\n";
  out.flush();
  if (!out) throw std::runtime_error("cannot append to " + path_.string());
  rows_.push_back(std::move(full));
}

// ----- Markdown ------------------------------------------------------------------------------

std::string MdTable::str() const {
  auto cell = [](std::string s) {
    std::string t;
    for (char ch : s) t += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return t;
  };
  std::ostringstream os;
  os << "|";
  for (const auto& h : header_) os << " " << cell(h) << " |";
  os << "\n|";
  for (std::size_t i = 0; i < header_.size(); ++i) os << "---|";
  os << "\n";
  for (const auto& r : rows_) {
    os << "|";
    for (std::size_t i = 0; i < header_.size(); ++i) os << " " << (i < r.size() ? cell(r[i]) : "") << " |";
    os << "\n";
  }
  return os.str();
}

std::string md_devices(const sinew::Runtime& rt) {
  MdTable t({"#", "id", "device", "platform", "driver", "CUs", "memory", "driven as"});
  for (const auto& d : rt.devices())
    t.add({std::to_string(d.index), d.id(), d.name, d.platform, d.driver_version, std::to_string(d.compute_units),
           fmt("%.1f GiB", static_cast<double>(d.global_memory) / (1u << 30)),
           d.discrete ? (d.kind == sinew::DeviceKind::cpu ? "discrete (a CPU standing in for a GPU)" : "discrete")
                      : "zero-copy"});
  return t.str();
}

std::string md_run_header(const Common& c, const sinew::Runtime* rt) {
  std::ostringstream os;
  os << "Command: `" << c.command << "`" << (c.quick ? " (--quick: the numbers only show that the code paths run)" : "")
     << "  \nFinished: " << utc_now() << ", after " << std::lround(seconds_since_start()) << " s"
     << (c.resume ? " (this invocation; resumed from an earlier one)" : "") << "\n\n";
  if (rt) {
    os << "Devices (Sinew " << SINEW_VERSION_STRING << "):\n\n" << md_devices(*rt) << "\n";
    bool stand_in = false;
    for (const auto& d : rt->devices()) stand_in = stand_in || (d.discrete && d.kind == sinew::DeviceKind::cpu);
    if (stand_in)
      os << "**No GPU:** a CPU device stands in for one (driven as discrete: explicit transfers, overlap "
            "queues). Its numbers only show that the GPU code paths run.\n\n";
  }
  return os.str();
}

void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

int finish_report(const Common& c, std::string md, bool stopped, bool failed) {
  if (stopped) md += "\n**Incomplete:** stopped by --max-seconds.\n";
  write_file(c.md(), md);
  std::cout << md;
  std::cerr << c.program << ": wrote " << c.csv().string() << " and " << c.md().string() << " ("
            << std::lround(seconds_since_start()) << " s)\n";
  if (stopped) return kExitStopped;
  return failed ? 1 : 0;
}

// ----- plots ---------------------------------------------------------------------------------

std::string plot_bars(const fs::path& png, const std::string& title, const std::string& ylabel,
                      const std::vector<std::string>& categories, const std::vector<std::string>& series,
                      const std::vector<std::vector<double>>& values, double reference_line) {
  std::error_code ec;
  fs::remove(png, ec);  // never leave the plot of an earlier run behind
  bool any = false;
  for (const auto& v : values)
    for (double x : v) any = any || std::isfinite(x);
  if (categories.empty() || series.empty() || !any) return "no values to plot: no " + png.filename().string();
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot not found (apt-get install gnuplot-nox): no " + png.filename().string();
  auto quote = [](const std::string& s) {
    std::string t;
    for (char ch : s) t += ch == '"' ? std::string("'") : std::string(1, ch);
    return "\"" + t + "\"";
  };
  const fs::path dat = png.string() + ".dat", gp = png.string() + ".gp";
  {
    std::ofstream d(dat, std::ios::trunc);
    d << "category";
    for (const auto& s : series) d << "\t" << quote(s);
    d << "\n";
    for (std::size_t i = 0; i < categories.size(); ++i) {
      d << quote(categories[i]);
      for (std::size_t j = 0; j < series.size(); ++j) {
        const double v = j < values.size() && i < values[j].size() ? values[j][i] : NAN;
        d << "\t" << (std::isnan(v) ? std::string("?") : num(v));
      }
      d << "\n";
    }
  }
  {
    std::ofstream g(gp, std::ios::trunc);
    const std::size_t width = std::max<std::size_t>(800, 60 * categories.size() * std::max<std::size_t>(1, series.size()) / 2 + 200);
    g << "# Written by the benchmark program: plots " << dat.filename().string() << "\n"
      << "set terminal pngcairo size " << width << ",520 noenhanced font \"sans,10\"\n"
      << "set output " << quote(png.string()) << "\n"
      << "set title " << quote(title) << "\n"
      << "set ylabel " << quote(ylabel) << "\n"
      << "set datafile missing \"?\"\n"
      << "set style data histograms\nset style histogram clustered gap 1\n"
      << "set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
      << "set key outside top center horizontal\nset grid ytics\nset yrange [0:*]\n"
      << "set xtics rotate by -35 left\n";
    if (reference_line > 0) g << "set arrow from graph 0, first " << reference_line << " to graph 1, first " << reference_line
                              << " nohead dashtype 2 lc rgb \"#555555\"\n";
    g << "plot ";
    for (std::size_t j = 0; j < series.size(); ++j)
      g << (j ? ", \\\n     " : "") << quote(dat.string()) << " using " << j + 2 << (j == 0 ? ":xtic(1)" : "")
        << " title columnhead(" << j + 2 << ")";
    g << "\n";
  }
  const std::string cmd = "gnuplot " + shell_quote(gp.string()) + " 2>" + shell_quote(png.string() + ".log");
  const int rc = std::system(cmd.c_str());
  if (rc != 0 || !fs::exists(png)) {
    std::string log;
    std::ifstream l(png.string() + ".log");
    std::getline(l, log);
    fs::remove(png, ec);
    return "gnuplot failed on " + gp.filename().string() + (log.empty() ? "" : ": " + log);
  }
  fs::remove(png.string() + ".log", ec);
  return "";
}

}  // namespace sinew_bench
