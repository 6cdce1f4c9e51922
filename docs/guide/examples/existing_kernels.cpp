// Existing OpenCL kernels as they are written: a stencil that tests its global row (global
// indices), an element type given by a typedef, and a transpose that runs whole.
#include <sinew/sinew.hpp>

#include <iostream>
#include <vector>

static const char* kSource = R"CL(
typedef int cell_t;
// Written for the whole grid: global row and column, a boundary test on them.
__kernel void smooth(__global const cell_t* in, __global cell_t* out, uint rows, uint cols) {
  uint x = get_global_id(0), y = get_global_id(1), i = y * cols + x;
  if (y == 0 || y == rows - 1) { out[i] = in[i]; return; }
  out[i] = (in[i - cols] + 2 * in[i] + in[i + cols]) / 4;
}
// Writes b's column y from a's row y: outside any slice of b's rows.
__kernel void transpose(__global const cell_t* a, __global cell_t* b, uint n) {
  uint x = get_global_id(0), y = get_global_id(1);
  b[x * n + y] = a[y * n + x];
}
)CL";

int main() {
  const cl_uint n = 64;
  std::vector<cl_int> grid(n * n), result(n * n, 0);
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<cl_int>((i * 37) % 101);

  auto a = sinew::vector<cl_int>().unit(n).name("a");
  auto s = sinew::vector<cl_int>().unit(n).name("s");  // a channel: stays on the devices
  auto b = sinew::vector<cl_int>().unit(n).name("b");
  auto smooth = sinew::kernel_source(kSource, "smooth")
                    .args(sinew::halo(a, 1, 1), sinew::out(s), sinew::scalar(n), sinew::scalar(n))
                    .dims(2)
                    .global_indices();  // get_global_id(1) is the row in the whole grid
  auto transpose = sinew::kernel_source(kSource, "transpose")
                       .args(sinew::in(s), sinew::out(b), sinew::scalar(n))
                       .dims(2)
                       .whole_range();  // one partition on one device, s gathered onto it
  auto tree = sinew::pipeline(smooth, transpose);

  std::vector<cl_int> expected(n * n);  // the same in C++
  for (cl_uint y = 0; y < n; ++y)
    for (cl_uint x = 0; x < n; ++x) {
      const cl_uint i = y * n + x;
      const cl_int v = y == 0 || y == n - 1 ? grid[i] : (grid[i - n] + 2 * grid[i] + grid[i + n]) / 4;
      expected[x * n + y] = v;
    }

  sinew::Runtime rt;
  sinew::Config even;  // smooth runs split; transpose whole on device 0 (the first largest share)
  even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  const sinew::Report report = rt.execute(tree, {{a, grid}, {b, result}}, {.config = even});

  if (result != expected) {
    std::cout << "MISMATCH\n";
    return 1;
  }
  std::cout << "OK: ran as " << report.config.str() << "\n";
  return 0;
}
