// samples/common/periodic.cpp — the Periodic descriptor (issue 40): two kernels per time step, the
// second of which runs whole (Kernel::whole_range) between the split steps of the first.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Periodic::description() const {
  return "Diffusion on a grid periodic in y, two kernels a step: the interior rows' stencil (global_indices, halo "
         "of 1 row), split by the plan, and the ghost rows refreshed from the opposite edge (whole_range: one "
         "partition on the plan's whole device, the grid gathered and scattered back)";
}

std::size_t Periodic::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.side;
  if (n < 4 || n > 65535) throw std::invalid_argument("periodic: a grid side from 4 to 65535, not " + std::to_string(n));
  if (params.steps < 1 || params.steps > 1000000)
    throw std::invalid_argument("periodic: 1 to 1000000 steps, not " + std::to_string(params.steps));
  if (!(params.k > 0 && params.k <= 0.25f))
    throw std::invalid_argument("periodic: k in (0, 0.25] (larger steps are unstable), not " + std::to_string(params.k));
  return n;
}

std::uint64_t Periodic::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({n, n, 2 * sizeof(cl_float) + sizeof(double)});
}

void Periodic::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.side = n;
  reset_state(n);
  expected_.reset();
  u_v_ = sinew::vector<cl_float>().unit(n).name("u");
  next_v_ = sinew::vector<cl_float>().unit(n).name("next");
  const auto side = static_cast<cl_uint>(n);
  auto diffuse = sinew::samples::kernel("periodic.cl", "diffuse")
                     .args(sinew::halo(u_v_, 1, 1), sinew::out(next_v_), sinew::scalar(side), sinew::scalar(side),
                           sinew::scalar(params.k))
                     .dims(2)
                     .global_indices();
  auto wrap = sinew::samples::kernel("periodic.cl", "wrap")
                  .args(sinew::inout(next_v_), sinew::scalar(side), sinew::scalar(side))
                  .dims(2)
                  .whole_range();
  tree_ = sinew::loop(sinew::pipeline(diffuse, wrap, sinew::copy(next_v_, u_v_))).times(params.steps).name("periodic");
  u0_ = reference::hot_disc_plate(n, params.seed);
  u_.assign(n * n, 0.0f);
}

std::vector<Binding> Periodic::bindings() {
  u_ = u0_;
  ran_ = true;
  return {Binding(u_v_, u_)};
}

Check Periodic::compare() {
  const std::size_t n = size_;
  if (!expected_) {
    std::vector<double> u(u0_.begin(), u0_.end()), next(u.size());
    const double k = params.k;
    for (std::size_t s = 0; s < params.steps; ++s) {
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c) {
          const std::size_t i = r * n + c;
          if (r == 0 || r == n - 1) {
            next[i] = u[i];
            continue;
          }
          const double w = c == 0 ? u[i + n - 1] : u[i - 1], e = c == n - 1 ? u[i + 1 - n] : u[i + 1];
          next[i] = u[i] + k * (u[i - n] + u[i + n] + w + e - 4 * u[i]);
        }
      for (std::size_t c = 0; c < n; ++c) next[c] = next[(n - 2) * n + c], next[(n - 1) * n + c] = next[n + c];
      u.swap(next);
    }
    expected_ = std::move(u);
  }
  Check c;
  c.tolerance = 8 * FLT_EPSILON * static_cast<double>(params.steps + 1);
  c.measure = "max |u - ref| / max |u0|, ref in double precision";
  double scale = 1;
  for (float v : u0_) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  std::size_t worst = 0;
  for (std::size_t i = 0; i < u_.size(); ++i) {
    const double err = std::fabs(u_[i] - (*expected_)[i]) / scale;
    if (!(err <= c.max_error)) {
      c.max_error = err, worst = i;
      if (std::isnan(err)) break;
    }
  }
  c.ok = c.max_error <= c.tolerance;
  std::ostringstream s;
  if (c.ok) s << "OK";
  else s << "cell (" << worst % n << ", " << worst / n << "): got " << u_[worst] << ", expected " << (*expected_)[worst];
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
