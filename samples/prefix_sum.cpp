// prefix_sum — sinew::scan: the prefix sum of a float vector, split over the devices. Each
// device scans its slice; the slices' totals meet on the host, and a second pass adds to each
// slice the total of the slices before it. See common/prefix_sum.cpp.
//
//   prefix_sum --size 100000000 --shares 0.3,0.7
//   prefix_sum --exclusive
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::PrefixSum sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"exclusive", "the exclusive scan (y[0] = 0) instead of the inclusive", "",
                                           true}});
  sample.params.exclusive = opts.has("exclusive");
  return sinew::samples::cli::run(sample, opts);
}
