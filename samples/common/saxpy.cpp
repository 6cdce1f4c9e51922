// samples/common/saxpy.cpp — the Saxpy descriptor (paper §4): y = a*x + y as a Map.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <cfloat>
#include <cmath>
#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Saxpy::name() const { return params.mode == "blas" ? "saxpy_blas" : "saxpy"; }

std::string Saxpy::description() const {
  return params.mode == "blas" ? "Map of CLBlast's saxpy (y = a*x + y), partitioned by elements"
                               : "Map of a saxpy kernel (y = a*x + y), partitioned by elements";
}

std::size_t Saxpy::elements_for(std::size_t size) const {
  const std::size_t n = size ? size : params.elements;
  if (n == 0 || n > 0xffffffffu) throw std::invalid_argument("saxpy: between 1 and 2^32-1 elements, not " + std::to_string(n));
  if (params.mode != "kernel" && params.mode != "blas")
    throw std::invalid_argument("saxpy: mode is 'kernel' or 'blas', not '" + params.mode + "'");
  return n;
}

// x, y and the pristine y each run starts from (pinned or not, all of it host memory).
std::uint64_t Saxpy::host_bytes(std::size_t size) const {
  return saturating_product({3, elements_for(size), sizeof(cl_float)});
}

void Saxpy::prepare(std::size_t size) {
  const std::size_t n = elements_for(size);
  params.elements = n;
  reset_state(n);

  x_v_ = sinew::vector<cl_float>().name("x");
  y_v_ = sinew::vector<cl_float>().name("y");
  if (params.mode == "blas") {
    tree_ = sinew::map(sinew::blas::axpy(params.a, x_v_, y_v_));
  } else {
    tree_ = sinew::map(sinew::samples::kernel("saxpy.cl", "saxpy")
                           .args(sinew::in(x_v_), sinew::inout(y_v_), sinew::scalar(params.a), sinew::count(y_v_)));
  }

  if (pinned_from_) {
    x_pin_ = pinned_from_->pinned<cl_float>(n);
    y_pin_ = pinned_from_->pinned<cl_float>(n);
    x_vec_ = {};
    y_vec_ = {};
    x_ = x_pin_;
    y_ = y_pin_;
  } else {
    x_vec_.assign(n, 0.0f);
    y_vec_.assign(n, 0.0f);
    x_ = x_vec_;
    y_ = y_vec_;
  }
  reference::Random rng(params.seed);
  y0_.resize(n);
  for (auto& v : x_) v = rng.uniform(-1, 1);
  for (auto& v : y0_) v = rng.uniform(-1, 1);
}

std::vector<Binding> Saxpy::bindings() {
  std::copy(y0_.begin(), y0_.end(), y_.begin());
  ran_ = true;
  return {Binding(x_v_, std::span<const cl_float>(x_)), Binding(y_v_, y_)};
}

Check Saxpy::compare() {
  Check c;
  c.tolerance = 4 * FLT_EPSILON;
  c.measure = "max |y - ref| / (|a*x| + |y0|), ref = fma(a, x, y0)";
  std::size_t worst = 0;
  for (std::size_t i = 0; i < y_.size(); ++i) {
    const float want = std::fma(params.a, x_[i], y0_[i]);
    const double scale = std::fabs(static_cast<double>(params.a) * x_[i]) + std::fabs(y0_[i]) + 1e-30;
    const double e = std::fabs(static_cast<double>(y_[i]) - want) / scale;
    if (std::isnan(e)) {
      c.max_error = e;
      worst = i;
      break;
    }
    if (e > c.max_error) {
      c.max_error = e;
      worst = i;
    }
  }
  c.ok = c.max_error <= c.tolerance;
  std::ostringstream s;
  if (c.ok)
    s << "OK";
  else
    s << "element " << worst << ": got " << y_[worst] << ", expected " << std::fma(params.a, x_[worst], y0_[worst])
      << "; relative error " << c.max_error;
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
