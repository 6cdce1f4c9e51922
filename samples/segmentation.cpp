// segmentation — the paper's Segmentation benchmark: a 3D grey image classified by two
// thresholds, a Map partitioned by z-slices. See common/segmentation.cpp.
//
//   segmentation --size 62914560     # 60 MB
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Segmentation sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"width", "slice width, a multiple of 4 (0: from the size)", "0"},
                                          {"height", "slice height (0: from the size)", "0"},
                                          {"lo", "voxels below it become 0", "85"},
                                          {"hi", "voxels above it become 255", "170"}});
  sample.params.width = opts.get_size("width", 0);
  sample.params.height = opts.get_size("height", 0);
  sample.params.lo = static_cast<cl_uchar>(opts.get_size("lo", 85));
  sample.params.hi = static_cast<cl_uchar>(opts.get_size("hi", 170));
  return sinew::samples::cli::run(sample, opts);
}
