// bench/bench_saxpy.cpp — Saxpy (y = a*x + y, float, host-resident data): Sinew through the sample
// registry against hand-written OpenCL, CPU alone, GPU alone and static CPU+GPU splits, with the
// user's data in pageable memory and in pinned memory.
//
//   bench_saxpy [--sizes 10M,50M,100M] [--repeat 7] [--step 0.05] [--pinned-step 0.1] [--out DIR] [--quick]
//
// Prints, per size, the single-device variants, the two split sweeps (share of the elements on
// the CPU, 0..1; data pageable, data pinned) side by side, and at the end the ratios Sinew /
// hand-written and each side's speedup of its best pinned split over one device. See
// docs/BENCHMARKS.md.
#include "bench_common.hpp"
#include "plans.hpp"
#include "handwritten/handwritten.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

namespace hw = sinew_bench::handwritten;
using namespace sinew_bench;

namespace {

const std::string kUsage = std::string(
    "usage: bench_saxpy [flags]\n"
    "Saxpy, y = a*x + y on float vectors in host memory: hand-written OpenCL (CPU zero-copy; GPU\n"
    "naive; GPU chunked through pinned staging; GPU with the user's data pinned; CPU+GPU splits) and\n"
    "Sinew's saxpy sample (CPU alone; GPU alone at each overlap level, and with the data in\n"
    "Runtime::pinned memory; CPU+GPU splits). The splits are swept twice: the user's x and y in\n"
    "pageable memory, and in pinned memory (both devices work on it in place).\n"
    "  --sizes a,b,...     elements (default 10M,50M,100M; --quick 1M)\n"
    "  --step X            split sweep step in CPU share, data pageable (default 0.05, --quick\n"
    "                      0.1); 60% is always included\n"
    "  --pinned-step X     split sweep step in CPU share, data pinned (default 0.1, --quick 0.2);\n"
    "                      60% is always included\n") + kCommonFlagsHelp;

}  // namespace

// Head to head: the variants timed in turns, one hand-written run then one Sinew run per round,
// so that whatever the machine does meanwhile (other tenants, turbo, memory compaction: the lent
// machine's CPU times drift by 30% between minutes) hits both alike. The ratio is the median of
// the rounds' ratios.
void head_to_head(std::ostream& out, CsvLog& csv, const Flags& f, hw::Env& env, sinew::Runtime& rt,
                  const SinewDevices& sd, std::size_t n) {
  const hw::SaxpyData d = hw::SaxpyData::random(n);
  const hw::Options once{.repeat = 1, .warmup = 0, .chunk_bytes = f.chunk_bytes, .queues = f.queues};
  auto pageable = sinew::samples::find("saxpy");
  pageable->prepare(n);
  auto pinned = sinew::samples::find("saxpy");
  if (!pinned->use_pinned_memory(rt)) return;
  pinned->prepare(n);
  const unsigned ov = f.overlaps.empty() ? 2 : *std::max_element(f.overlaps.begin(), f.overlaps.end());
  struct Pair {
    std::string name;
    std::function<double()> hw;
    sinew::samples::Sample* sample;
    sinew::RunOptions options;
  };
  std::vector<Pair> pairs = {
      {"cpu alone", [&] { return hw::saxpy_cpu_zero_copy(env, d, once); }, pageable.get(), on_device(sd.cpu)},
      {"gpu alone, data pinned", [&] { return hw::saxpy_gpu_pinned_user(env, d, once); }, pinned.get(),
       split(rt, sd, 0.0, ov)},
      {"60% cpu, data pinned", [&] { return hw::saxpy_split_pinned_user(env, 0.6, d, once); }, pinned.get(),
       split(rt, sd, 0.6, ov)},
  };
  out << "\nhead to head, " << count_label(n) << " (" << f.ab_rounds << " interleaved rounds; Sinew overlap " << ov
      << "; ratio = median over rounds of sinew/handwritten, < 1: Sinew faster):\n";
  char line[200];
  std::snprintf(line, sizeof line, "  %-24s %12s %12s %8s %8s %10s %10s\n", "pair", "hw ms", "sinew ms", "ratio", "speed",
                "hw min", "sinew min");
  out << line;
  for (auto& p : pairs) {
    std::vector<double> h, s, r;
    p.hw();  // warm-up of both sides
    time_sinew(rt, *p.sample, p.options, 0, 1);
    for (unsigned i = 0; i < f.ab_rounds; ++i) {
      const double hw_ms = p.hw();
      const Measurement m = time_sinew(rt, *p.sample, p.options, 0, 1);
      if (!m.ok()) {
        out << "  " << p.name << ": Sinew failed: " << m.check << "\n";
        break;
      }
      h.push_back(hw_ms);
      s.push_back(m.median_ms);
      r.push_back(m.median_ms / hw_ms);
      csv.append({{"size", std::to_string(n)}, {"pair", p.name}, {"round", std::to_string(i)},
                  {"handwritten_ms", std::to_string(hw_ms)}, {"sinew_ms", std::to_string(m.median_ms)}});
    }
    if (r.empty()) continue;
    const double ratio = median(r);
    std::snprintf(line, sizeof line, "  %-24s %12.3f %12.3f %8.3f %8.3f %10.3f %10.3f\n", p.name.c_str(), median(h),
                  median(s), ratio, 1 / ratio, *std::min_element(h.begin(), h.end()), *std::min_element(s.begin(), s.end()));
    out << line;
  }
  out << "  (speed = handwritten time / Sinew time: the issue's goal is >= 0.95)\n" << std::flush;
}

int main(int argc, char** argv) {
  const Flags f = parse_flags(argc, argv, kUsage, /*saxpy_program=*/true);
  try {
    std::unique_ptr<hw::Env> env;
    if (f.handwritten) env = std::make_unique<hw::Env>();
    std::unique_ptr<sinew::Runtime> rt;
    SinewDevices sd;
    if (f.sinew) {
      rt = make_runtime(f.zero_copy_stand_in);
      sd = pick_devices(*rt);
    }
    // Everything printed also goes to DIR/<program>.md; every row to DIR/<program>.csv as measured.
    TeeStream out;
    CsvLog csv(std::filesystem::path(f.out) / (f.program + ".csv"), Results::csv_columns(), /*resume=*/false);
    print_header(out, f, env ? env->cpu_description() : "", env ? env->gpu_description() : "",
                 env && env->gpu_is_stand_in(), rt.get(), rt ? &sd : nullptr);
    const hw::Options o{.repeat = f.repeat, .warmup = f.warmup, .chunk_bytes = f.chunk_bytes, .queues = f.queues};
    const auto shares = sweep_shares(f.step, {0.6});
    const auto pinned_shares = f.pinned_splits ? sweep_shares(f.pinned_step, {0.6}) : std::vector<double>{};
    Results res;
    res.log_to(&csv, f.program);
    CsvLog csv_ab(std::filesystem::path(f.out) / (f.program + "_ab.csv"),
                  {"size", "pair", "round", "handwritten_ms", "sinew_ms"}, /*resume=*/false);

    for (std::size_t n : f.sizes) {
      out << "\n== saxpy, " << count_label(n) << " elements (" << 12.0 * n / 1e6 << " MB read+written) ==\n"
                << std::flush;
      const double bytes = 12.0 * static_cast<double>(n);
      auto row = [&](const std::string& variant, double share = kNaN, unsigned overlap = 0) {
        return Row{"saxpy", n, "handwritten", variant, share, overlap, bytes, {}};
      };

      if (env && !f.ab_only) {
        const hw::SaxpyData d = hw::SaxpyData::random(n);
        if (env->has_cpu())
          add_handwritten(res, row("cpu-zero-copy"), [&](hw::Stats* s) { return hw::saxpy_cpu_zero_copy(*env, d, o, s); });
        add_handwritten(res, row("gpu-naive"), [&](hw::Stats* s) { return hw::saxpy_gpu(*env, d, o, s); });
        add_handwritten(res, row("gpu-pinned", kNaN, f.queues),
                        [&](hw::Stats* s) { return hw::saxpy_gpu_pinned(*env, d, o, s); });
        add_handwritten(res, row("gpu-pinned-user", kNaN, f.queues),
                        [&](hw::Stats* s) { return hw::saxpy_gpu_pinned_user(*env, d, o, s); });
        if (env->has_cpu()) {
          for (double share : shares)
            add_handwritten(res, row(kSplit, share, f.queues),
                            [&](hw::Stats* s) { return hw::saxpy_split(*env, share, d, o, s); });
          for (double share : pinned_shares)
            add_handwritten(res, row(kSplitPinned, share, f.queues),
                            [&](hw::Stats* s) { return hw::saxpy_split_pinned_user(*env, share, d, o, s); });
        }
      }
      if (rt && !f.ab_only) {
        auto sample = sinew::samples::find("saxpy");
        sample->prepare(n);
        // A second instance whose x and y live in Runtime::pinned memory (the same data: the
        // same seed): the gpu-pinned-user row and the pinned sweep bind it.
        auto pinned = sinew::samples::find("saxpy");
        const bool has_pinned = pinned->use_pinned_memory(*rt);
        if (has_pinned) pinned->prepare(n);
        run_sinew_variants(res, f, *rt, sd, *sample, "saxpy", n, bytes, shares, has_pinned ? pinned.get() : nullptr,
                           pinned_shares);
      }

      res.ratio("cpu-only", res.find("saxpy", n, "sinew", "cpu"), res.find("saxpy", n, "handwritten", "cpu-zero-copy"));
      const Row* sg = res.best("saxpy", n, "sinew", "gpu");
      res.ratio("gpu-only vs pinned staging", sg, res.find("saxpy", n, "handwritten", "gpu-pinned"));
      res.ratio("gpu-only vs naive", sg, res.find("saxpy", n, "handwritten", "gpu-naive"));
      res.ratio("gpu-only, both data pinned", res.find("saxpy", n, "sinew", "gpu-pinned-user"),
                res.find("saxpy", n, "handwritten", "gpu-pinned-user"));
      res.ratio("split 60% cpu", res.find("saxpy", n, "sinew", "split", 0.6),
                res.find("saxpy", n, "handwritten", "split", 0.6));
      res.ratio("best split (each its own best)", res.best("saxpy", n, "sinew", "split"),
                res.best("saxpy", n, "handwritten", "split"));
      res.ratio("split 60% cpu, data pinned", res.find("saxpy", n, "sinew", kSplitPinned, 0.6),
                res.find("saxpy", n, "handwritten", kSplitPinned, 0.6));
      res.ratio("best split, data pinned (each its own best)", res.best("saxpy", n, "sinew", kSplitPinned),
                res.best("saxpy", n, "handwritten", kSplitPinned));
      for (const std::string impl : {"handwritten", "sinew"})
        res.speedup("best pinned split vs best single device", "saxpy", n, impl, kSplitPinned,
                    {res.find("saxpy", n, impl, impl == "sinew" ? "cpu" : "cpu-zero-copy"),
                     res.find("saxpy", n, impl, "gpu-pinned-user")});

      if (env && rt && sd.two && env->has_cpu() && f.ab_rounds > 0) head_to_head(out, csv_ab, f, *env, *rt, sd, n);

      res.print_rows(out, "saxpy", n);
      res.print_sweep(out, "saxpy", n, kSplit);
      res.print_sweep(out, "saxpy", n, kSplitPinned);
      out << std::flush;
    }
    res.print_ratios(out);
    out << "\ntotal time " << std::lround(seconds_since_start()) << " s\n";
    std::cerr << f.program << ": wrote " << csv.path().string() << "\n";
    write_text_report(f, "saxpy, Sinew against hand-written OpenCL", rt.get(),
                      env ? "Hand-written side: CPU " + env->cpu_description() + "; GPU " + env->gpu_description() + "\n"
                          : std::string(),
                      out.text());
    if (!res.all_ok()) {
      std::cerr << f.program << ": some variants failed (see the check column)\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << f.program << ": " << e.what() << "\n";
    return 2;
  }
}
