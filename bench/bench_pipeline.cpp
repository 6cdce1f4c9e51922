// bench/bench_pipeline.cpp — the filter pipeline (gaussian noise -> solarise -> mirror on an RGBA
// image, split by lines) against hand-written OpenCL, and N-Body (Sinew alone: a loop of steps
// with replicated positions), each on the CPU alone, the GPU alone and static CPU+GPU splits
// (common/versus.hpp). The filter pipeline's splits are swept twice: the image pageable, and pinned.
#include "versus.hpp"

#include <iostream>

using namespace bench;

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("sides", po::value<Counts>()->default_value(Counts{{4096}}, "4096")->value_name("a,b"),
                    "filter pipeline image sides (--quick 512)")(
      "bodies", po::value<Counts>()->default_value(Counts{{32768}}, "32768")->value_name("a,b"),
      "N-Body bodies (--quick 2048)")("nbody-steps", po::value<unsigned>()->default_value(0)->value_name("N"),
                                      "N-Body steps (0: the sample's, 10)")(
      "shares", po::value<Shares>()->default_value(Shares{{0, 0.1, 0.3, 0.5, 1}}, "0,0.1,0.3,0.5,1")->value_name("a,b"),
      "CPU shares of the splits, the data pageable")(
      "pinned-shares",
      po::value<Shares>()
          ->default_value(Shares{{0, 0.02, 0.05, 0.1, 0.3, 0.5, 1}}, "0,0.02,0.05,0.1,0.3,0.5,1")
          ->value_name("a,b"),
      "CPU shares of the filter pipeline's splits with the image pinned (the GPU is then so much faster that only "
      "small CPU shares can pay)");
  own.add(versus_options());
  Bench b({"bench_pipeline", "filter pipeline and N-Body, Sinew against hand-written OpenCL",
           "The filter pipeline (filters.cl) against hand-written OpenCL, and N-Body (Sinew alone), on the CPU\nalone, "
           "the GPU alone and CPU+GPU splits. Without a GPU run it with POCL_DEVICES=\"pthread pthread\".",
           7, 3},
          argc, argv, own);
  const VersusFlags f(b);
  const auto shares = b.vm["shares"].as<Shares>().v, pinned = b.vm["pinned-shares"].as<Shares>().v;
  try {
    std::unique_ptr<hw::Env> env = f.handwritten ? std::make_unique<hw::Env>() : nullptr;
    std::unique_ptr<sinew::Runtime> rt = f.sinew ? make_runtime(b.zero_copy_stand_in) : nullptr;
    Versus v(b, f, rt.get(), env.get());
    for (std::size_t side : b.option("sides", Counts{{512}}).v) {
      if (b.stop()) break;
      sinew::samples::FilterPipeline s;
      s.prepare(side);
      auto hand = env ? hw::filters(*env, s, f.hw) : nullptr;
      const double bytes = 8.0 * side * side;
      v.run({"filter_pipeline", side,
             std::to_string(side) + " x " + std::to_string(side) + " RGBA (" + fmt("%g", bytes / 1e6) +
                 " MB read+written)",
             bytes, rt ? &s : nullptr, nullptr, hand.get(), shares, pinned, shares, pinned});
    }
    for (std::size_t bodies : rt ? b.option("bodies", Counts{{2048}}).v : std::vector<std::size_t>{}) {
      if (b.stop()) break;
      sinew::samples::Nbody s;
      if (unsigned steps = b.vm["nbody-steps"].as<unsigned>()) s.params.steps = steps;
      s.prepare(bodies);
      v.run({"nbody",
             bodies, std::to_string(bodies) + " bodies, " + std::to_string(s.params.steps) + " steps (Sinew alone)", 0,
             &s, nullptr, nullptr, shares, {}, {}, {}});
    }
    return b.finish(b.header(rt.get()) + v.markdown(), v.failed());
  } catch (const std::exception& e) {
    std::cerr << b.d.name << ": " << e.what() << "\n";
    return 2;
  }
}
