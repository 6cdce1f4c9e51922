// stencil2d — Tascell's 5-point 2D stencil: --sweeps Jacobi sweeps of a heat plate, each one run
// of a tree that reads the grid with a halo of one row and writes the other grid. Its partitions
// are independent, so the dynamic schedule may deal the rows out in chunks (the heat sample's
// loop, whose sweeps exchange halos within one tree, runs static). See common/stencil2d.cpp.
//
//   stencil2d --size 4096 --sweeps 50 --device all              (the knowledge base plans)
//   SINEW_CONFIG=schedule=dynamic stencil2d --device all        (every device taking chunks)
//   SINEW_CONFIG=schedule=steal stencil2d --device all          (every device stealing ranges)
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Stencil2d sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample, {{"sweeps", "Jacobi sweeps, 1 to 1000000", "20"}});
  sample.params.sweeps = static_cast<std::size_t>(opts.get_count("sweeps", 20, 1, 1000000));
  return sinew::samples::cli::run(sample, opts);
}
