// nbody — the paper's N-Body benchmark: a Loop of direct-sum steps. Positions are replicated on
// every device (sinew::whole); each device advances its bodies into a second vector which
// sinew::copy brings back before the next step. See common/nbody.cpp.
//
//   nbody --size 16384 --steps 20
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <cfloat>
#include <limits>

int main(int argc, char** argv) {
  sinew::samples::Nbody sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"steps", "simulation steps", "10"},
                                          {"dt", "time step", "0.01"},
                                          {"softening", "softening length", "0.05"}});
  sample.params.steps = opts.get_count("steps", 10, 1, std::numeric_limits<std::size_t>::max());
  sample.params.dt = static_cast<float>(opts.get_number("dt", 0.01, 0, FLT_MAX, true));
  sample.params.softening = static_cast<float>(opts.get_number("softening", 0.05, 0, FLT_MAX));
  return sinew::samples::cli::run(sample, opts);
}
