// Resident data: arrays kept on the devices between runs, two trees alternating over them, the
// host deciding between runs from a reduction's value and writing a range through the array.
#include <sinew/sinew.hpp>

#include <iostream>
#include <vector>

const char* const kSource = R"CL(
__kernel void decay(__global float* u, __global float* energy, float rate) {
  const size_t i = get_global_id(0);
  u[i] = u[i] * rate;
  energy[i] = u[i] * u[i];
}
__kernel void add_source(__global float* u, __global const float* source) {
  const size_t i = get_global_id(0);
  u[i] += source[i];
}
)CL";

int main() {
  const std::size_t n = 1 << 16;
  sinew::Runtime rt;
  sinew::Config even;
  even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));

  // Two resident arrays: zero-initialised, kept by the runtime; the host writes through write().
  auto u = rt.array<cl_float>(n);
  auto source = rt.array<cl_float>(n);
  for (auto& s : source.write()) s = 0.25f;

  // Two trees over them, their vectors with different units (a kernel per element, per row of 256).
  auto vu = sinew::vector<cl_float>().name("u"), energy = sinew::vector<cl_float>().name("energy");
  auto rows_u = sinew::vector<cl_float>().name("u").unit(256), rows_source = sinew::vector<cl_float>().unit(256);
  auto total = sinew::result<cl_float>("energy");
  auto decay = sinew::map_reduce(
      sinew::kernel_source(kSource, "decay").args(sinew::inout(vu), sinew::out(energy), sinew::scalar(0.5f)),
      sinew::reduce::sum(energy, total));
  auto heat = sinew::kernel_source(kSource, "add_source").args(sinew::inout(rows_u), sinew::in(rows_source));

  std::uint64_t moved = 0;
  float reference = 0, strength = 0.25f;  // every element of u is the same
  bool heating = true;
  for (int step = 0; step < 20; ++step) {
    if (step == 10) {
      for (auto& s : source.write()) s = 0.5f;  // a host write: the devices' copies of source are dropped
      strength = 0.5f;
    }
    if (heating) {
      const sinew::Report r = rt.execute(heat, {{rows_u, u}, {rows_source, source}}, {.config = even});
      if (step > 0) moved += r.copies.to_device.bytes + r.copies.to_host.bytes;
      reference += strength;
    }
    const sinew::Report d = rt.execute(decay, {{vu, u}}, {.config = even});
    if (step > 0) moved += d.copies.to_device.bytes + d.copies.to_host.bytes;
    reference *= 0.5f;
    // The host's decision from a reduction's value: no array leaves the devices for it.
    heating = d.value(total) < 0.05f * static_cast<float>(n);
  }
  const auto values = u.host();  // waits for the runs, brings the devices' slices home
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok = ok && values[i] == reference;
  std::cout << "bytes moved between the host and discrete devices after the first step: " << moved << "\n";
  std::cout << (ok ? "OK" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
