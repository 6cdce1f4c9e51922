// samples/common/hotspot.cpp — the Hotspot descriptor (issue 40): Rodinia's thermal simulation,
// its kernel written for the whole grid and run as it is (Kernel::global_indices).
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Hotspot::description() const {
  return "Thermal simulation of a chip (Rodinia's HotSpot): a loop of time steps whose kernel indexes the whole "
         "grid by global row and column (global_indices, halo of 1 row), partitioned by rows";
}

HotspotCoefficients HotspotCoefficients::of(std::size_t rows, std::size_t cols) {
  // Rodinia's chip: 16 mm x 16 mm, 0.5 mm of silicon; its heat capacity, conductivity and the
  // time step its precision allows.
  const double chip_height = 0.016, chip_width = 0.016, t_chip = 0.0005, k_si = 100, spec_heat_si = 1.75e6;
  const double factor_chip = 0.5, max_pd = 3.0e6, precision = 0.001;
  const double grid_height = chip_height / static_cast<double>(rows);
  const double grid_width = chip_width / static_cast<double>(cols);
  const double cap = factor_chip * spec_heat_si * t_chip * grid_width * grid_height;
  const double rx = grid_width / (2.0 * k_si * t_chip * grid_height);
  const double ry = grid_height / (2.0 * k_si * t_chip * grid_width);
  const double rz = t_chip / (k_si * grid_height * grid_width);
  // The explicit step keeps every cell a convex combination of itself, its four neighbours and the
  // ambient (a maximum principle: temperatures stay within the start's and the ambient's range,
  // plus the power put in) while step / cap x (2 / rx + 2 / ry + 1 / rz) <= 1. A cell's capacity
  // shrinks with the square of the grid's side, so past a side of about 1400 Rodinia's
  // precision-derived step breaks that bound and the grid oscillates to infinity (a float grid to
  // NaN). The step is the smaller of the two: from a side of about 1000 half the bound, which keeps
  // the scheme monotone at every side with room for float rounding.
  const double precision_step = precision / (max_pd / (factor_chip * t_chip * spec_heat_si));
  const double stable_step = 0.5 * cap / (2.0 / rx + 2.0 / ry + 1.0 / rz);
  const double step = std::min(precision_step, stable_step);
  HotspotCoefficients c;
  c.step_div_cap = static_cast<float>(step / cap);
  c.rx_inv = static_cast<float>(1 / rx), c.ry_inv = static_cast<float>(1 / ry), c.rz_inv = static_cast<float>(1 / rz);
  return c;
}

std::size_t Hotspot::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.side;
  if (n < 2 || n > 65535) throw std::invalid_argument("hotspot: a grid side from 2 to 65535, not " + std::to_string(n));
  if (params.iterations > 1000000)
    throw std::invalid_argument("hotspot: at most 1000000 time steps, not " + std::to_string(params.iterations));
  return n;
}

// The temperatures, their start, the power map, the reference's double grid.
std::uint64_t Hotspot::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({n, n, 3 * sizeof(cl_float) + sizeof(double)});
}

void Hotspot::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.side = n;
  reset_state(n);
  expected_.reset();
  iterations_ = params.iterations ? params.iterations : default_iterations(n);
  temp_v_ = sinew::vector<cl_float>().unit(n).name("temp");
  power_v_ = sinew::vector<cl_float>().unit(n).name("power");
  next_v_ = sinew::vector<cl_float>().unit(n).name("next");
  const auto c = HotspotCoefficients::of(n, n);
  const auto side = static_cast<cl_uint>(n);
  auto step = sinew::samples::kernel("hotspot.cl", "hotspot_step")
                  .args(sinew::halo(temp_v_, 1, 1), sinew::in(power_v_), sinew::out(next_v_), sinew::scalar(side),
                        sinew::scalar(side), sinew::scalar(c.step_div_cap), sinew::scalar(c.rx_inv),
                        sinew::scalar(c.ry_inv), sinew::scalar(c.rz_inv), sinew::scalar(c.amb))
                  .dims(2)
                  .global_indices();
  tree_ = sinew::loop(sinew::pipeline(step, sinew::copy(next_v_, temp_v_))).times(iterations_).name("hotspot");
  // Rodinia's inputs: temperatures around 323 K, a power map of hot blocks on a cool floor.
  temp0_.resize(n * n);
  power_.resize(n * n);
  std::uint64_t x = params.seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n * n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    temp0_[i] = 323.0f + static_cast<float>(x % 1000) / 100.0f;
    const std::size_t r = i / n, col = i % n;
    const bool block = (r * 8 / n + col * 8 / n) % 3 == 0;
    power_[i] = (block ? 0.5f : 0.02f) * static_cast<float>((x >> 20) % 1000) / 1000.0f / static_cast<float>(n * n / 4096 + 1);
  }
  temp_.assign(n * n, 0.0f);
}

std::vector<Binding> Hotspot::bindings() {
  temp_ = temp0_;
  ran_ = true;
  return {Binding(temp_v_, temp_), Binding(power_v_, power_)};
}

Check Hotspot::compare_grid(const std::vector<cl_float>& grid) {
  const std::size_t n = size_;
  if (!expected_) {
    const auto c = HotspotCoefficients::of(n, n);
    std::vector<double> t(temp0_.begin(), temp0_.end()), next(t.size());
    for (std::size_t s = 0; s < iterations_; ++s) {
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t col = 0; col < n; ++col) {
          const std::size_t i = r * n + col;
          const double v = t[i], north = r == 0 ? v : t[i - n], south = r == n - 1 ? v : t[i + n];
          const double west = col == 0 ? v : t[i - 1], east = col == n - 1 ? v : t[i + 1];
          next[i] = v + double(c.step_div_cap) * (power_[i] + (south + north - 2 * v) * double(c.ry_inv) +
                                                   (east + west - 2 * v) * double(c.rx_inv) +
                                                   (double(c.amb) - v) * double(c.rz_inv));
        }
      t.swap(next);
    }
    expected_ = std::move(t);
  }
  Check c;
  c.tolerance = 8 * FLT_EPSILON * static_cast<double>(iterations_ + 1);
  c.measure = "max |temp - ref| / max |temp0|, ref in double precision";
  double scale = 1;
  for (float v : temp0_) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  std::size_t worst = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const double err = std::fabs(grid[i] - (*expected_)[i]) / scale;
    if (!(err <= c.max_error)) {
      c.max_error = err, worst = i;
      if (std::isnan(err)) break;
    }
  }
  c.ok = c.max_error <= c.tolerance;
  std::ostringstream s;
  if (c.ok) s << "OK";
  else s << "cell (" << worst % n << ", " << worst / n << "): got " << grid[worst] << ", expected " << (*expected_)[worst];
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
