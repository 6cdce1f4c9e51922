// The balancer: a lopsided plan given with balance on is only a starting point; the online
// balancer watches each run's device times and moves the shares until the devices finish together.
#include <sinew/sinew.hpp>

#include <iostream>
#include <vector>

const char* const kSource = R"CL(
__kernel void work(__global float* v, uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  float x = v[i];
  for (int k = 0; k < 200; ++k) x = x * 0.999f + 0.001f;
  v[i] = x;
}
)CL";

int main() {
  const std::size_t n = 1 << 16;
  auto v = sinew::vector<cl_float>().name("v");
  auto tree = sinew::kernel_source(kSource, "work").args(sinew::inout(v), sinew::count(v)).name("work");

  sinew::Runtime rt;
  if (rt.devices().size() < 2) {
    std::cout << "OK (one device: nothing to balance)\n";
    return 0;
  }
  // 90% of the work on the first device: the two take very different times.
  sinew::RunOptions options{.plan = "0=0.9,1=0.1", .balance = true};
  std::vector<cl_float> data(n, 1.0f);
  std::size_t moves = 0;
  for (int run = 0; run < 30; ++run) {
    const sinew::Report report = rt.execute(tree, {{v, data}}, options);
    if (report.balance) {  // this run triggered a move, applied from the next run on
      ++moves;
      std::cout << "run " << report.execution << ": deviation " << report.deviation << ", lbt " << report.lbt
                << ": level " << report.balance->level << " move " << report.balance->before.str() << " -> "
                << report.balance->after.str() << "\n";
    }
  }
  std::cout << "OK: " << moves << " moves in 30 runs\n";
  return 0;
}
