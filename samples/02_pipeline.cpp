// 02_pipeline — two kernels in a Pipeline, connected by a channel vector.
//
// Stage 1 writes t = x*x, stage 2 reads t and writes y = t + 1. t is never bound to host
// memory: it is a channel, sized like its neighbours, and stays on each device between the
// stages; only x goes up and only y comes back. x is bound to const data (read-only).
// Run: 02_pipeline [device index | --mpi] (--mpi: over the ranks of an MPI job, under mpirun)
#include <sinew/sinew.hpp>

#include "common/concept.hpp"  // sinew::samples::run_concept: [device] or --mpi
#include "common/kernels.hpp"  // sinew::samples::kernel: the samples' kernels, embedded

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t n = 1 << 20;
  std::vector<cl_float> hx(n), hy(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) hx[i] = static_cast<cl_float>(i % 1001);  // x*x+1 exact in float
  const std::vector<cl_float>& input = hx;

  auto x = sinew::vector<cl_float>().name("x");
  auto t = sinew::vector<cl_float>().name("t");
  auto y = sinew::vector<cl_float>().name("y");
  auto square = sinew::samples::kernel("concepts.cl", "square").args(sinew::in(x), sinew::out(t), sinew::count(x));
  auto add = sinew::samples::kernel("concepts.cl", "add_scalar")
                 .args(sinew::in(t), sinew::out(y), sinew::scalar(1.0f), sinew::count(t));
  auto tree = sinew::pipeline(square, add);
  std::cout << tree.dump();

  try {
    sinew::RunOptions options;
    options.profile = true;  // the report below shows each kernel's device time
    const auto ran = sinew::samples::run_concept(argc, argv, tree, {{x, input}, {y, hy}}, options);
    if (!ran.checks) return 0;
    std::cout << ran.report.str() << "\n";
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  for (std::size_t i = 0; i < n; ++i)
    if (hy[i] != hx[i] * hx[i] + 1.0f) {
      std::cout << "result: MISMATCH at " << i << ": " << hy[i] << ", expected " << hx[i] * hx[i] + 1.0f << "\n";
      return 1;
    }
  std::cout << "result: OK\n";
  return 0;
}
