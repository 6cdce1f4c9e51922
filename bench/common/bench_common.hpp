// bench/common/bench_common.hpp — what the benchmark programs share: timing Sinew runs of a
// registered sample, the choice of Sinew's CPU and GPU devices, and (bench_saxpy and
// bench_pipeline) their flags and result tables, printed, in CSV and in Markdown.
#pragma once

#include "common/sample.hpp"
#include "handwritten/handwritten.hpp"
#include "output.hpp"

#include <sinew/sinew.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sinew_bench {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ----- flags ---------------------------------------------------------------------------------

struct Flags {
  std::string program;
  std::string command;                   // the command line, for the record
  bool quick = false;
  unsigned repeat = 7, warmup = 1;
  std::string out;                       // --out DIR: DIR/<program>.csv and .md (created)
  std::vector<unsigned> overlaps{1, 2, 4};  // Sinew GPU overlap levels tried GPU-only
  unsigned queues = 3;                   // hand-written GPU pipelines: in-order queues
  std::size_t chunk_bytes = 8u << 20;    // hand-written GPU pipelines: bytes per vector per chunk
  bool verbose = false;                  // print every Sinew run's Report
  bool sinew = true, handwritten = true; // --no-sinew / --no-handwritten
  bool zero_copy_stand_in = false;       // --zero-copy-stand-in: Sinew's stand-in GPU stays a CPU
  bool pinned_splits = true;             // --no-pinned-splits: skip the sweeps with the data pinned
  unsigned ab_rounds = 15;               // bench_saxpy --ab N: interleaved head-to-head rounds (0: off)
  bool ab_only = false;                  // bench_saxpy --ab-only: the head-to-head rounds alone
  // bench_saxpy
  std::vector<std::size_t> sizes;        // elements
  double step = 0.05;                    // split sweep step
  double pinned_step = 0.1;              // sweep step with the data pinned
  // bench_pipeline
  std::vector<std::size_t> sides, bodies;
  std::size_t nbody_steps = 0;           // 0: the sample's default
  std::vector<double> shares;            // CPU shares of the manual splits
  std::vector<double> pinned_shares;     // ... with the data pinned (default 0,0.02,0.05,0.1,0.3,0.5,1)
};

// Parses argv. `usage` is printed for --help (exit 0) and after an error (exit 2). Flags that
// belong to the other benchmark program are accepted and ignored with a note, so that
// scripts/bench can pass one set of flags to every program.
Flags parse_flags(int argc, char** argv, const std::string& usage, bool saxpy_program);
// The flags every program takes, for the usage texts.
extern const char* const kCommonFlagsHelp;

// "10M" -> 10000000, "64K" -> 64000, "4096" -> 4096 (K, M, G are powers of 1000).
std::size_t parse_count(const std::string& s);
// 10000000 -> "10M", 65536 -> "65536".
std::string count_label(std::size_t n);

// ----- measurements --------------------------------------------------------------------------

struct Measurement {
  double median_ms = kNaN, min_ms = kNaN, max_ms = kNaN;
  double iqr_ms = kNaN;          // interquartile range of the timed runs (q75 - q25): their noise
  double exec_median_ms = kNaN;  // Sinew only: median of Report::wall_ms (execution on the runtime's thread)
  unsigned runs = 0;             // timed runs behind the median
  std::string check = "OK";      // "OK", a mismatch or an error message
  bool ok() const { return check == "OK"; }
};

double median(std::vector<double> v);
// Median, min, max and IQR of timed runs (check "OK").
Measurement summarize(const std::vector<double>& runs_ms);
// Times `repeat` calls of `body` (steady_clock around each) after `warmup` untimed ones; `reset`,
// when given, runs untimed before each call. Exceptions propagate.
Measurement time_calls(const std::function<void()>& body, unsigned warmup, unsigned repeat,
                       const std::function<void()>& reset = {});
// How many timed runs fit a budget: `repeat`, fewer (at least 1) when `one_run_ms` times that
// exceeds `budget_ms` (0: no budget).
unsigned runs_within(unsigned repeat, double one_run_ms, double budget_ms);

// Sinew's devices for the benchmarks: the first CPU (non-discrete) device and the first discrete
// device (a GPU) of rt.devices(). Without a GPU a second CPU device stands in for it, as in the
// hand-written baselines.
struct SinewDevices {
  std::size_t cpu = 0, gpu = 0;
  bool has_cpu = false, has_gpu = false;
  bool gpu_stand_in = false;  // the "gpu" is a CPU device (driven as discrete when the runtime allows)
  bool gpu_discrete = false;  // the "gpu" is driven as a discrete device (overlap levels apply)
  bool two = false;           // distinct CPU and GPU devices: splits are possible
  std::string describe(const sinew::Runtime& rt) const;
};
SinewDevices pick_devices(const sinew::Runtime& rt);
// A Runtime for the benchmarks, with `options`. On a machine without a GPU whose runtime has two
// CPU devices, the second is driven as a discrete device (RuntimeOptions::discrete: explicit
// transfers and overlap queues, the GPU code path), unless $SINEW_DISCRETE or options.discrete
// says otherwise; `zero_copy_stand_in` keeps it a plain CPU device. Every runtime a program makes
// this way sees the same devices driven the same way (so that their knowledge bases agree).
std::unique_ptr<sinew::Runtime> make_runtime(bool zero_copy_stand_in, sinew::RuntimeOptions options = {});

// Run options: one device alone, or a manual plan with `cpu_share` on the CPU and the rest on
// the GPU, `overlap` queues on the GPU, no fission.
sinew::RunOptions on_device(std::size_t device);
sinew::RunOptions split(const sinew::Runtime& rt, const SinewDevices& d, double cpu_share, unsigned overlap);

// Pinned copies of a sample's bound arrays, for samples that cannot keep their data in pinned
// memory themselves (Sample::use_pinned_memory): every bound array is copied (untimed) into
// Runtime::pinned memory and bound from there — the user's data already lives in pinned memory —
// and the results are copied back (untimed) for the sample's check. The pinned blocks are kept
// between runs and between variants (one allocation per array and size).
class PinnedCopies {
 public:
  explicit PinnedCopies(sinew::Runtime& rt) : rt_(rt) {}
  // The sample's bindings redirected to pinned copies of their arrays.
  std::vector<sinew::Binding> wrap(std::vector<sinew::Binding> b);
  // The written arrays' pinned copies back into the sample's arrays.
  void restore() const;

 private:
  struct Back {
    void* to;
    const void* from;
    std::size_t bytes;
  };
  sinew::Runtime& rt_;
  std::vector<sinew::PinnedVector<unsigned char>> pinned_;  // one per binding
  std::vector<Back> back_;
};

// Times `repeat` runs of a prepared sample after `warmup` runs: steady_clock around
// rt.run(tree, bindings, options).get() (validation, decomposition, buffers, transfers, kernels,
// results back in host memory). bindings() — which restores the sample's input arrays — is
// called before the clock starts. Checks the output after the warm-up and the last run.
// Errors are caught and reported in Measurement::check. `last` receives the last run's Report.
// With `pinned`, the arrays are bound from its pinned copies (see PinnedCopies).
// `budget_ms` > 0: fewer timed runs when the last warm-up run says `repeat` of them would take
// longer (runs_within). `give_up_ms` > 0: when the last warm-up run and one more run both took
// longer than that, no timed run follows; the faster of the two is returned as the only run
// (Measurement::runs = 0), for sweeps that only need to know a point is far from the best.
Measurement time_sinew(sinew::Runtime& rt, sinew::samples::Sample& s, const sinew::RunOptions& options, unsigned warmup,
                       unsigned repeat, sinew::Report* last = nullptr, PinnedCopies* pinned = nullptr,
                       double budget_ms = 0, double give_up_ms = 0);

// ----- results -------------------------------------------------------------------------------

class Results;

// Sinew's variants of one prepared sample, each timed by time_sinew and added to `res`: "cpu" (the
// CPU device alone), "gpu" at each of f.overlaps (the GPU alone; overlap 1 through
// RunOptions::device, others through a Config), "gpu-pinned-user" (the GPU alone at its fastest
// overlap level with the data bound from Runtime::pinned memory), "split" at each CPU share
// with the GPU's fastest overlap level, and "split-pinned-user" at each of `pinned_shares` (the
// same plans, the data bound from Runtime::pinned memory). The pinned data: `pinned_sample`, a
// second instance of the sample prepared after use_pinned_memory(rt) (its own arrays are
// pinned), or, when null, pinned copies of `s`'s arrays (PinnedCopies, one set for both pinned
// variants). Progress goes to stderr.
void run_sinew_variants(Results& res, const Flags& f, sinew::Runtime& rt, const SinewDevices& sd,
                        sinew::samples::Sample& s, const std::string& benchmark, std::size_t size, double bytes,
                        const std::vector<double>& shares, sinew::samples::Sample* pinned_sample = nullptr,
                        const std::vector<double>& pinned_shares = {});

// The variants of a split sweep: CPU+GPU splits with the user's data pageable, and pinned.
inline const std::string kSplit = "split", kSplitPinned = "split-pinned-user";

struct Row {
  std::string benchmark;   // "saxpy", "filter_pipeline", "nbody"
  std::size_t size = 0;    // elements / image side / bodies
  std::string impl;        // "handwritten" | "sinew"
  std::string variant;     // "cpu-zero-copy", "gpu-pinned", "split", ...
  double cpu_share = kNaN; // fraction of the work on the CPU device (NaN: not applicable)
  unsigned overlap = 0;    // Sinew GPU queues, or hand-written GPU pipeline queues (0: n/a)
  double bytes = 0;        // data moved (for GB/s; 0: not reported)
  Measurement m;
  double gbps() const { return bytes > 0 && m.median_ms > 0 ? bytes / m.median_ms / 1e6 : kNaN; }
};

struct Ratio {
  std::string benchmark;
  std::size_t size = 0;
  std::string what;        // "gpu-only", "split 60% cpu", "best split", ...
  std::string sinew, handwritten;  // which rows (variant and share)
  double sinew_ms = kNaN, handwritten_ms = kNaN;
  double value() const { return sinew_ms / handwritten_ms; }
};

// Within one side: how much faster a CPU+GPU split is than the faster device alone.
struct Speedup {
  std::string benchmark;
  std::size_t size = 0;
  std::string impl;        // "handwritten" | "sinew"
  std::string what;        // "best pinned split vs best single device"
  std::string split, single;  // which rows
  double split_ms = kNaN, single_ms = kNaN;
  double value() const { return single_ms / split_ms; }  // > 1: the split is faster
};

class Results {
 public:
  // The CSV columns of bench_saxpy and bench_pipeline.
  static std::vector<std::string> csv_columns();
  // From now on every row, ratio and speedup is also appended to `log` as it is added (rows as
  // measured, so that a killed run keeps what it had); `program` fills the program column.
  void log_to(CsvLog* log, std::string program) {
    log_ = log;
    program_ = std::move(program);
  }
  void add(Row r);
  void add(Ratio r);
  const std::vector<Row>& rows() const { return rows_; }

  // The fastest OK row of (benchmark, size, impl) whose variant is `variant` (any share; with
  // `interior`, only shares strictly between 0 and 1: both devices at work), or null.
  const Row* best(const std::string& benchmark, std::size_t size, const std::string& impl,
                  const std::string& variant, bool interior = false) const;
  // The row with this share (within 1e-9), or null.
  const Row* find(const std::string& benchmark, std::size_t size, const std::string& impl, const std::string& variant,
                  double cpu_share = kNaN) const;
  // Adds a ratio sinew/handwritten of two rows, when both exist and are OK.
  void ratio(const std::string& what, const Row* sinew, const Row* handwritten);
  // Adds, for one side (`impl`), the speedup of the fastest split of `split_variant` with both
  // devices at work (0 < share < 1) over the faster of the rows `singles` (each device alone),
  // when the split and at least one single row exist and are OK.
  void speedup(const std::string& what, const std::string& benchmark, std::size_t size, const std::string& impl,
               const std::string& split_variant, const std::vector<const Row*>& singles);

  // The rows of one (benchmark, size) other than the split sweeps, as a table.
  void print_rows(std::ostream& os, const std::string& benchmark, std::size_t size) const;
  // The sweep of `variant` ("split", "split-pinned-user") of one (benchmark, size): share |
  // handwritten ms, IQR, GB/s | sinew ms, IQR, GB/s | sinew/hw.
  void print_sweep(std::ostream& os, const std::string& benchmark, std::size_t size,
                   const std::string& variant = kSplit) const;
  void print_ratios(std::ostream& os) const;
  bool all_ok() const;

 private:
  void log(const CsvLog::Row& row);
  CsvLog* log_ = nullptr;
  std::string program_;
  std::vector<Row> rows_;
  std::vector<Ratio> ratios_;
  std::vector<Speedup> speedups_;
};

// Times one hand-written variant (fn returns the median and fills the Stats) and adds its row;
// an exception becomes the row's check. Progress goes to stderr.
void add_handwritten(Results& res, Row row, const std::function<double(handwritten::Stats*)>& fn);

// A line to say which machine, devices and flags produced the numbers.
void print_header(std::ostream& os, const Flags& f, const std::string& hw_cpu, const std::string& hw_gpu,
                  bool hw_stand_in, const sinew::Runtime* rt, const SinewDevices* sd);

// An ostream that writes to std::cout and keeps a copy of the text (for the .md section).
class TeeStream : public std::ostream {
 public:
  TeeStream();
  ~TeeStream() override;
  std::string text() const;

 private:
  struct Buf;
  std::unique_ptr<Buf> buf_;
};

// bench_saxpy and bench_pipeline: DIR/<program>.md — heading, command, devices, the hand-written
// side's devices, then the printed report as a preformatted block.
void write_text_report(const Flags& f, const std::string& title, const sinew::Runtime* rt,
                       const std::string& handwritten_devices, const std::string& text);

}  // namespace sinew_bench
