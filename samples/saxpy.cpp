// saxpy — the paper's Saxpy benchmark: y = a*x + y as a Map, with Sinew's own kernel
// (--mode kernel) or CLBlast's axpy (--mode blas). See common/saxpy.cpp.
//
//   saxpy --size 10000000 --mode blas
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <cfloat>

int main(int argc, char** argv) {
  sinew::samples::Saxpy sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"mode", "kernel (saxpy.cl) or blas (CLBlast)", "kernel"},
                                          {"a", "the constant a", "2.5"}});
  sample.params.mode = opts.get("mode", "kernel");
  sample.params.a = static_cast<float>(opts.get_number("a", 2.5, -FLT_MAX, FLT_MAX));  // a finite float
  return sinew::samples::cli::run(sample, opts);
}
