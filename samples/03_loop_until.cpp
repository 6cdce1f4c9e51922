// 03_loop_until — a Loop that runs until a value computed on the devices is small enough.
//
// The body is a map_reduce: a kernel halves x and writes |x| per element, and the reducer sums
// those shares into `residual`. After every iteration the loop hands the residual to the
// predicate; here it stops once the residual fell below 1/1000 of its start, i.e. after 10
// halvings. .times(100) caps the iterations should the predicate never hold. The inputs are small
// integers, so every value and every sum is exact in float and the check can demand equality.
// Run: 03_loop_until [device index | --mpi] (--mpi: over the ranks of an MPI job, under mpirun)
#include <sinew/sinew.hpp>

#include "common/concept.hpp"  // sinew::samples::run_concept: [device] or --mpi
#include "common/kernels.hpp"  // sinew::samples::kernel: the samples' kernels, embedded

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t n = 1 << 16;
  std::vector<cl_float> hx(n);
  double start = 0;
  for (std::size_t i = 0; i < n; ++i) {
    hx[i] = static_cast<cl_float>((i * 37) % 128);
    start += hx[i];
  }
  const std::vector<cl_float> x0 = hx;
  const float target = static_cast<float>(start / 1000);

  auto x = sinew::vector<cl_float>().name("x");
  auto shares = sinew::vector<cl_float>().name("shares");  // a channel: never leaves the devices
  auto residual = sinew::result<cl_float>("residual");
  auto halve = sinew::samples::kernel("concepts.cl", "halve")
                   .args(sinew::inout(x), sinew::out(shares), sinew::count(x));
  auto body = sinew::map_reduce(halve, sinew::reduce::sum(shares, residual));
  auto tree = sinew::loop(body).times(100).until<cl_float>(residual, [target](cl_float r) { return r < target; });
  std::cout << tree.dump();

  cl_float last = -1;
  sinew::Report report;
  try {
    sinew::RunOptions options;
    options.profile = true;  // the report below shows each kernel's device time
    // The result can be bound to a host variable, and is also in the Report.
    const auto ran = sinew::samples::run_concept(argc, argv, tree, {{x, hx}, {residual, &last}}, options);
    if (!ran.checks) return 0;
    report = ran.report;
    std::cout << report.str() << "\n";
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  const std::size_t expected_iterations = 10;  // start / 2^10 < start / 1000 <= start / 2^9
  const float expected_residual = static_cast<float>(start / 1024);
  std::cout << "iterations: " << report.iterations << ", residual " << last << " (report: " << report.value(residual)
            << ")\n";
  if (report.iterations != expected_iterations || last != expected_residual ||
      report.value(residual) != expected_residual) {
    std::cout << "result: MISMATCH expected " << expected_iterations << " iterations and residual "
              << expected_residual << "\n";
    return 1;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (hx[i] != x0[i] / 1024.0f) {
      std::cout << "result: MISMATCH x[" << i << "] = " << hx[i] << ", expected " << x0[i] / 1024.0f << "\n";
      return 1;
    }
  std::cout << "result: OK\n";
  return 0;
}
