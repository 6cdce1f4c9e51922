// bench/common/output.hpp — the benchmark suite's output contract and command line, shared by
// every benchmark program.
//
// Contract (scripts/bench relies on it): a program takes `--out DIR` (created when missing) and
// writes DIR/<program>.csv (one header row, then one row per measurement, appended and flushed as
// it is measured so that a killed run keeps what it had), DIR/<program>.md (a Markdown section
// starting with "## ", with its tables, the devices and the command line) and any plots as
// DIR/<program>*.png. Progress goes to stderr. Exit status: 0 done, 1 done but some measurement
// failed, 2 bad usage or a fatal error, 3 stopped early by --max-seconds (run again with --resume).
#pragma once

#include <sinew/sinew.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sinew_bench {

// Exit status of a program stopped by --max-seconds: not complete, resumable.
constexpr int kExitStopped = 3;

// ----- command line --------------------------------------------------------------------------

// Flags registered with their help text; `--help` prints them. A bad flag or value ends the
// program with status 2 and a message naming the flag and the fix. With $SINEW_BENCH_LENIENT=1
// (set by scripts/bench, which passes one set of extra flags to every program) an unknown flag is
// ignored with a note instead, together with its value when the next argument is not a flag.
class Cli {
 public:
  explicit Cli(std::string summary);

  void flag(const std::string& name, const std::string& help, std::function<void()> on);
  void option(const std::string& name, const std::string& metavar, const std::string& help,
              std::function<void(const std::string&)> on);
  // A heading line in --help between groups of flags.
  void section(const std::string& title);

  void parse(int argc, char** argv);
  [[noreturn]] void fail(const std::string& flag, const std::string& message) const;
  std::string usage() const;
  const std::string& program() const { return program_; }
  // The command line as typed, shell-quoted where needed.
  const std::string& command() const { return command_; }

  // Value parsers that fail() naming the flag.
  unsigned to_unsigned(const std::string& flag, const std::string& v) const;
  double to_double(const std::string& flag, const std::string& v, double lo, double hi) const;
  std::vector<std::size_t> to_counts(const std::string& flag, const std::string& v) const;
  std::vector<unsigned> to_unsigneds(const std::string& flag, const std::string& v) const;

 private:
  struct Entry {
    std::string name, metavar, help;
    std::function<void()> on_flag;
    std::function<void(const std::string&)> on_value;
    bool heading = false;
  };
  std::string summary_, program_ = "bench", command_;
  std::vector<Entry> entries_;
};

// What every program of the suite takes.
struct Common {
  std::string program, command;
  std::filesystem::path out;     // --out DIR
  bool quick = false;            // --quick
  bool resume = false;           // --resume: keep DIR/<program>.csv and skip what it holds
  bool verbose = false;          // --verbose
  unsigned repeat = 5, warmup = 1;
  bool repeat_set = false, warmup_set = false;
  double max_seconds = 0;        // --max-seconds: 0 = no bound
  double point_seconds = 10;     // --point-seconds: budget of the timed runs of one measurement

  std::filesystem::path csv() const { return out / (program + ".csv"); }
  std::filesystem::path md() const { return out / (program + ".md"); }
  std::filesystem::path png(const std::string& suffix) const { return out / (program + suffix + ".png"); }
};
// Registers --out, --quick, --resume, --repeat, --warmup, --max-seconds, --point-seconds,
// --verbose. `resumable`: whether the program honours --resume (others reject it).
void add_common(Cli& cli, Common& c, unsigned default_repeat, bool resumable);
// After parse(): program name and command line, --quick's repeat, the output directory
// (default bench-results/<UTC date-time>) created.
void finish_common(const Cli& cli, Common& c, unsigned quick_repeat);

// ----- time ----------------------------------------------------------------------------------

// Seconds since the program started.
double seconds_since_start();
// "2026-11-22 14:03:07 UTC" and "20261122-140307" (for folder names).
std::string utc_now();
std::string utc_stamp();

// --max-seconds: checked between measurements, never inside one.
class Deadline {
 public:
  explicit Deadline(double seconds) : seconds_(seconds) {}
  bool expired() const { return seconds_ > 0 && seconds_since_start() >= seconds_; }
  // Says once on stderr that the program stops here; returns expired().
  bool check(const std::string& program) const;

 private:
  double seconds_;
  mutable bool said_ = false;
};

// ----- CSV -----------------------------------------------------------------------------------

// One CSV file, rows appended and flushed as they are measured. Fields are read back by column
// name. With `resume` an existing file is kept and its rows loaded (its header must be the same,
// else the constructor throws saying to use another --out); otherwise the file is started over.
class CsvLog {
 public:
  using Row = std::map<std::string, std::string>;
  CsvLog(std::filesystem::path path, std::vector<std::string> columns, bool resume);

  // Appends a row (columns not given stay empty) and flushes it to disk.
  void append(const Row& row);
  const std::vector<Row>& rows() const { return rows_; }
  const std::filesystem::path& path() const { return path_; }
  std::size_t resumed() const { return resumed_; }

 private:
  std::filesystem::path path_;
  std::vector<std::string> columns_;
  std::vector<Row> rows_;
  std::size_t resumed_ = 0;
};

// "a,b,,c" -> {"a", "b", "c"}: a comma-separated flag value, empty items dropped.
std::vector<std::string> split_list(const std::string& s);

std::string csv_escape(const std::string& s);
std::vector<std::string> csv_split(const std::string& line);
// "%.6g", "" for NaN.
std::string num(double v);
// Parses a CSV number; NaN for "".
double to_num(const std::string& s);
// printf-style formatting of one double; "-" for NaN.
std::string fmt(const char* f, double v);

// ----- Markdown ------------------------------------------------------------------------------

// A Markdown table built row by row.
class MdTable {
 public:
  explicit MdTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The command line and the devices of `rt` (id, name, platform, driver, compute units, discrete
// or not, stand-in notes) as Markdown lines, for the top of a program's section.
std::string md_run_header(const Common& c, const sinew::Runtime* rt);
// A table of the runtime's devices.
std::string md_devices(const sinew::Runtime& rt);
// Writes `text` to `path` (whole file, replaced atomically).
void write_file(const std::filesystem::path& path, const std::string& text);
// The end of a program that stops on --max-seconds: notes an incomplete run in `md`, writes it to
// c.md(), prints it, says what was written, and returns the exit status (kExitStopped, 1 when
// some measurement failed, else 0).
int finish_report(const Common& c, std::string md, bool stopped, bool failed);

// ----- plots ---------------------------------------------------------------------------------

// A clustered bar chart: one cluster per category (x axis), one bar per series. NaN values are
// drawn as missing bars. Writes the data and the gnuplot script next to the PNG
// (<png>.dat, <png>.gp) and runs gnuplot. Returns "" on success, else a note saying why there
// is no plot (gnuplot missing, gnuplot failed).
std::string plot_bars(const std::filesystem::path& png, const std::string& title, const std::string& ylabel,
                      const std::vector<std::string>& categories, const std::vector<std::string>& series,
                      const std::vector<std::vector<double>>& values, double reference_line = 0);

}  // namespace sinew_bench
