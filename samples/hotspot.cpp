// hotspot — Rodinia's thermal simulation of a chip, its kernel (kernels/hotspot.cl) written for the
// whole grid, as the suite writes it, and run unchanged with Kernel::global_indices(): each
// partition is launched at its global offset, its halo rows at their natural place. See
// common/hotspot.cpp and docs/guide/existing-kernels.md.
//
//   hotspot --size 1024 --iterations 100 --device all          (the knowledge base plans)
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Hotspot sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"iterations", "time steps, 1 to 1000000 (default 20 up to side 64, else 100)", "0"}});
  sample.params.iterations = static_cast<std::size_t>(opts.get_count("iterations", 0, 0, 1000000));
  return sinew::samples::cli::run(sample, opts);
}
