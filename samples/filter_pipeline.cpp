// filter_pipeline — the paper's Filter Pipeline benchmark: Gaussian noise -> solarise -> mirror
// on an RGBA image, one Pipeline whose stages keep the image on each device. The tree and the
// check live in common/filter_pipeline.cpp (shared with tests, benchmarks and training).
//
//   filter_pipeline --size 2048 --dump            (a 2048 x 2048 image)
//   filter_pipeline --size 1024x2048 --device all (1024 pixels wide, 2048 lines; planned by the KB)
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <limits>

int main(int argc, char** argv) {
  sinew::samples::FilterPipeline sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"factor", "noise standard deviation, 0..255", "16"},
                                          {"threshold", "solarise threshold (0..256)", "192"},
                                          {"seed", "noise seed, 0..2^32-1", "2024"}});
  sample.params.noise_factor = static_cast<cl_int>(opts.get_count("factor", 16, 0, 255));
  sample.params.threshold = static_cast<cl_int>(opts.get_count("threshold", 192, 0, 256));
  sample.params.seed = static_cast<cl_uint>(opts.get_count("seed", 2024, 0, std::numeric_limits<cl_uint>::max()));
  return sinew::samples::cli::run(sample, opts);
}
