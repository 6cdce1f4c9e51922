// Reductions and scans: a sum of squares (map_reduce) and a running sum (scan) over every device.
#include <sinew/sinew.hpp>

#include <iostream>
#include <numeric>
#include <vector>

const char* const kSource = R"CL(
__kernel void square(__global const int* x, __global int* t, uint count) {
  const uint i = get_global_id(0);
  if (i < count) t[i] = x[i] * x[i];
}
)CL";

int main() {
  const std::size_t n = 1 << 16;
  std::vector<cl_int> x(n), sums(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<cl_int>(i % 7);

  sinew::Runtime rt;
  sinew::Config even;
  even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));

  // map_reduce: the body on every partition, then the reducer over all it produced. The total is
  // a Result: read from the Report (or bound to host memory, or tested by a loop's until).
  auto vx = sinew::vector<cl_int>().name("x");
  auto squares = sinew::vector<cl_int>().name("squares");
  auto total = sinew::result<cl_int>("sum of squares");
  auto square = sinew::kernel_source(kSource, "square").args(sinew::in(vx), sinew::out(squares), sinew::count(vx));
  auto sum_of_squares = sinew::map_reduce(square, sinew::reduce::sum(squares, total));
  const sinew::Report reduced = rt.execute(sum_of_squares, {{vx, x}}, {.config = even});

  // scan: out[i] = x[0] + ... + x[i], each device scanning its slice, the slices' totals combined.
  auto vsums = sinew::vector<cl_int>().name("sums");
  auto running = sinew::scan(vx, vsums, sinew::scan_op::sum(), sinew::ScanKind::inclusive);
  rt.execute(running, {{vx, x}, {vsums, sums}}, {.config = even});

  cl_int expected_total = 0;
  for (cl_int v : x) expected_total += v * v;
  std::vector<cl_int> expected_sums(n);
  std::inclusive_scan(x.begin(), x.end(), expected_sums.begin());
  if (reduced.value(total) != expected_total || sums != expected_sums) {
    std::cout << "MISMATCH: sum of squares " << reduced.value(total) << ", expected " << expected_total << "\n";
    return 1;
  }
  std::cout << "OK: sum of squares " << reduced.value(total) << ", last running sum " << sums.back() << "\n";
  return 0;
}
