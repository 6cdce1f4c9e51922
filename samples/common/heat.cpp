// samples/common/heat.cpp — the Heat descriptor (issue 17): a Jacobi loop over halo rows.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Heat::description() const {
  return "Loop of Jacobi heat sweeps (halo of 1 row, fixed-temperature edges) with a map_reduce max for "
         "convergence, partitioned by rows";
}

Kernel heat_sweep(const Vector<cl_float>& u, const Vector<cl_float>& unew, const Vector<cl_float>& rowdiff,
                  std::size_t n, float alpha, float wall) {
  // One work-group per row; its size a power of two (the kernel's tree reduction) dividing n, at
  // most 128: the NDRange is (n / ept, rows) with ept = n / group.
  std::size_t group = 1;
  while (group < 128 && n % (2 * group) == 0) group *= 2;
  // Boundary::constant, at the wall temperature: the plate's edges are held at a fixed
  // temperature (Dirichlet), the textbook Jacobi problem, and the kernel gives its left and right
  // edges the same wall, so all four edges follow one rule. (Boundary::clamp would make them
  // insulating instead: the same code, a different physics.)
  return sinew::samples::kernel("heat.cl", "heat_sweep")
      .args(sinew::halo(u, 1, 1, wall), sinew::out(unew), sinew::out(rowdiff), sinew::local<cl_float>(group),
            sinew::scalar(static_cast<cl_uint>(n)), sinew::scalar(alpha), sinew::scalar(wall))
      .range_of(unew)
      .dims(2)
      .elements_per_thread(n / group)
      .local_size({group, 1});
}

HeatError heat_error(std::span<const cl_float> u, std::span<const double> ref, std::span<const cl_float> u0,
                     float wall) {
  HeatError h;
  h.scale = std::fabs(wall);
  for (float v : u0) h.scale = std::max(h.scale, static_cast<double>(std::fabs(v)));
  if (h.scale == 0) h.scale = 1;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(u[i] - ref[i]) / h.scale;
    if (std::isnan(err)) {
      h.max = err;
      h.worst = i;
      break;
    }
    if (err > h.max) {
      h.max = err;
      h.worst = i;
    }
  }
  return h;
}

std::size_t Heat::default_iterations(std::size_t side) { return side <= 64 ? 100 : side <= 1024 ? 200 : 500; }

std::size_t Heat::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.side;
  // 3 cells: a row with both neighbours; 65535: n * n stays within the kernels' uint indices.
  if (n < 3 || n > 65535) throw std::invalid_argument("heat: a grid side from 3 to 65535, not " + std::to_string(n));
  if (!(params.alpha > 0 && params.alpha <= 0.25f))
    throw std::invalid_argument("heat: alpha in (0, 0.25] (larger sweeps are unstable), not " +
                                std::to_string(params.alpha));
  if (!std::isfinite(params.wall) || !(params.tolerance >= 0) || !std::isfinite(params.tolerance))
    throw std::invalid_argument("heat: the wall temperature and the tolerance must be finite, the tolerance >= 0");
  return n;
}

// The grid, its pristine copy, and the reference's two double grids.
std::uint64_t Heat::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({n, n, 2 * sizeof(cl_float) + 2 * sizeof(double)});
}

void Heat::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.side = n;
  reset_state(n);
  expected_.reset();
  max_iterations_ = params.iterations ? params.iterations : default_iterations(n);

  // A unit is one row: u and unew hold n floats per unit, rowdiff one.
  u_v_ = sinew::vector<cl_float>().unit(n).name("u");
  unew_v_ = sinew::vector<cl_float>().unit(n).name("unew");
  rowdiff_v_ = sinew::vector<cl_float>().name("rowdiff");
  residual_r_ = sinew::result<cl_float>("residual");
  auto sweep = heat_sweep(u_v_, unew_v_, rowdiff_v_, n, params.alpha, params.wall);
  const float tolerance = params.tolerance;
  auto sweeps = sweeps_;
  tree_ = sinew::loop(sinew::pipeline(sinew::map_reduce(sweep, sinew::reduce::max(rowdiff_v_, residual_r_)),
                                      sinew::copy(unew_v_, u_v_)))
              .times(max_iterations_)
              .until(residual_r_, [sweeps, tolerance](cl_float r) {
                // The predicate runs once after every sweep, the last one included.
                if (sweeps->count > 0 && (r > sweeps->last || r == sweeps->first)) sweeps->count = 0;
                if (sweeps->count == 0) sweeps->first = r;
                sweeps->last = r;
                ++sweeps->count;
                return r < tolerance;
              });

  u0_ = reference::hot_disc_plate(n, params.seed);
  u_.assign(n * n, 0.0f);
}

std::vector<Binding> Heat::bindings() {
  u_ = u0_;
  *sweeps_ = {};
  residual_ = -1;
  ran_ = true;
  return {Binding(u_v_, u_), Binding(residual_r_, &residual_)};
}

Check Heat::compare() {
  const std::size_t n = size_, iterations = sweeps_->count;
  Check c;
  c.tolerance = 8 * FLT_EPSILON * static_cast<double>(iterations + 1);
  c.measure = "max |u - ref| / max |u0| (and the same for the last sweep's max change), ref in double precision, "
              "for the iterations the devices ran";
  if (!expected_ || checked_iterations_ != iterations) {
    expected_ = std::vector<double>(u0_.begin(), u0_.end());
    reference::heat(*expected_, n, iterations, params.alpha, params.wall, expected_residuals_);
    checked_iterations_ = iterations;
  }
  const auto& e = *expected_;
  const auto [max_error, worst, scale] = heat_error(u_, e, u0_, params.wall);
  c.max_error = max_error;
  const double last_ref = iterations ? expected_residuals_.back() : 0;
  const double residual_error = std::fabs(residual_ - last_ref) / scale;
  std::ostringstream s;
  if (iterations == 0 || iterations > max_iterations_) {
    s << "the loop ran " << iterations << " sweeps, expected 1 to " << max_iterations_;
  } else if (std::isnan(c.max_error) || c.max_error > c.tolerance) {
    s << "cell (" << worst % n << ", " << worst / n << "): got " << u_[worst] << ", expected " << e[worst]
      << " after " << iterations << " sweeps";
  } else if (!(residual_error <= c.tolerance)) {
    c.max_error = residual_error;
    s << "the last sweep's max change is " << residual_ << ", expected " << last_ref;
  } else if (iterations < max_iterations_ && !(residual_ < params.tolerance)) {
    s << "the loop stopped after " << iterations << " sweeps with a change of " << residual_
      << ", not below the tolerance " << params.tolerance;
  } else if (iterations >= 2 && expected_residuals_[iterations - 2] < params.tolerance - c.tolerance * scale) {
    s << "the loop ran " << iterations << " sweeps though sweep " << iterations - 1 << " changed at most "
      << expected_residuals_[iterations - 2] << ", below the tolerance " << params.tolerance;
  } else {
    c.ok = true;
    s << "OK";
  }
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
