// heat — Jacobi sweeps of the 2D heat equation in a Loop that stops at a tolerance: the sweep
// reads its rows with a halo of one row (sinew::halo), so between devices only the rows next to
// each partition boundary move per iteration (the report's "halo exchanges" line). See
// common/heat.cpp.
//
//   heat --size 2048 --iterations 500 --tolerance 0
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <cfloat>
#include <iostream>
#include <limits>

int main(int argc, char** argv) {
  sinew::samples::Heat sample;
  auto opts = sinew::samples::cli::parse(
      argc, argv, sample,
      {{"iterations", "most sweeps (default: 100 for sides up to 64, 200 up to 1024, 500 beyond)", ""},
       {"tolerance", "stop once a sweep changes no cell by this much or more (0: never early)", "0.0001"},
       {"alpha", "diffusion number, in (0, 0.25]", "0.2"},
       {"wall", "the edges' fixed temperature", "0"}});
  sample.params.iterations = opts.get_count("iterations", 0, 1, std::numeric_limits<std::size_t>::max());
  sample.params.tolerance = static_cast<float>(opts.get_number("tolerance", 1e-4, 0, FLT_MAX));
  sample.params.alpha = static_cast<float>(opts.get_number("alpha", 0.2, 0, 0.25, true));
  sample.params.wall = static_cast<float>(opts.get_number("wall", 0, -FLT_MAX, FLT_MAX));
  const int rc = sinew::samples::cli::run(sample, opts);
  if (rc != 2) std::cout << "sweeps: " << sample.iterations_run() << ", last max change " << sample.residual() << "\n";
  return rc;
}
