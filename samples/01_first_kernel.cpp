// 01_first_kernel — the smallest Sinew program: one OpenCL kernel over one vector.
//
// A kernel leaf names a kernel of a .cl file and lists its arguments in the kernel's parameter
// order. inout(v) passes each device its slice of v (the kernel indexes it from 0); count(v) is
// the slice's length. Run: 01_first_kernel [device index] (without one, the runtime plans), or
// over the ranks of an MPI job: mpirun -np 3 01_first_kernel --mpi.
// The kernels of the samples are in samples/kernels/, embedded into the samples at build time:
// sinew::samples::kernel(file, entry) is sinew::kernel_source(<the file's text>, entry, file). A
// program of your own would call sinew::kernel("path/to/file.cl", entry) or kernel_source.
#include <sinew/sinew.hpp>

#include "common/concept.hpp"  // sinew::samples::run_concept: [device] or --mpi
#include "common/kernels.hpp"  // sinew::samples::kernel: the samples' kernels, embedded

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t n = 1 << 20;
  std::vector<cl_float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<cl_float>(i % 1000);

  // The vector's size comes from the host data bound at run time.
  auto v = sinew::vector<cl_float>().name("v");
  auto scale = sinew::samples::kernel("concepts.cl", "scale")
                   .args(sinew::inout(v), sinew::scalar(3.0f), sinew::count(v));
  std::cout << scale.dump();

  try {
    sinew::RunOptions options;
    options.profile = true;  // the report below shows each kernel's device time
    // Runtime::run() returns a future; host must stay untouched until it is ready. Then it holds v.
    const auto ran = sinew::samples::run_concept(argc, argv, scale, {{v, host}}, options);
    if (!ran.checks) return 0;
    std::cout << ran.report.str() << "\n";
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  for (std::size_t i = 0; i < n; ++i)
    if (host[i] != static_cast<cl_float>(i % 1000) * 3.0f) {
      std::cout << "result: MISMATCH at " << i << ": " << host[i] << "\n";
      return 1;
    }
  std::cout << "result: OK\n";
  return 0;
}
