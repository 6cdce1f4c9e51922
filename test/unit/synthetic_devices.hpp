// test/unit/synthetic_devices.hpp — synthetic device models for the training tests: a CPU with
// fissions and a GPU with overlap levels, each device's time a*n + b with platform effects and
// noise.
#pragma once

#include "schedule/train.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace sinew::testing {

using sinew::detail::Measurement;

inline std::vector<DeviceInfo> cpu_gpu() {
  std::vector<DeviceInfo> d(2);
  d[0].index = 0;
  d[0].kind = DeviceKind::cpu;
  d[0].fission_configs = {{"none", {}, "", {}}, {"L2", {8, 8}, "equally", {}}};
  d[1].index = 1;
  d[1].kind = DeviceKind::gpu;
  d[1].discrete = true;
  d[1].overlap_levels = {1, 2, 3, 4};
  return d;
}

// time_d = (a_d * share_d * N + b_d) * (1 + noise), platform effects on a and b: a GPU's a and b
// scaled per overlap level, plus a cost per queue beyond the first (which makes deep overlap a
// loss for small inputs); a CPU's a scaled with fission L2; in a split, every device's time
// scaled by `contention`.
struct Model {
  std::vector<double> a, b;
  double n = 1000;
  double noise = 0.02;
  double fission_gain = 1.0;                            // CPU a is multiplied by this with fission L2
  std::vector<double> overlap_b = {1, 0.6, 0.5, 0.45};  // GPU b multiplied by this per overlap level
  std::vector<double> overlap_a = {1, 1, 1, 1};         // GPU a multiplied by this per overlap level
  double queue_ms = 0;                                  // GPU: per overlap level beyond 1
  double contention = 1;  // every device's time multiplied by this in a split (host bandwidth, threads)
  std::mt19937 rng{7};
  std::size_t calls = 0;

  double device_time(std::size_t d, const Config& c) {
    double s = c.shares[d];
    if (s <= 0) return 0;
    double ad = a[d], bd = b[d];
    if (d == 0 && c.fission == "L2") ad *= fission_gain;
    if (d == 1) {
      ad *= overlap_a.at(c.overlap - 1);
      bd = bd * overlap_b.at(c.overlap - 1) + queue_ms * (c.overlap - 1);
    }
    std::uniform_real_distribution<double> u(-noise, noise);
    const bool split = std::count_if(c.shares.begin(), c.shares.end(), [](double x) { return x > 0; }) > 1;
    return (ad * s * n + bd) * (split ? contention : 1.0) * (1 + u(rng));
  }
  Measurement operator()(const Config& c) {
    ++calls;
    Measurement m;
    for (std::size_t d = 0; d < c.shares.size(); ++d) m.device_ms.push_back(device_time(d, c));
    m.time_ms = *std::max_element(m.device_ms.begin(), m.device_ms.end());
    return m;
  }
  // The best time over CPU share s in [0, 1] at a platform configuration, by brute force.
  double optimum(const std::string& fission, unsigned overlap) {
    double best = 1e300;
    Model clean = *this;
    clean.noise = 0;
    for (int i = 0; i <= 10000; ++i) {
      Config c;
      c.shares = {i / 10000.0, 1 - i / 10000.0};
      c.fission = fission;
      c.overlap = overlap;
      best = std::min(best, clean(c).time_ms);
    }
    return best;
  }
  // The best time over every platform configuration, each device alone included (s = 0, 1).
  double global_optimum() {
    double best = 1e300;
    for (std::string f : {"none", "L2"})
      for (unsigned ov = 1; ov <= overlap_b.size(); ++ov) best = std::min(best, optimum(f, ov));
    return best;
  }
  // The time of `c` without noise.
  double clean_time(const Config& c) const {
    Model clean = *this;
    clean.noise = 0;
    return clean(c).time_ms;
  }
};

}  // namespace sinew::testing
