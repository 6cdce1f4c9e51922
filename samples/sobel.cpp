// sobel — edge detection on a grey image: blur -> Sobel -> threshold, then a map_reduce counting
// the edge pixels. Blur and Sobel are 3x3 stencils reading a halo of one row (sinew::halo); the
// blurred image never leaves the devices but for the rows at each partition boundary (the
// report's "halo exchanges" line). See common/sobel.cpp.
//
//   sobel --size 4096 --threshold 64
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <iostream>

int main(int argc, char** argv) {
  sinew::samples::Sobel sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"threshold", "edge threshold on |gx| + |gy|, 0 to 255", "96"}});
  sample.params.threshold = static_cast<cl_uint>(opts.get_count("threshold", 96, 0, 255));
  const int rc = sinew::samples::cli::run(sample, opts);
  if (rc != 2) std::cout << "edge pixels: " << sample.edge_count() << "\n";
  return rc;
}
