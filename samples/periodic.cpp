// periodic — diffusion on a grid periodic in y, two kernels a time step (kernels/periodic.cl): the
// interior rows' stencil, written for the whole grid (global_indices), and the ghost rows
// refreshed from the opposite edge, a leaf that writes rows other than its own and so runs whole
// (whole_range: the stencil runs split by the plan, wrap as one partition on the plan's whole
// device, its grid gathered from the partitions and scattered back). See common/periodic.cpp.
//
//   periodic --size 1024 --steps 50 --device all
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Periodic sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample, {{"steps", "time steps, 1 to 1000000", "50"}});
  sample.params.steps = static_cast<std::size_t>(opts.get_count("steps", 50, 1, 1000000));
  return sinew::samples::cli::run(sample, opts);
}
