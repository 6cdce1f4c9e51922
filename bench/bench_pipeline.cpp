// bench/bench_pipeline.cpp — the Filter Pipeline (gaussian noise -> solarise -> mirror on an RGBA
// image, Sinew against hand-written OpenCL) and N-Body (Sinew only), each on the CPU alone, the
// GPU alone and a few static CPU+GPU splits.
//
// The filter pipeline's splits are swept twice: the user's image in pageable memory, and in
// pinned memory.
//
//   bench_pipeline [--sides 4096] [--bodies 32768] [--shares 0,0.1,0.3,0.5,1]
//                  [--pinned-shares 0,0.02,0.05,0.1,0.3,0.5,1]
//                  [--out DIR] [--quick]
#include "bench_common.hpp"
#include "common/descriptors.hpp"
#include "handwritten/handwritten.hpp"

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

namespace hw = sinew_bench::handwritten;
using namespace sinew_bench;

namespace {

const std::string kUsage = std::string(
    "usage: bench_pipeline [flags]\n"
    "Filter pipeline (filters.cl: gaussian_noise -> solarise -> mirror, in place on an RGBA image,\n"
    "split by lines): hand-written OpenCL (CPU zero-copy; GPU naive; GPU chunked through pinned\n"
    "staging, or from an image already in pinned memory; CPU+GPU splits, the image pageable or\n"
    "pinned) against Sinew's filter_pipeline sample. N-Body (nbody.cl, a loop of steps with\n"
    "replicated positions): Sinew's nbody sample alone, CPU, GPU and splits.\n"
    "  --sides a,b         filter pipeline image sides (default 4096; --quick 512)\n"
    "  --bodies a,b        N-Body bodies (default 32768; --quick 2048; K and M count 1000s)\n"
    "  --nbody-steps N     N-Body steps (default: the sample's, 10)\n"
    "  --shares a,b,...    CPU shares of the splits (default 0,0.1,0.3,0.5,1)\n"
    "  --pinned-shares a,b CPU shares of the filter pipeline's splits with the image pinned\n"
    "                      (default 0,0.02,0.05,0.1,0.3,0.5,1: with the image pinned the GPU is\n"
    "                      much faster than the CPU, so only small CPU shares can pay)\n") + kCommonFlagsHelp;

std::string share_label(double share) {
  return "split " + std::to_string(static_cast<int>(std::lround(share * 100))) + "% cpu";
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse_flags(argc, argv, kUsage, /*saxpy_program=*/false);
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
    const auto pinned_shares = f.pinned_splits ? f.pinned_shares : std::vector<double>{};
    Results res;
    res.log_to(&csv, f.program);

    for (std::size_t side : f.sides) {
      const std::string bm = "filter_pipeline";
      const double bytes = 8.0 * static_cast<double>(side) * side;
      out << "\n== filter_pipeline, " << side << " x " << side << " RGBA (" << bytes / 1e6
                << " MB read+written) ==\n"
                << std::flush;
      auto row = [&](const std::string& variant, double share = kNaN, unsigned overlap = 0) {
        return Row{bm, side, "handwritten", variant, share, overlap, bytes, {}};
      };
      if (env) {
        const hw::FilterData d = hw::FilterData::make(side);
        if (env->has_cpu())
          add_handwritten(res, row("cpu-zero-copy"), [&](hw::Stats* s) { return hw::filters_cpu(*env, d, o, s); });
        add_handwritten(res, row("gpu-naive"), [&](hw::Stats* s) { return hw::filters_gpu(*env, d, o, s); });
        add_handwritten(res, row("gpu-pinned", kNaN, f.queues),
                        [&](hw::Stats* s) { return hw::filters_gpu_pinned(*env, d, o, s); });
        add_handwritten(res, row("gpu-pinned-user", kNaN, f.queues),
                        [&](hw::Stats* s) { return hw::filters_gpu_pinned_user(*env, d, o, s); });
        if (env->has_cpu()) {
          for (double share : f.shares)
            add_handwritten(res, row(kSplit, share, f.queues),
                            [&](hw::Stats* s) { return hw::filters_split(*env, share, d, o, s); });
          for (double share : pinned_shares)
            add_handwritten(res, row(kSplitPinned, share, f.queues),
                            [&](hw::Stats* s) { return hw::filters_split_pinned_user(*env, share, d, o, s); });
        }
      }
      if (rt) {
        auto sample = sinew::samples::find(bm);
        // The sample keeps its image in pageable memory; the pinned variants bind pinned copies
        // of it (PinnedCopies, allocated once for gpu-pinned-user and the pinned sweep).
        sample->prepare(side);
        run_sinew_variants(res, f, *rt, sd, *sample, bm, side, bytes, f.shares, nullptr, pinned_shares);
      }
      res.ratio("cpu-only", res.find(bm, side, "sinew", "cpu"), res.find(bm, side, "handwritten", "cpu-zero-copy"));
      const Row* sg = res.best(bm, side, "sinew", "gpu");
      res.ratio("gpu-only vs pinned staging", sg, res.find(bm, side, "handwritten", "gpu-pinned"));
      res.ratio("gpu-only vs naive", sg, res.find(bm, side, "handwritten", "gpu-naive"));
      res.ratio("gpu-only, both data pinned", res.find(bm, side, "sinew", "gpu-pinned-user"),
                res.find(bm, side, "handwritten", "gpu-pinned-user"));
      for (double share : f.shares)
        res.ratio(share_label(share),
                  res.find(bm, side, "sinew", "split", share), res.find(bm, side, "handwritten", "split", share));
      res.ratio("best split (each its own best)", res.best(bm, side, "sinew", "split"),
                res.best(bm, side, "handwritten", "split"));
      for (double share : pinned_shares)
        res.ratio(share_label(share) + ", data pinned", res.find(bm, side, "sinew", kSplitPinned, share),
                  res.find(bm, side, "handwritten", kSplitPinned, share));
      res.ratio("best split, data pinned (each its own best)", res.best(bm, side, "sinew", kSplitPinned),
                res.best(bm, side, "handwritten", kSplitPinned));
      for (const std::string impl : {"handwritten", "sinew"})
        res.speedup("best pinned split vs best single device", bm, side, impl, kSplitPinned,
                    {res.find(bm, side, impl, impl == "sinew" ? "cpu" : "cpu-zero-copy"),
                     res.find(bm, side, impl, "gpu-pinned-user")});
      res.print_rows(out, bm, side);
      res.print_sweep(out, bm, side, kSplit);
      res.print_sweep(out, bm, side, kSplitPinned);
      out << std::flush;
    }

    if (rt) {
      for (std::size_t bodies : f.bodies) {
        auto sample = sinew::samples::find("nbody");
        auto* nb = dynamic_cast<sinew::samples::Nbody*>(sample.get());
        if (nb && f.nbody_steps) nb->params.steps = f.nbody_steps;
        sample->prepare(bodies);
        out << "\n== nbody, " << bodies << " bodies, " << (nb ? nb->params.steps : 0) << " steps (Sinew only) ==\n"
                  << std::flush;
        run_sinew_variants(res, f, *rt, sd, *sample, "nbody", bodies, 0, f.shares);
        res.print_rows(out, "nbody", bodies);
        res.print_sweep(out, "nbody", bodies);
        out << std::flush;
      }
    }

    res.print_ratios(out);
    out << "\ntotal time " << std::lround(seconds_since_start()) << " s\n";
    std::cerr << f.program << ": wrote " << csv.path().string() << "\n";
    write_text_report(f, "filter pipeline and N-Body, Sinew against hand-written OpenCL", rt.get(),
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
