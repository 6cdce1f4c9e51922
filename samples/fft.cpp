// fft — the paper's FFT benchmark: a batch of 1D complex FFTs (clFFT) pipelined with their
// inverse; each device gets whole transforms (512 KB each by default). The result must equal
// the input within 1e-3 relative. See common/fft.cpp.
//
//   fft --size 64            # 64 transforms of 65536 points = 32 MB
//   fft --forward-only       # forward alone, checked against a C++ FFT
#include "common/cli.hpp"
#include "common/descriptors.hpp"

#include <limits>

int main(int argc, char** argv) {
  sinew::samples::Fft sample;
  auto opts = sinew::samples::cli::parse(argc, argv, sample,
                                         {{"length", "points per transform", "65536"},
                                          {"forward-only", "forward transform only, checked against a C++ FFT", "",
                                           true}});
  sample.params.length = opts.get_count("length", 65536, 1, std::numeric_limits<std::size_t>::max());
  sample.params.roundtrip = !opts.has("forward-only");
  return sinew::samples::cli::run(sample, opts);
}
