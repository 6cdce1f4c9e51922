// bench/common/harness.hpp — the one driver every benchmark program is built on: the command
// line (Boost.Program_options), the timer, the CSV log, the table writer, the plotter, and the
// Bench object that ties them to the output contract.
//
// A program is a Descriptor (name, title, its own options, defaults) plus Jobs: what to reset
// (untimed), what to time and how to check it. The driver warms each job up, repeats it,
// summarises the runs (median, min, max, interquartile range), appends the result to the CSV as
// soon as it is measured, skips what a --resume'd CSV already holds, stops between measurements
// once --max-seconds have passed, and writes the Markdown section at the end.
//
// Output contract (scripts/bench relies on it): `--out DIR` (created; default
// bench-results/<UTC date-time>) receives DIR/<program>.csv (one header row, rows appended and
// flushed as measured), DIR/<program>.md (a section starting with "## ") and plots as
// DIR/<program>*.svg (written by the program itself, tools/svg.hpp; bench_balance also writes a
// gnuplot script and, where gnuplot is, its PNG). Progress goes to stderr, the
// Markdown to stdout. Exit status: 0 done, 1 done but some measurement failed, 2 bad usage or a
// fatal error, 3 stopped by --max-seconds (run again with --resume where the program has it).
#pragma once

#include <sinew/sinew.hpp>

#include <boost/program_options.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace bench {

namespace fs = std::filesystem;
namespace po = boost::program_options;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr int kExitStopped = 3;

// ----- numbers as text -----------------------------------------------------------------------

std::string num(double v);                             // for CSV: "%.6g", "" for NaN
double to_num(const std::string& s);                   // NaN for "" or garbage
std::string fmt(const char* f, double v);              // printf-style, "-" for NaN
std::string pct(double share);                         // 0.355 -> "35.5%"
std::string count_label(std::size_t n);                // 10000000 -> "10M", 65536 -> "65536"
std::vector<std::string> words(const std::string& s);  // "a b  c" -> {"a", "b", "c"}: column lists

// List-valued options ("10M,50M", "0,0.1,1", "a,b"), read by Program_options through validate().
struct Counts {  // K, M, G: powers of 1000; Ki, Mi: of 1024
  std::vector<std::size_t> v;
};
struct Shares {  // each in [0, 1]
  std::vector<double> v;
};
struct Names {
  std::vector<std::string> v;
};
void validate(boost::any& out, const std::vector<std::string>& values, Counts*, int);
void validate(boost::any& out, const std::vector<std::string>& values, Shares*, int);
void validate(boost::any& out, const std::vector<std::string>& values, Names*, int);

// ----- the one timer -------------------------------------------------------------------------

struct Stats {
  double median_ms = kNaN, min_ms = kNaN, max_ms = kNaN, iqr_ms = kNaN;
  double inner_ms = kNaN;  // median of what the job's runs returned (Sinew: Report::wall_ms)
  unsigned runs = 0;       // timed runs behind the median (0: only the warm-up counted, see give_up_ms)
  std::string check = "OK";
  bool ok() const { return check == "OK"; }
};
// NaN when empty (the library's, schedule/model/statistics.hpp).
double median(std::vector<double> v);
// Linear interpolation between the nearest ranks (numpy's default); NaN when empty.
double quantile(std::vector<double> v, double q);
Stats summarize(const std::vector<double>& ms);

// One thing to time. Set-up is done before the Job is made (it is never timed).
struct Job {
  std::function<void()> reset;         // untimed, before every run (restores the inputs)
  std::function<double()> run;         // timed; may return an inner time in ms (NaN: none)
  std::function<std::string()> check;  // "OK" or what is wrong; after the warm-up and the last run
};

struct Timing {
  unsigned warmup = 1, repeat = 5;  // at least one warm-up run is always made
  double budget_ms = 0;             // > 0: fewer timed runs (at least 1) when the warm-up says repeat would take longer
  double give_up_ms = 0;  // > 0: when the warm-up and one more run both take longer, record the faster (runs 0)
};

// Runs `job` as `t` says; an exception or a failed check ends it with Stats::check saying why.
Stats measure(const Job& job, const Timing& t);

// Head to head: per round one run of `a` then one of `b`, each after an untimed run of its own, so
// that whatever the machine does meanwhile hits both alike. `each` sees every round's times.
struct Rounds {
  std::vector<double> a_ms, b_ms;
  std::string check = "OK";
  double ratio() const;  // median over the rounds of a/b
};
Rounds head_to_head(const Job& a, const Job& b, unsigned rounds,
                    const std::function<void(unsigned round, double a_ms, double b_ms)>& each = {});
// Several jobs in turn: one untimed round of all of them, then per round one timed run of each,
// each checked. Each timed round runs them in its own order (a shuffle seeded by the round's
// number: the same rounds every time), so that no job always runs right after the same one (a job
// that leaves the machine busy, a CPU device's threads spinning down or its data in the caches,
// would otherwise tax one neighbour in every round). For jobs whose runs take seconds (no untimed
// run before each, unlike head_to_head). ms[j][round] in job order; check names the first
// failure, which ends the rounds.
struct Interleaved {
  std::vector<std::vector<double>> ms;
  std::string check = "OK";
};
Interleaved interleave(const std::vector<Job>& jobs, unsigned rounds,
                       const std::function<void(unsigned round, const std::vector<double>& ms)>& each = {});
// Per round a[i] / b[i], summarised: median, min, max, IQR (NaN when empty).
Stats ratios(const std::vector<double>& a, const std::vector<double>& b);

// ----- CSV -----------------------------------------------------------------------------------

// Rows appended and flushed one at a time, so that a killed run keeps what it measured. With
// `resume` an existing file with the same header is kept and its rows loaded (a row cut short
// by a kill is dropped); otherwise the file is started afresh.
class Csv {
 public:
  using Row = std::map<std::string, std::string>;
  Csv(fs::path path, std::vector<std::string> columns, bool resume = false);
  void append(const Row& row);  // unknown columns are a programming error (throws)
  const std::vector<Row>& rows() const { return rows_; }
  std::size_t resumed() const { return resumed_; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  std::vector<std::string> columns_;
  std::vector<Row> rows_;
  std::size_t resumed_ = 0;
};
std::string get(const Csv::Row& r, const std::string& column);  // "" when missing
// Every row of a CSV a program wrote (bench_plot reads them); throws when the file cannot be read.
std::vector<Csv::Row> read_csv(const fs::path& path);
// A row from alternating columns and values, added to `base`: kv({"kind", "run", "n", "3"}).
Csv::Row kv(std::initializer_list<std::string> flat, Csv::Row base = {});

// ----- tables and plots ----------------------------------------------------------------------

class Table {  // Markdown
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Writes `script` to DIR/<name>.gp and runs gnuplot there. Returns "" when the plot was drawn,
// else a line saying why not (the script stays, to be run where gnuplot is).
std::string gnuplot(const fs::path& dir, const std::string& name, const std::string& script);
// A clustered bar chart (one cluster per category, one bar per series; NaN: no bar) written as
// SVG to `path` (tools/svg.hpp). Returns "" or a line saying why it could not.
std::string plot_bars(const fs::path& path, const std::string& title, const std::string& ylabel,
                      const std::vector<std::string>& categories, const std::vector<std::string>& series,
                      const std::vector<std::vector<double>>& values, double reference_line = 0);

// ----- the driver ----------------------------------------------------------------------------

// The CSV columns of a measurement; programs add their own after these.
std::vector<std::string> measurement_columns();

struct Descriptor {
  std::string name;     // "bench_saxpy": the CSV, the Markdown and the plots are named after it
  std::string title;    // the Markdown section's heading
  std::string summary;  // --help: what the program answers
  unsigned repeat = 5, quick_repeat = 2;
  bool resumable = false;  // offers --resume (then scripts/bench resumes it)
  std::vector<std::string> columns = measurement_columns();
};

class Bench {
 public:
  // Parses the command line: the options every program takes plus `own`. --help prints both and
  // exits 0; a bad flag or value exits 2 naming it. With --lenient (scripts/bench, which passes
  // one set of flags to every program) flags that are not this program's are ignored with a note.
  Bench(Descriptor d, int argc, char** argv, const po::options_description& own = po::options_description());

  const Descriptor d;
  po::variables_map vm;
  std::string command;  // as typed
  fs::path out;
  bool quick = false, resume = false, verbose = false, zero_copy_stand_in = false, lenient = false;
  unsigned repeat = 5, warmup = 1;
  double max_seconds = 0, point_seconds = 10;

  bool given(const char* option) const { return vm.count(option) && !vm[option].defaulted(); }
  // An option's value; with --quick, `quick_value` unless the option was given.
  template <class T>
  T option(const char* name, T quick_value) const {
    return quick && !given(name) ? quick_value : vm[name].as<T>();
  }
  [[noreturn]] void fail(const std::string& option, const std::string& message) const;

  fs::path file(const std::string& suffix) const { return out / (d.name + suffix); }
  Timing timing() const { return {warmup, repeat, point_seconds * 1000, 0}; }

  // DIR/<program>.csv, opened on first use with `columns` (default: the descriptor's).
  Csv& csv(const std::vector<std::string>& columns = {});
  // The row whose fields include all of `key`'s, or null.
  const Csv::Row* find(const Csv::Row& key);
  // Appends key + fields unless `key` is there already; returns the stored row.
  const Csv::Row& record(const Csv::Row& key, Csv::Row fields);
  // Measures `job` and records it (the Stats, and what `fields` adds from them), unless the CSV
  // holds `key` already (resumed): then that row is returned unmeasured. Progress on stderr.
  const Csv::Row& measure(const Csv::Row& key, const Job& job, const Timing& t,
                          const std::function<void(Csv::Row&, const Stats&)>& fields = {});
  static void put(Csv::Row& row, const Stats& s);
  static Stats stats(const Csv::Row& row);

  // --max-seconds: checked between measurements; says once that the program stops.
  bool stop();
  bool stopped() const { return stopped_; }
  double seconds() const;
  void progress(const std::string& line) const;  // "  [ 12.3 s] line" on stderr

  // "## <name>: <title>", the command, when it finished, the runtime's devices.
  std::string header(const sinew::Runtime* rt) const;
  // Writes the Markdown to DIR/<program>.md and stdout; returns the exit status.
  int finish(std::string markdown, bool failed);

 private:
  std::unique_ptr<Csv> csv_;
  bool stopped_ = false;
};

}  // namespace bench
