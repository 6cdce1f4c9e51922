// mergesort — sinew::divide_and_conquer, the HPU paper's example: keys sorted in place, the lower
// levels split over the devices, the upper levels on one (the plan's crossover). See
// common/divide_and_conquer.cpp and kernels/mergesort.cl.
//
//   mergesort --size 16777216 --device all            # the knowledge base trains the crossover
//   mergesort --key float --fanout 4
//   SINEW_CONFIG="gpu=0.8,crossover=6,upper=0" mergesort --size 67108864
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Mergesort sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"key", "the key type: uint or float", "uint"},
                                          {"fanout", "runs merged at a time (k >= 2)", "2"},
                                          {"leaf", "keys per leaf (a power of two)", "1024"}});
  sample.params.key = opts.get("key", "uint");
  sample.params.fanout = opts.get_count("fanout", 2, 2, 1024);
  sample.params.leaf_size = opts.get_power_of_two("leaf", 1024, 1, 1 << 20);
  return sinew::samples::cli::run(sample, opts);
}
