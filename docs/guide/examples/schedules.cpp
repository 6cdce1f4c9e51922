// Schedules: one tree run with a static split, with the dynamic schedule, and on one device.
#include <sinew/sinew.hpp>

#include <iostream>
#include <string>
#include <vector>

// Rows of very different cost: element (r, c) iterates (7r + c) % 64 times. A static split
// fixes each device's rows before the run; the dynamic schedule deals chunks of rows out as the
// devices' queues get ready. offset(v) is the slice's first element within the whole vector.
const char* const kSource = R"CL(
__kernel void uneven_rows(__global float* v, uint width, uint first, uint count) {
  const uint col = get_global_id(0), row = get_global_id(1);
  if (col >= width || row * width >= count) return;
  const uint global_row = first / width + row;
  float x = v[row * width + col];
  for (uint k = 0; k < (global_row * 7 + col) % 64; ++k) x = x * 0.5f + 1.0f;
  v[row * width + col] = x;
}
)CL";

int main() {
  const std::size_t width = 256, rows = 512;
  auto v = sinew::vector<cl_float>().unit(width).name("v");  // partitioned in whole rows
  auto tree = sinew::kernel_source(kSource, "uneven_rows")
                  .args(sinew::inout(v), sinew::scalar(static_cast<cl_uint>(width)), sinew::offset(v),
                        sinew::count(v))
                  .dims(2);  // work-items (width, rows of the slice)

  std::vector<cl_float> reference(width * rows);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < width; ++c) {
      float x = 1.0f;
      for (std::size_t k = 0; k < (r * 7 + c) % 64; ++k) x = x * 0.5f + 1.0f;
      reference[r * width + c] = x;
    }

  sinew::Runtime rt;
  const bool two = rt.devices().size() > 1;
  const std::string split = two ? "0=1,1=1" : "0=1";  // Config::parse: ratios per device
  std::vector<cl_float> warm(width * rows, 1.0f);
  rt.execute(tree, {{v, warm}}, {.plan = split});  // the first run builds the kernel: not timed below
  for (const std::string& plan : {split, split + ",schedule=dynamic", std::string(two ? "0=1,1=0" : "0=1")}) {
    std::vector<cl_float> data(width * rows, 1.0f);
    const sinew::Report report = rt.execute(tree, {{v, data}}, {.plan = plan});
    std::cout << report.config.str() << ": " << report.wall_ms << " ms";
    for (std::size_t d = 0; d < report.chunks.size(); ++d)
      std::cout << (d ? ", " : ", chunks taken per device: ") << report.chunks[d];
    std::cout << "\n";
    if (data != reference) {
      std::cout << "MISMATCH with plan " << plan << "\n";
      return 1;
    }
  }
  std::cout << "OK\n";
  return 0;
}
