// samples/common/timestep.cpp — two trees over resident arrays (see timestep.hpp).
#include "common/timestep.hpp"

#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace sinew::samples {

namespace {

void check(const TimeStepSettings& s) {
  if (s.oscillators == 0 || s.oscillators % 64 != 0 || s.steps == 0)
    throw std::invalid_argument("timestep: a positive multiple of 64 oscillators and at least one step");
}

// The host's decision after a kick: the short step while the oscillators are fast on average.
cl_int next_step(const TimeStepSettings& s, cl_int total_speed) {
  return total_speed > s.fast * static_cast<cl_int>(s.oscillators) ? s.short_step : s.long_step;
}

bool writes_at(const TimeStepSettings& s, std::size_t step) {
  return s.write_every && step > 0 && step % s.write_every == 0;
}

}  // namespace

void timestep_start(const TimeStepSettings& s, std::vector<cl_int>& x, std::vector<cl_int>& v) {
  check(s);
  reference::Random random(17);
  x.resize(s.oscillators);
  for (auto& e : x) e = static_cast<cl_int>(random.uniform(-4096.0f, 4096.0f));
  v.assign(s.oscillators, 0);
}

HostWrite timestep_host_write(const TimeStepSettings& s, std::size_t step) {
  const std::size_t count = std::min(s.write_count, s.oscillators);
  HostWrite w;
  w.first = (step * 7919 * 64) % (s.oscillators - count + 1);
  w.values.resize(count);
  for (std::size_t i = 0; i < count; ++i) w.values[i] = static_cast<cl_int>((i * 37 + step) % 2048) - 1024;
  return w;
}

TimeStep::TimeStep() {
  x_ = sinew::vector<cl_int>().name("x");
  v_ = sinew::vector<cl_int>().name("v");
  speed_ = sinew::vector<cl_int>().name("speed");
  blocks_x_ = sinew::vector<cl_int>().name("x").unit(64);
  blocks_v_ = sinew::vector<cl_int>().name("v").unit(64);
  total_speed_ = sinew::result<cl_int>("speed");
}

TimeStep::Outcome TimeStep::run(Runtime& rt, const TimeStepSettings& s, const RunOptions& options) {
  std::vector<cl_int> x0, v0;
  timestep_start(s, x0, v0);
  auto x = rt.array<cl_int>(x0);
  auto v = rt.array<cl_int>(v0);
  auto kick = map_reduce(kernel("timestep.cl", "timestep_kick").args(in(x_), inout(v_), out(speed_),
                                                                       scalar(s.stiffness)),
                         reduce::sum(speed_, total_speed_));
  // One drift tree per time step the host may choose.
  auto drift_short = kernel("timestep.cl", "timestep_drift").args(inout(blocks_x_), in(blocks_v_), scalar(s.short_step));
  auto drift_long = kernel("timestep.cl", "timestep_drift").args(inout(blocks_x_), in(blocks_v_), scalar(s.long_step));
  Outcome o;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t step = 0; step < s.steps; ++step) {
    if (writes_at(s, step)) {
      const HostWrite w = timestep_host_write(s, step);
      std::copy(w.values.begin(), w.values.end(), v.write(w.first, w.values.size()).begin());
      o.written_bytes += w.values.size() * sizeof(cl_int);
    }
    const Report k = rt.execute(kick, {{x_, x}, {v_, v}}, options);
    const cl_int dt = next_step(s, k.value(total_speed_));
    if (dt == s.short_step) ++o.short_steps;
    const Node& drift = dt == s.short_step ? drift_short : drift_long;
    const Report d = rt.execute(drift, {{blocks_x_, x}, {blocks_v_, v}}, options);
    if (step > 0) o.moved_bytes += k.copies.to_device.bytes + k.copies.to_host.bytes + d.copies.to_device.bytes +
                                   d.copies.to_host.bytes;
  }
  o.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto xs = x.host();
  const auto vs = v.host();
  o.x.assign(xs.begin(), xs.end());
  o.v.assign(vs.begin(), vs.end());
  return o;
}

TimeStep::Outcome reference_timestep(const TimeStepSettings& s) {
  TimeStep::Outcome o;
  timestep_start(s, o.x, o.v);
  for (std::size_t step = 0; step < s.steps; ++step) {
    if (writes_at(s, step)) {
      const HostWrite w = timestep_host_write(s, step);
      std::copy(w.values.begin(), w.values.end(), o.v.begin() + static_cast<std::ptrdiff_t>(w.first));
      o.written_bytes += w.values.size() * sizeof(cl_int);
    }
    cl_int total = 0;
    for (std::size_t i = 0; i < s.oscillators; ++i) {
      o.v[i] -= o.x[i] * s.stiffness / 1024;
      total += std::abs(o.v[i]) / 256;
    }
    const cl_int dt = next_step(s, total);
    if (dt == s.short_step) ++o.short_steps;
    for (std::size_t i = 0; i < s.oscillators; ++i) o.x[i] += o.v[i] * dt / 16;
  }
  return o;
}

}  // namespace sinew::samples
