// Trees and leaves: two kernels in a pipeline over one vector, run on every device at once.
#include <sinew/sinew.hpp>

#include <iostream>
#include <vector>

// OpenCL C, as a .cl file would hold it (sinew::kernel("file.cl", entry) reads one).
const char* const kSource = R"CL(
__kernel void square(__global const float* x, __global float* t, uint count) {
  const uint i = get_global_id(0);
  if (i < count) t[i] = x[i] * x[i];
}
__kernel void add(__global const float* t, __global float* y, float b, uint count) {
  const uint i = get_global_id(0);
  if (i < count) y[i] = t[i] + b;
}
)CL";

int main() {
  const std::size_t n = 1 << 16;
  std::vector<cl_float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<cl_float>(i % 100);

  // Vectors take their size from the host memory bound at run time; t is bound to nothing:
  // a channel between the two stages that stays on each device.
  auto vx = sinew::vector<cl_float>().name("x");
  auto vt = sinew::vector<cl_float>().name("t");
  auto vy = sinew::vector<cl_float>().name("y");
  auto square = sinew::kernel_source(kSource, "square").args(sinew::in(vx), sinew::out(vt), sinew::count(vx));
  auto add = sinew::kernel_source(kSource, "add")
                 .args(sinew::in(vt), sinew::out(vy), sinew::scalar(1.0f), sinew::count(vt));
  auto tree = sinew::pipeline(square, add).name("square-then-add");
  std::cout << tree.dump();

  sinew::Runtime rt;  // every OpenCL device; plans from the knowledge base
  // A plan given with the run: the work split evenly over the devices (without one the
  // knowledge base plans it: knowledge-base.md).
  sinew::Config even;
  even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  // run() returns a std::future; x and y must stay untouched until it is ready.
  const sinew::Report report = rt.run(tree, {{vx, x}, {vy, y}}, {.config = even}).get();
  std::cout << report.str() << "\n";

  for (std::size_t i = 0; i < n; ++i)
    if (y[i] != x[i] * x[i] + 1.0f) {
      std::cout << "MISMATCH at " << i << "\n";
      return 1;
    }
  std::cout << "OK: " << report.partitions.size() << " partitions on " << rt.devices().size() << " devices\n";
  return 0;
}
