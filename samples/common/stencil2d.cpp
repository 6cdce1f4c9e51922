// samples/common/stencil2d.cpp — the Stencil2d descriptor (issue 18): Tascell's 5-point 2D
// stencil as one-sweep runs whose partitions are independent, for the dynamic schedule.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Stencil2d::description() const {
  return "5-point 2D stencil (Jacobi heat sweeps, fixed-temperature edges): each sweep one run of a tree reading "
         "the grid with a halo of 1 row and writing the other grid, partitioned by rows (independent partitions: "
         "schedule=dynamic deals the rows out)";
}

std::size_t Stencil2d::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.side;
  if (n < 3 || n > 65535)
    throw std::invalid_argument("stencil2d: a grid side from 3 to 65535, not " + std::to_string(n));
  if (params.sweeps < 1 || params.sweeps > 1000000)
    throw std::invalid_argument("stencil2d: 1 to 1000000 sweeps, not " + std::to_string(params.sweeps));
  if (!(params.alpha > 0 && params.alpha <= 0.25f))
    throw std::invalid_argument("stencil2d: alpha in (0, 0.25] (larger sweeps are unstable), not " +
                                std::to_string(params.alpha));
  if (!std::isfinite(params.wall)) throw std::invalid_argument("stencil2d: the wall temperature must be finite");
  return n;
}

// The two grids, the starting plate, and the reference's double grid.
std::uint64_t Stencil2d::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({n, n, 3 * sizeof(cl_float) + sizeof(double)});
}

void Stencil2d::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.side = n;
  reset_state(n);
  expected_.reset();
  u_v_ = sinew::vector<cl_float>().unit(n).name("u");
  unew_v_ = sinew::vector<cl_float>().unit(n).name("unew");
  rowdiff_v_ = sinew::vector<cl_float>().name("rowdiff");
  residual_r_ = sinew::result<cl_float>("residual");
  auto sweep = heat_sweep(u_v_, unew_v_, rowdiff_v_, n, params.alpha, params.wall);
  tree_ = sinew::map_reduce(sweep, sinew::reduce::max(rowdiff_v_, residual_r_)).name("stencil2d");
  u0_ = reference::hot_disc_plate(n, params.seed);
  a_.assign(n * n, 0.0f);
  b_.assign(n * n, 0.0f);
}

std::vector<Binding> Stencil2d::sweep_bindings(std::size_t sweep) {
  std::vector<cl_float>& from = sweep % 2 ? b_ : a_;
  std::vector<cl_float>& to = sweep % 2 ? a_ : b_;
  return {Binding(u_v_, from), Binding(unew_v_, to), Binding(residual_r_, &residual_)};
}

std::vector<Binding> Stencil2d::bindings() {
  a_ = u0_;
  std::fill(b_.begin(), b_.end(), -1.0f);  // poison: every cell is written
  residual_ = -1;
  swept_ = 1;  // a run a caller submits with these bindings sweeps once (run() counts its own)
  ran_ = true;
  return sweep_bindings(0);
}

Report Stencil2d::run(Runtime& rt, const RunOptions& options) {
  if (tree_.empty()) throw std::logic_error(name() + ": run() before prepare()");
  Report last = rt.execute(tree_, bindings(), options);
  double wall = last.wall_ms;
  swept_ = 1;
  for (; swept_ < params.sweeps; ++swept_) {
    last = rt.execute(tree_, sweep_bindings(swept_), options);
    wall += last.wall_ms;
  }
  last.wall_ms = wall;
  return last;
}

Check Stencil2d::compare() {
  const std::size_t n = size_;
  Check c;
  c.tolerance = 8 * FLT_EPSILON * static_cast<double>(swept_ + 1);
  c.measure = "max |u - ref| / max |u0| (and the same for the last sweep's max change), ref in double precision";
  if (!expected_ || checked_sweeps_ != swept_) {
    expected_ = std::vector<double>(u0_.begin(), u0_.end());
    reference::heat(*expected_, n, swept_, params.alpha, params.wall, expected_residuals_);
    checked_sweeps_ = swept_;
  }
  const auto& e = *expected_;
  const auto& u = output();
  const auto [max_error, worst, scale] = heat_error(u, e, u0_, params.wall);
  c.max_error = max_error;
  const double residual_error = swept_ ? std::fabs(residual_ - expected_residuals_.back()) / scale : 0;
  std::ostringstream s;
  if (swept_ != params.sweeps) {
    s << "ran " << swept_ << " sweeps, expected " << params.sweeps;
  } else if (std::isnan(c.max_error) || c.max_error > c.tolerance) {
    s << "cell (" << worst % n << ", " << worst / n << "): got " << u[worst] << ", expected " << e[worst] << " after "
      << swept_ << " sweeps";
  } else if (!(residual_error <= c.tolerance)) {
    c.max_error = residual_error;
    s << "the last sweep's max change is " << residual_ << ", expected " << expected_residuals_.back();
  } else {
    c.ok = true;
    s << "OK (" << swept_ << " sweeps, last max change " << residual_ << ")";
  }
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
