// segmentation — the paper's Segmentation benchmark: a 3D grey image classified by two
// thresholds, a Map partitioned by z-slices. See common/segmentation.cpp.
//
//   segmentation --size 62914560     # 60 MB
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <limits>

int main(int argc, char** argv) {
  sinew::samples::Segmentation sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"width", "slice width, a multiple of 4 (0: from the size)", "0"},
                                          {"height", "slice height (0: from the size)", "0"},
                                          {"lo", "voxels below it become 0 (0..255)", "85"},
                                          {"hi", "voxels above it become 255 (0..255)", "170"}});
  sample.params.width = opts.get_count("width", 0, 0, std::numeric_limits<cl_uint>::max());
  sample.params.height = opts.get_count("height", 0, 0, std::numeric_limits<cl_uint>::max());
  sample.params.lo = static_cast<cl_uchar>(opts.get_count("lo", 85, 0, 255));
  sample.params.hi = static_cast<cl_uchar>(opts.get_count("hi", 170, 0, 255));
  return sinew::samples::cli::run(sample, opts);
}
