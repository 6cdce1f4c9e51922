// histogram — the 64-bin histogram of an 8-bit grey image as one map_reduce whose element type is
// a struct (64 counts): each row's histogram on the devices, a custom reducer adding them. See
// common/histogram.cpp and kernels/histogram.cl.
//
//   histogram --size 4096 --height 1000
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <limits>

int main(int argc, char** argv) {
  sinew::samples::Histogram sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample, {{"height", "rows (0: as many as the width)", "0"}});
  sample.params.height = opts.get_count("height", 0, 0, std::numeric_limits<cl_uint>::max());
  return sinew::samples::cli::run(sample, opts);
}
