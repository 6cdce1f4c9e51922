// mandelbrot — escape-time counts of an N x N image whose upper half holds the set: the rows
// there iterate up to --max-iter times, the rows below escape at once. Irregular work: a static
// split fits one view at best, the dynamic schedule deals the rows out as the devices get ready.
// See common/mandelbrot.cpp.
//
//   mandelbrot --size 4096 --max-iter 1024 --device all      (the knowledge base plans)
//   SINEW_CONFIG=schedule=dynamic mandelbrot --device all    (every device taking guided chunks)
//   SINEW_CONFIG=schedule=steal mandelbrot --device all      (every device stealing ranges)
#include "common/cli.hpp"
#include "common/descriptors.hpp"

int main(int argc, char** argv) {
  sinew::samples::Mandelbrot sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"max-iter", "iterations at most per pixel, 1 to 1000000", "512"}});
  sample.params.max_iter = static_cast<cl_uint>(opts.get_count("max-iter", 512, 1, 1000000));
  return sinew::samples::cli::run(sample, opts);
}
