// Memory beyond a device: a device capped at 1 MB runs a 16 MB saxpy by dragging its share
// through a few chunk-sized buffers; the report says how much device memory the run held.
#include <sinew/sinew.hpp>

#include <iostream>
#include <vector>

const char* const kSource = R"CL(
__kernel void saxpy(__global const float* x, __global float* y, float a, uint count) {
  const uint i = get_global_id(0);
  if (i < count) y[i] = a * x[i] + y[i];
}
)CL";

int main() {
  sinew::RuntimeOptions options;
  options.devices = "all";
  // Without a GPU, drive the last PoCL device as a discrete one (explicit copies, not zero copy),
  // and cap the memory Sinew may use on it ($SINEW_DISCRETE, $SINEW_MEMORY_CAP).
  sinew::Runtime probe;
  const std::size_t last = probe.devices().size() - 1;
  const std::string id = probe.devices()[last].id();
  if (probe.devices()[last].kind == sinew::DeviceKind::cpu) options.discrete = id;
  options.memory_cap = id + "=1MB";
  sinew::Runtime rt(options);

  const std::size_t n = 2 << 20;  // two arrays of 8 MB
  auto x = sinew::vector<cl_float>().name("x");
  auto y = sinew::vector<cl_float>().name("y");
  auto tree = sinew::kernel_source(kSource, "saxpy")
                  .args(sinew::in(x), sinew::inout(y), sinew::scalar(3.0f), sinew::count(y));
  std::vector<cl_float> hx(n, 1.0f), hy(n, 2.0f);

  // Everything on the capped device.
  const sinew::Report report = rt.execute(tree, {{x, hx}, {y, hy}}, {.device = last});
  std::cout << "device " << id << " (" << rt.devices()[last].memory() << " bytes usable) held "
            << report.device_bytes[last] << " bytes for " << 2 * n * sizeof(cl_float) << " bytes of data, in "
            << report.partitions.size() << " chunks\n";
  for (cl_float v : hy)
    if (v != 5.0f) {
      std::cout << "MISMATCH\n";
      return 1;
    }
  if (report.device_bytes[last] > rt.devices()[last].memory()) {
    std::cout << "OVER THE CAP\n";
    return 1;
  }
  std::cout << "OK\n";
  return 0;
}
