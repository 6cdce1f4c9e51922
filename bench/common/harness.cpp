// bench/common/harness.cpp — the benchmark driver (see harness.hpp).
#include "harness.hpp"

#include "schedule/model/statistics.hpp"
#include "svg.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace bench {

namespace {

const auto kStart = std::chrono::steady_clock::now();

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string utc(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, format, &tm);
  return b;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+%@") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::vector<std::string> items(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  std::stringstream ss(po::validators::get_single_string(values));
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw po::invalid_option_value("(an empty list)");
  return out;
}

std::string csv_escape(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"')
      out.back() += line[++i];
    else if (ch == '"')
      quoted = !quoted;
    else if (ch == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += ch;
  }
  return out;
}

}  // namespace

std::vector<Csv::Row> read_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::string line;
  if (!std::getline(in, line)) return {};
  const std::vector<std::string> header = csv_split(line);
  std::vector<Csv::Row> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = csv_split(line);
    Csv::Row row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// ----- numbers as text -----------------------------------------------------------------------

std::string num(double v) { return std::isnan(v) ? "" : fmt("%.6g", v); }

double to_num(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return s.empty() || *end ? kNaN : v;
}

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string pct(double share) { return std::isnan(share) ? "-" : fmt("%g%%", std::round(share * 1000) / 10); }

std::string count_label(std::size_t n) {
  return n >= 1000000 && n % 1000000 == 0 ? std::to_string(n / 1000000) + "M" : std::to_string(n);
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

void validate(boost::any& out, const std::vector<std::string>& values, Counts*, int) {
  Counts c;
  for (const auto& item : items(values)) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    const std::string suffix = end;
    const std::map<std::string, double> mult = {{"", 1},    {"K", 1e3},     {"k", 1e3},
                                                {"M", 1e6}, {"m", 1e6},     {"G", 1e9},
                                                {"g", 1e9}, {"Ki", 1024.0}, {"Mi", 1024.0 * 1024}};
    if (end == item.c_str() || !mult.count(suffix) || !(x > 0)) throw po::invalid_option_value(item);
    c.v.push_back(static_cast<std::size_t>(std::llround(x * mult.at(suffix))));
  }
  out = c;
}

void validate(boost::any& out, const std::vector<std::string>& values, Shares*, int) {
  Shares s;
  for (const auto& item : items(values)) {
    const double x = to_num(item);
    if (!(x >= 0 && x <= 1)) throw po::invalid_option_value(item);
    s.v.push_back(x);
  }
  out = s;
}

void validate(boost::any& out, const std::vector<std::string>& values, Names*, int) { out = Names{items(values)}; }

// ----- the one timer -------------------------------------------------------------------------

// The library's (schedule/model/statistics.hpp): one median for plans and for their measurements.
double median(std::vector<double> v) { return sinew::detail::median(std::move(v)); }

double quantile(std::vector<double> v, double q) { return sinew::detail::quantile(std::move(v), q); }

Stats summarize(const std::vector<double>& ms) {
  Stats s;
  if (ms.empty()) return s;
  s.median_ms = median(ms);
  s.min_ms = *std::min_element(ms.begin(), ms.end());
  s.max_ms = *std::max_element(ms.begin(), ms.end());
  s.iqr_ms = quantile(ms, 0.75) - quantile(ms, 0.25);
  s.runs = static_cast<unsigned>(ms.size());
  return s;
}

Stats measure(const Job& job, const Timing& t) {
  std::vector<double> wall, inner;
  auto once = [&] {
    if (job.reset) job.reset();
    const auto t0 = std::chrono::steady_clock::now();
    const double in = job.run();
    const double ms = ms_since(t0);
    return std::pair{ms, in};
  };
  auto checked = [&](const char* when) {
    const std::string c = job.check ? job.check() : "OK";
    return c == "OK" ? c : (c.rfind("ERROR", 0) == 0 ? c : "MISMATCH" + std::string(when) + ": " + c);
  };
  try {
    std::pair<double, double> warm{0, kNaN};
    for (unsigned i = 0; i < std::max(1u, t.warmup); ++i) warm = once();
    if (auto c = checked(" after warm-up"); c != "OK") return Stats{.check = c};
    unsigned repeat = std::max(1u, t.repeat);
    if (t.give_up_ms > 0 && warm.first > t.give_up_ms) {
      // A first run can be slow for reasons of its own (a new size's buffers): one more decides.
      const auto again = once();
      if (again.first < warm.first) warm = again;
      if (warm.first > t.give_up_ms) {
        Stats s = summarize({warm.first});
        s.runs = 0;
        s.inner_ms = warm.second;
        s.check = checked("");
        return s;
      }
    }
    if (t.budget_ms > 0 && warm.first * repeat > t.budget_ms)
      repeat = std::clamp(static_cast<unsigned>(t.budget_ms / std::max(warm.first, 1e-9)), 1u, repeat);
    for (unsigned i = 0; i < repeat; ++i) {
      const auto [ms, in] = once();
      wall.push_back(ms);
      if (!std::isnan(in)) inner.push_back(in);
    }
    Stats s = summarize(wall);
    s.inner_ms = median(inner);
    s.check = checked("");
    return s;
  } catch (const std::exception& e) {
    return Stats{.check = std::string("ERROR: ") + e.what()};
  }
}

double Rounds::ratio() const {
  std::vector<double> r;
  for (std::size_t i = 0; i < a_ms.size() && i < b_ms.size(); ++i) r.push_back(a_ms[i] / b_ms[i]);
  return median(r);
}

Rounds head_to_head(const Job& a, const Job& b, unsigned rounds,
                    const std::function<void(unsigned, double, double)>& each) {
  Rounds r;
  const Timing once{1, 1};
  for (unsigned i = 0; i <= rounds; ++i) {  // round 0 warms both sides up
    const Stats sa = measure(a, once), sb = measure(b, once);
    if (!sa.ok() || !sb.ok()) {
      r.check = !sa.ok() ? sa.check : sb.check;
      break;
    }
    if (i == 0) continue;
    r.a_ms.push_back(sa.median_ms);
    r.b_ms.push_back(sb.median_ms);
    if (each) each(i - 1, sa.median_ms, sb.median_ms);
  }
  return r;
}

Interleaved interleave(const std::vector<Job>& jobs, unsigned rounds,
                       const std::function<void(unsigned, const std::vector<double>&)>& each) {
  Interleaved r;
  r.ms.resize(jobs.size());
  // Round 0 (i == 0) warms every job up, checked and untimed.
  for (unsigned i = 0; i <= rounds; ++i) {
    std::vector<double> round(jobs.size());
    std::vector<std::size_t> order(jobs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (i > 0) std::shuffle(order.begin(), order.end(), std::mt19937(i));
    for (const std::size_t at : order) {
      const Job& j = jobs[at];
      try {
        if (j.reset) j.reset();
        const auto t0 = std::chrono::steady_clock::now();
        j.run();
        round[at] = ms_since(t0);
        if (const std::string c = j.check ? j.check() : "OK"; c != "OK")
          r.check = c.rfind("ERROR", 0) == 0 ? c : "MISMATCH: " + c;
      } catch (const std::exception& e) {
        r.check = std::string("ERROR: ") + e.what();
      }
      if (r.check != "OK") return r;
    }
    if (i == 0) continue;
    for (std::size_t k = 0; k < jobs.size(); ++k) r.ms[k].push_back(round[k]);
    if (each) each(i - 1, round);
  }
  return r;
}

Stats ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> q;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) q.push_back(a[i] / b[i]);
  return summarize(q);
}

// ----- CSV -----------------------------------------------------------------------------------

Csv::Csv(fs::path path, std::vector<std::string> columns, bool resume)
    : path_(std::move(path)), columns_(std::move(columns)) {
  std::string header;
  for (const auto& c : columns_) header += (header.empty() ? "" : ",") + c;
  if (resume && fs::exists(path_)) {
    std::ifstream in(path_);
    std::string line;
    if (!std::getline(in, line) || line != header)
      throw std::runtime_error(path_.string() +
                               " has other columns (another version of the program): use another --out, or run without "
                               "--resume to start it over");
    while (std::getline(in, line)) {
      const auto f = csv_split(line);
      if (f.size() != columns_.size()) continue;  // cut short by a kill: measured again
      Row r;
      for (std::size_t i = 0; i < f.size(); ++i) r[columns_[i]] = f[i];
      rows_.push_back(std::move(r));
    }
    resumed_ = rows_.size();
  }
  // (Re)written whole: without a torn last line, appends start on a fresh line.
  std::ofstream out(path_, std::ios::trunc);
  out << header << "\n";
  for (const auto& r : rows_) {
    for (std::size_t i = 0; i < columns_.size(); ++i) out << (i ? "," : "") << csv_escape(r.at(columns_[i]));
    out << "\n";
  }
  if (!out) throw std::runtime_error("cannot write " + path_.string());
}

void Csv::append(const Row& row) {
  for (const auto& [k, v] : row)
    if (std::find(columns_.begin(), columns_.end(), k) == columns_.end())
      throw std::logic_error("Csv: unknown column '" + k + "' in " + path_.string());
  Row full;
  std::ofstream out(path_, std::ios::app);
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    std::string v = get(row, columns_[i]);
    std::replace(v.begin(), v.end(), '\n', ' ');  // one line per row, in memory as on disk
    out << (i ? "," : "") << csv_escape(v);
    full[columns_[i]] = v;
  }
  out << "\n" << std::flush;
  if (!out) throw std::runtime_error("cannot append to " + path_.string());
  rows_.push_back(std::move(full));
}

std::string get(const Csv::Row& r, const std::string& column) {
  const auto it = r.find(column);
  return it == r.end() ? std::string() : it->second;
}

Csv::Row kv(std::initializer_list<std::string> flat, Csv::Row base) {
  for (auto it = flat.begin(); it != flat.end() && it + 1 != flat.end(); it += 2) base[*it] = *(it + 1);
  return base;
}

// ----- tables and plots ----------------------------------------------------------------------

std::string Table::str() const {
  auto line = [](const std::vector<std::string>& cells, std::size_t n) {
    std::string s = "|";
    for (std::size_t i = 0; i < n; ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      std::string cell = " ";
      for (char ch : c) cell += ch == '|' ? std::string("\\|") : std::string(1, ch);
      s += cell + " |";
    }
    return s + "\n";
  };
  std::string s = line(header_, header_.size()) + "|";
  for (std::size_t i = 0; i < header_.size(); ++i) s += "---|";
  s += "\n";
  for (const auto& r : rows_) s += line(r, header_.size());
  return s;
}

std::string gnuplot(const fs::path& dir, const std::string& name, const std::string& script) {
  const std::string gp = name + ".gp";
  std::ofstream(dir / gp, std::ios::trunc)
      << "# written by the benchmark program; run in this folder: gnuplot " << gp << "\n"
      << script;
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "no plot: gnuplot not found (apt-get install gnuplot-nox); `gnuplot " + gp + "` in " + dir.string() +
           " draws it";
  const std::string cmd =
      "cd " + shell_quote(dir.string()) + " && gnuplot " + shell_quote(gp) + " 2>" + shell_quote(name + ".log");
  std::error_code ec;
  if (std::system(cmd.c_str()) != 0 || !fs::exists(dir / name)) {
    std::string first;
    std::getline(std::ifstream(dir / (name + ".log")), first);
    return "no plot: gnuplot failed on " + gp + (first.empty() ? "" : ": " + first);
  }
  fs::remove(dir / (name + ".log"), ec);
  return "";
}

std::string plot_bars(const fs::path& path, const std::string& title, const std::string& ylabel,
                      const std::vector<std::string>& categories, const std::vector<std::string>& series,
                      const std::vector<std::vector<double>>& values, double reference_line) {
  sinew::plot::SvgBars chart;
  chart.title = title, chart.ylabel = ylabel, chart.categories = categories, chart.series = series;
  chart.values = values;
  if (reference_line > 0) chart.reference = reference_line;
  chart.width = std::max<int>(900, static_cast<int>(24 * categories.size() * std::max<std::size_t>(1, series.size())) + 200);
  return sinew::plot::write_svg(path, sinew::plot::svg(chart));
}

// ----- the driver ----------------------------------------------------------------------------

std::vector<std::string> measurement_columns() {
  return words("case size impl variant cpu_share overlap median_ms min_ms max_ms iqr_ms exec_ms runs note check");
}

Bench::Bench(Descriptor desc, int argc, char** argv, const po::options_description& own) : d(std::move(desc)) {
  for (int i = 0; i < argc; ++i) command.append(i ? " " : "").append(shell_quote(argv[i]));
  std::string out_dir;
  po::options_description common("Output and run control (every benchmark program)");
  common.add_options()("help,h", "this text")(
      "out", po::value(&out_dir)->value_name("DIR"),
      "write DIR/<program>.csv, .md and plots (created; default bench-results/<UTC date-time>)")(
      "quick", po::bool_switch(&quick), "tiny sizes, few runs: checks that everything runs")(
      "repeat", po::value(&repeat)->default_value(d.repeat)->value_name("N"),
      ("timed runs per measurement; the median is reported (--quick " + std::to_string(d.quick_repeat) + ")").c_str())(
      "warmup", po::value(&warmup)->default_value(1)->value_name("N"), "untimed runs first")(
      "max-seconds", po::value(&max_seconds)->default_value(0)->value_name("S"),
      "stop cleanly between measurements after S seconds (exit status 3; 0: no limit)")(
      "point-seconds", po::value(&point_seconds)->default_value(10)->value_name("S"),
      "a measurement whose warm-up is slow gets fewer timed runs: about S seconds' worth, at least 1")(
      "zero-copy-stand-in", po::bool_switch(&zero_copy_stand_in),
      "without a GPU, keep the second CPU device zero-copy (default: Sinew drives it as a discrete stand-in "
      "GPU)")("verbose", po::bool_switch(&verbose), "more detail on stderr (each Sinew run's Report)")(
      "lenient", po::bool_switch(&lenient),
      "ignore, with a note, flags that are not this program's (scripts/bench gives every program one set)");
  if (d.resumable)
    common.add_options()("resume", po::bool_switch(&resume), "keep DIR/<program>.csv and skip what it holds");
  po::options_description all;
  all.add(own).add(common);
  // --lenient is read before the others: it decides what an unknown flag is.
  for (int i = 1; i < argc; ++i) lenient = lenient || std::string(argv[i]) == "--lenient";
  try {
    auto parsed = po::command_line_parser(argc, argv).options(all).allow_unregistered().run();
    auto& opts = parsed.options;
    for (auto it = opts.begin(); it != opts.end();) {
      if (!it->unregistered && it->position_key < 0) {
        ++it;
        continue;
      }
      std::string text = it->original_tokens.empty() ? "" : it->original_tokens[0];
      for (it = opts.erase(it); it != opts.end() && it->position_key >= 0; it = opts.erase(it))
        text.append(" ").append(it->original_tokens.at(0));  // its value, unless it takes none
      if (!lenient) throw po::error("unknown argument '" + text + "'");
      std::cerr << d.name << ": note: '" << text << "' is not a flag of this program; ignored\n";
    }
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    fail("", e.what());
  }
  if (vm.count("help")) {
    std::cout << "usage: " << d.name << " [options]\n" << d.summary << "\n" << all;
    std::exit(0);
  }
  if (quick && !given("repeat")) repeat = d.quick_repeat;
  repeat = std::max(1u, repeat);
  out = out_dir.empty() ? fs::path("bench-results") / utc("%Y%m%d-%H%M%S") : fs::path(out_dir);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (!fs::is_directory(out)) fail("--out", "cannot create directory " + out.string() + ": " + ec.message());
}

void Bench::fail(const std::string& option, const std::string& message) const {
  std::cerr << d.name << ": " << (option.empty() ? "" : option + ": ") << message << "\n(" << d.name
            << " --help lists every option)\n";
  std::exit(2);
}

Csv& Bench::csv(const std::vector<std::string>& columns) {
  if (!csv_) {
    csv_ = std::make_unique<Csv>(file(".csv"), columns.empty() ? d.columns : columns, resume);
    if (csv_->resumed())
      std::cerr << d.name << ": resuming: " << csv_->resumed() << " row(s) in " << file(".csv").string() << "\n";
  }
  return *csv_;
}

const Csv::Row* Bench::find(const Csv::Row& key) {
  for (const auto& r : csv().rows())
    if (std::all_of(key.begin(), key.end(), [&](const auto& kv) { return get(r, kv.first) == kv.second; })) return &r;
  return nullptr;
}

const Csv::Row& Bench::record(const Csv::Row& key, Csv::Row fields) {
  if (const Csv::Row* r = find(key)) return *r;
  for (const auto& [k, v] : key) fields[k] = v;
  csv().append(fields);
  return csv().rows().back();
}

void Bench::put(Csv::Row& row, const Stats& s) {
  row["median_ms"] = num(s.median_ms);
  row["min_ms"] = num(s.min_ms);
  row["max_ms"] = num(s.max_ms);
  row["iqr_ms"] = num(s.iqr_ms);
  row["exec_ms"] = num(s.inner_ms);
  row["runs"] = std::to_string(s.runs);
  row["check"] = s.check;
}

Stats Bench::stats(const Csv::Row& row) {
  Stats s{to_num(get(row, "median_ms")),
          to_num(get(row, "min_ms")), to_num(get(row, "max_ms")), to_num(get(row, "iqr_ms")),
          to_num(get(row, "exec_ms")), 0, get(row, "check")};
  s.runs = static_cast<unsigned>(std::max(0.0, to_num(get(row, "runs"))));
  return s;
}

const Csv::Row& Bench::measure(const Csv::Row& key, const Job& job, const Timing& t,
                               const std::function<void(Csv::Row&, const Stats&)>& more) {
  if (const Csv::Row* r = find(key)) return *r;
  const Stats s = bench::measure(job, t);
  Csv::Row fields;
  put(fields, s);
  if (more) more(fields, s);
  std::string what;
  for (const char* k : {"case", "size", "impl", "variant", "strategy"})
    if (auto v = get(key, k); !v.empty()) what += v + " ";
  if (auto v = get(key, "cpu_share"); !v.empty()) what += "cpu " + pct(to_num(v)) + " ";
  if (auto v = get(key, "overlap"); !v.empty()) what += "ovl " + v + " ";
  progress(what + fmt("%.3f", s.median_ms) + " ms " + s.check);
  return record(key, std::move(fields));
}

bool Bench::stop() {
  if (stopped_ || max_seconds <= 0 || seconds() < max_seconds) return stopped_;
  std::cerr << d.name << ": --max-seconds " << max_seconds << " reached after " << std::lround(seconds())
            << " s: stopping here" << (d.resumable ? "; run again with the same --out and --resume to go on" : "")
            << "\n";
  return stopped_ = true;
}

double Bench::seconds() const { return ms_since(kStart) / 1000; }

void Bench::progress(const std::string& line) const {
  std::cerr << "  [" << fmt("%6.1f", seconds()) << " s] " << line << "\n";
}

std::string Bench::header(const sinew::Runtime* rt) const {
  std::ostringstream os;
  os << "## " << d.name << ": " << d.title << "\n\nCommand: `" << command << "`"
     << (quick ? " (--quick: the numbers only show that the code paths run)" : "")
     << "  \nFinished: " << utc("%Y-%m-%d %H:%M:%S UTC") << ", after " << std::lround(seconds()) << " s"
     << (resume ? " (this invocation; resumed from an earlier one)" : "") << "\n\n";
  if (!rt) return os.str();
  Table t({"#", "id", "device", "platform", "driver", "CUs", "memory", "driven as"});
  bool stand_in = false;
  for (const auto& dev : rt->devices()) {
    const bool cpu_discrete = dev.discrete && dev.kind == sinew::DeviceKind::cpu;
    stand_in = stand_in || cpu_discrete;
    t.add({std::to_string(dev.index), dev.id(), dev.name, dev.platform, dev.driver_version,
           std::to_string(dev.compute_units), fmt("%.1f GiB", static_cast<double>(dev.global_memory) / (1u << 30)),
           cpu_discrete   ? "discrete (a CPU standing in for a GPU)"
           : dev.discrete ? "discrete"
                          : "zero-copy"});
  }
  os << "Devices (Sinew " << SINEW_VERSION_STRING << "):\n\n" << t.str() << "\n";
  if (stand_in)
    os << "**No GPU:** a CPU device stands in for one (driven as discrete: explicit transfers, overlap queues). Its "
          "numbers only show that the GPU code paths run.\n\n";
  return os.str();
}

int Bench::finish(std::string markdown, bool failed) {
  if (stopped_) markdown += "\n**Incomplete:** stopped by --max-seconds.\n";
  const fs::path md = file(".md"), tmp = md.string() + ".tmp";
  std::ofstream(tmp, std::ios::trunc) << markdown;
  fs::rename(tmp, md);
  std::cout << markdown << std::flush;
  std::cerr << d.name << ": wrote " << md.string() << (csv_ ? " and " + csv_->path().string() : "") << " ("
            << std::lround(seconds()) << " s)\n";
  return stopped_ ? kExitStopped : failed ? 1 : 0;
}

}  // namespace bench
