// max_subarray — sinew::divide_and_conquer on Bentley's problem: the maximum sum of a contiguous
// subarray, every subproblem summarised by (sum, best prefix, best suffix, best) and the
// summaries joined k at a time. See common/divide_and_conquer.cpp and kernels/max_subarray.cl.
//
//   max_subarray --size 67108864 --device all
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::MaxSubarray sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"fanout", "summaries joined at a time (k >= 2)", "4"},
                                          {"leaf", "elements per leaf", "256"}});
  sample.params.fanout = opts.get_count("fanout", 4, 2, 1024);
  sample.params.leaf_size = opts.get_count("leaf", 256, 1, 1 << 20);
  return sinew::samples::cli::run(sample, opts);
}
