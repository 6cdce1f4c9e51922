// samples/common/nbody.cpp — the N-Body descriptor (paper §4): a Loop of direct-sum steps.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {
namespace {
double norm3(double x, double y, double z) { return std::sqrt(x * x + y * y + z * z); }
double diff3(const cl_float4& a, const cl_float4& b) {
  return norm3(static_cast<double>(a.s[0]) - b.s[0], static_cast<double>(a.s[1]) - b.s[1],
               static_cast<double>(a.s[2]) - b.s[2]);
}
}  // namespace

std::string Nbody::description() const {
  return "Loop of direct-sum N-Body steps; positions replicated to every device, bodies partitioned";
}

std::size_t Nbody::bodies_for(std::size_t size) const {
  const std::size_t n = size ? size : params.bodies;
  if (n < 2 || n > (1u << 30)) throw std::invalid_argument("nbody: between 2 and 2^30 bodies, not " + std::to_string(n));
  if (params.steps == 0) throw std::invalid_argument("nbody: at least one step");
  return n;
}

// Initial positions and velocities, the bound ones, and the reference's.
std::uint64_t Nbody::host_bytes(std::size_t size) const {
  return saturating_product({6, bodies_for(size), sizeof(cl_float4)});
}

void Nbody::prepare(std::size_t size) {
  const std::size_t n = bodies_for(size);
  params.bodies = n;
  reset_state(n);
  expected_pos_.reset();
  expected_vel_.reset();

  // A unit is one body. Every device reads all positions (whole) and writes its bodies' new
  // positions to `newpos`; copy(newpos, pos) then updates the replicated positions.
  pos_v_ = sinew::vector<cl_float4>().name("pos");
  vel_v_ = sinew::vector<cl_float4>().name("vel");
  newpos_v_ = sinew::vector<cl_float4>().name("newpos");
  const float eps2 = params.softening * params.softening;
  auto step = sinew::samples::kernel("nbody.cl", "nbody_step")
                  .args(sinew::whole(pos_v_), sinew::inout(vel_v_), sinew::out(newpos_v_), sinew::offset(vel_v_),
                        sinew::count(vel_v_), sinew::size(pos_v_), sinew::scalar(params.dt), sinew::scalar(eps2));
  tree_ = sinew::loop(sinew::pipeline(step, sinew::copy(newpos_v_, pos_v_))).times(params.steps);

  // Bodies at rest, uniformly in the unit ball, total mass 1: every motion comes from the forces.
  reference::Random rng(params.seed);
  pos0_.resize(n);
  for (auto& p : pos0_) {
    float x, y, z;
    do {
      x = rng.uniform(-1, 1);
      y = rng.uniform(-1, 1);
      z = rng.uniform(-1, 1);
    } while (x * x + y * y + z * z > 1.0f);
    p = cl_float4{{x, y, z, 1.0f / static_cast<float>(n)}};
  }
  vel0_.assign(n, cl_float4{{0, 0, 0, 0}});
  pos_.assign(n, cl_float4{});
  vel_.assign(n, cl_float4{});
}

std::vector<Binding> Nbody::bindings() {
  pos_ = pos0_;
  vel_ = vel0_;
  ran_ = true;
  return {Binding(pos_v_, pos_), Binding(vel_v_, vel_)};
}

Check Nbody::compare() {
  if (!expected_pos_) {
    expected_pos_ = pos0_;
    expected_vel_ = vel0_;
    reference::nbody(*expected_pos_, *expected_vel_, params.steps, params.dt,
                     static_cast<double>(params.softening) * params.softening);
  }
  const auto& ep = *expected_pos_;
  const auto& ev = *expected_vel_;
  double moved = 0, speed = 0, extent = 0, pos_err = 0, vel_err = 0;
  std::size_t worst = 0, mass_changed = ep.size();
  for (std::size_t i = 0; i < ep.size(); ++i) {
    moved = std::max(moved, diff3(ep[i], pos0_[i]));
    extent = std::max(extent, diff3(ep[i], cl_float4{}));
    speed = std::max(speed, diff3(ev[i], cl_float4{}));
    const double pe = diff3(pos_[i], ep[i]), ve = diff3(vel_[i], ev[i]);
    if (std::isnan(pe) || std::isnan(ve)) {
      pos_err = vel_err = pe + ve;
      worst = i;
      break;
    }
    if (pe > pos_err) {
      pos_err = pe;
      worst = i;
    }
    vel_err = std::max(vel_err, ve);
    if (pos_[i].s[3] != pos0_[i].s[3] && mass_changed == ep.size()) mass_changed = i;
  }
  Check c;
  c.tolerance = 1e-3;
  c.measure =
      "max(max |pos - ref| / (max displacement + steps * FLT_EPSILON * max |pos| / tolerance), "
      "max |vel - ref| / max speed), ref in double precision";
  // Positions are stored in float: each step may round them by FLT_EPSILON * |pos|, an error that
  // says nothing about the forces. It is allowed on top of tolerance * displacement, or bodies that
  // barely move (few steps, small dt) would fail on rounding alone.
  const double pos_scale = moved + static_cast<double>(params.steps) * FLT_EPSILON * extent / c.tolerance;
  c.max_error = std::max(pos_scale > 0 ? pos_err / pos_scale : pos_err, speed > 0 ? vel_err / speed : vel_err);
  if (std::isnan(pos_err)) c.max_error = pos_err;
  c.ok = c.max_error <= c.tolerance && mass_changed == ep.size();
  std::ostringstream s;
  if (c.ok) {
    s << "OK";
  } else if (mass_changed != ep.size()) {
    s << "body " << mass_changed << ": mass changed from " << pos0_[mass_changed].s[3] << " to "
      << pos_[mass_changed].s[3];
  } else {
    s << "body " << worst << ": position (" << pos_[worst].s[0] << ", " << pos_[worst].s[1] << ", " << pos_[worst].s[2]
      << "), expected (" << ep[worst].s[0] << ", " << ep[worst].s[1] << ", " << ep[worst].s[2]
      << "); relative error " << c.max_error;
  }
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
