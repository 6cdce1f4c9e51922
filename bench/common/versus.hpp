// bench/common/versus.hpp — Sinew against hand-written OpenCL on one workload at a time: the
// variants, ratios and tables that bench_saxpy and bench_pipeline share.
//
// Per case (a workload at a size), on each side: the CPU alone, the GPU alone (Sinew at each
// overlap level, and as a run pinned to it with RunOptions::device ("gpu-device": the level the
// runtime picks for it, from its knowledge base or a screening on first use; ovl shows it);
// hand-written naive, through pinned staging, and from the user's data already pinned), and static CPU+GPU splits swept twice, the user's data pageable ("split") and pinned
// ("split-pinned-user"). Then the ratios Sinew / hand-written (median wall times; above 1 Sinew
// is slower) and each side's speedup of its best pinned split over its faster single device.
#pragma once

#include "handwritten/handwritten.hpp"
#include "sinew_side.hpp"

namespace bench {

// --overlaps, --queues, --chunk-mb, --no-sinew, --no-handwritten, --no-pinned-splits.
po::options_description versus_options();
std::vector<std::string> versus_columns();

struct VersusFlags {
  std::vector<unsigned> overlaps;  // Sinew's GPU overlap levels tried GPU-only
  hw::Options hw;
  bool sinew = true, handwritten = true, pinned_splits = true;
  explicit VersusFlags(const Bench& b);
};

struct Case {
  std::string name;  // "saxpy", "filter_pipeline", "nbody"
  std::size_t size = 0;
  std::string label;                                      // "10M elements", "4096 x 4096 RGBA"
  double bytes = 0;                                       // read and written per run, for GB/s (0: none)
  sinew::samples::Sample* sample = nullptr;               // prepared
  sinew::samples::Sample* pinned_sample = nullptr;        // prepared in Runtime::pinned memory, or null: pinned copies
  hw::Workload* hw = nullptr;                             // null: Sinew alone
  std::vector<double> shares, pinned_shares;              // the two sweeps
  std::vector<double> ratio_shares, ratio_pinned_shares;  // shares whose ratio is reported
};

class Versus {
 public:
  Versus(Bench& b, const VersusFlags& f, sinew::Runtime* rt, hw::Env* env);
  const Roles::Pair& pair() const { return pair_; }
  // A Config: `cpu_share` on the CPU, the rest on the GPU at `overlap` queues, no fission.
  sinew::RunOptions plan(double cpu_share, unsigned overlap) const;
  void run(const Case& c);
  std::string markdown() const;  // the hand-written side's devices, each case, the ratios, the speedups
  bool failed() const { return failed_; }

 private:
  struct Row {
    std::string impl, variant;
    double share = kNaN;
    unsigned overlap = 0;
    double bytes = 0;
    Stats m;
  };
  struct CaseRows {
    Case c;
    std::vector<Row> rows;
  };
  const Row* find(const CaseRows& c, const std::string& impl, const std::string& variant, double share = kNaN) const;
  const Row* best(const CaseRows& c, const std::string& impl, const std::string& variant, bool interior = false) const;
  void add(CaseRows& c, Row r, const Job& job);
  void ratio(const CaseRows& c, const std::string& what, const Row* sinew, const Row* hw);
  std::string sweep(const CaseRows& c, const std::string& variant) const;

  Bench& b_;
  VersusFlags f_;
  sinew::Runtime* rt_;
  hw::Env* env_;
  Roles::Pair pair_;
  std::vector<CaseRows> cases_;
  Table ratios_{{"case", "comparison", "ratio", "Sinew ms", "hand-written ms", "rows (Sinew | hand-written)"}};
  Table speedups_{{"case", "side", "speedup", "split ms", "single ms", "rows (split | single device)"}};
  bool failed_ = false;
};

}  // namespace bench
