// Stencils and halos: a 3-point smoothing loop whose partitions read their neighbours' edges.
#include <sinew/sinew.hpp>

#include <algorithm>
#include <iostream>
#include <vector>

const char* const kSource = R"CL(
// x points at the slice's first unit minus one (the halo before it): x[i + 1] is element i.
__kernel void smooth3(__global const int* x, __global int* y, uint count) {
  const uint i = get_global_id(0);
  if (i < count) y[i] = (x[i] + 2 * x[i + 1] + x[i + 2]) / 4;
}
)CL";

int main() {
  const std::size_t n = 1000, iterations = 8;
  std::vector<cl_int> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = i < n / 2 ? 0 : 4096;  // a step

  auto x = sinew::vector<cl_int>().name("x");
  auto y = sinew::vector<cl_int>().name("y");  // a channel: stays on the devices
  // One unit of x on each side of every slice; beyond the vector's ends, copies of its end units.
  auto smooth = sinew::kernel_source(kSource, "smooth3")
                    .args(sinew::halo(x, 1, 1, sinew::Boundary::clamp), sinew::out(y), sinew::count(y))
                    .range_of(y);
  auto tree = sinew::loop(sinew::pipeline(smooth, sinew::copy(y, x))).times(iterations);

  std::vector<cl_int> expected = host, next(n);  // the same in C++
  for (std::size_t it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < n; ++i)
      next[i] = (expected[i == 0 ? 0 : i - 1] + 2 * expected[i] + expected[std::min(i + 1, n - 1)]) / 4;
    expected.swap(next);
  }

  sinew::Runtime rt;
  sinew::Config even;  // split evenly: halo units cross between the devices every iteration
  even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  const sinew::Report report = rt.execute(tree, {{x, host}}, {.config = even});
  for (const auto& e : report.exchanges)
    std::cout << "iteration " << e.iteration << ": " << e.reader << " read " << e.vector << "'s halo, " << e.bytes
              << " bytes from other partitions\n";

  if (host != expected) {
    std::cout << "MISMATCH\n";
    return 1;
  }
  std::cout << "OK: " << report.iterations << " iterations, " << report.exchanges.size() << " halo exchanges\n";
  return 0;
}
