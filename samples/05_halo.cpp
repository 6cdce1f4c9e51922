// 05_halo — a stencil: each element's new value needs its neighbours, also those in another
// device's slice.
//
// sinew::halo(x, 1, 1, Boundary::clamp) gives the kernel its slice of x plus 1 unit before and 1
// after it (a unit is x.unit() elements; here one element, for an image it would be a row). The
// pointer the kernel gets starts at the first halo unit, so the slice's first element is at index
// before * x.unit() = 1: the kernel reads x[i], x[i + 1], x[i + 2] for its element i. Beyond the
// vector's own ends the halo holds what the Boundary says: clamp repeats the end element (zero,
// a constant value, or none, where the kernel must test offset()/size() itself, are the others).
//
// The loop smooths x eight times: the stencil writes y, copy(y, x) writes it back. Because the
// tree writes x, the runtime moves the halo units between the partitions before each next read:
// one element at each partition boundary per iteration, never the whole vector (a tree on one
// device moves none). The report lists those exchanges.
// Run: 05_halo [device index] (without one, x is split evenly over every device), or over the
// ranks of an MPI job: mpirun -np 3 05_halo --mpi (the halo units then cross between ranks too).
#include <sinew/sinew.hpp>

#include "common/concept.hpp"  // sinew::samples::run_concept: [device] or --mpi
#include "common/kernels.hpp"  // sinew::samples::kernel: the samples' kernels, embedded

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t n = 1000, iterations = 8;
  std::vector<cl_int> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = i < n / 2 ? 0 : 4096;  // a step

  auto x = sinew::vector<cl_int>().name("x");
  auto y = sinew::vector<cl_int>().name("y");  // a channel: stays on the devices
  auto smooth = sinew::samples::kernel("concepts.cl", "smooth3")
                    .args(sinew::halo(x, 1, 1, sinew::Boundary::clamp), sinew::out(y), sinew::count(y))
                    .range_of(y);
  auto tree = sinew::loop(sinew::pipeline(smooth, sinew::copy(y, x))).times(iterations);
  std::cout << tree.dump();

  // The same in C++: clamp at both ends.
  std::vector<cl_int> expected = host, next(n);
  for (std::size_t it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < n; ++i)
      next[i] = (expected[i == 0 ? 0 : i - 1] + 2 * expected[i] + expected[std::min(i + 1, n - 1)]) / 4;
    expected.swap(next);
  }

  try {
    const auto ran = sinew::samples::run_concept(
        argc, argv, tree, {{x, host}}, {}, [](sinew::Runtime& rt, sinew::RunOptions& options) {
          if (options.device) return;
          sinew::Config even;  // split evenly: with several devices, halo units cross between them
          even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
          options.config = even;
        });
    if (!ran.checks) return 0;
    const sinew::Report& report = ran.report;
    std::cout << report.str() << "\n";
    // One entry per halo read of a vector the tree wrote since: here per iteration after the
    // first (the first reads x from the host). bytes moved between partitions; boundary_bytes
    // filled in beyond x's ends.
    for (const auto& e : report.exchanges)
      std::cout << "iteration " << e.iteration << ": " << e.reader << " read " << e.vector << "'s halo: " << e.bytes
                << " bytes from other partitions (" << e.host_bytes << " through the host), " << e.boundary_bytes
                << " bytes of boundary\n";
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  for (std::size_t i = 0; i < n; ++i)
    if (host[i] != expected[i]) {
      std::cout << "result: MISMATCH at " << i << ": " << host[i] << ", expected " << expected[i] << "\n";
      return 1;
    }
  std::cout << "result: OK\n";
  return 0;
}
