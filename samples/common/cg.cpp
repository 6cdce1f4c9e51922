// samples/common/cg.cpp — conjugate gradient as one loop tree (see cg.hpp).
#include "common/cg.hpp"

#include "common/kernels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>

namespace sinew::samples {

CsrMatrix poisson_2d(std::size_t side) {
  if (side < 2 || side > 46340) throw std::invalid_argument("cg: a grid side from 2 to 46340");
  CsrMatrix a;
  a.rows = side * side;
  a.row_start.reserve(a.rows + 1);
  a.row_start.push_back(0);
  for (std::size_t y = 0; y < side; ++y)
    for (std::size_t x = 0; x < side; ++x) {
      const auto at = static_cast<cl_int>(y * side + x);
      auto entry = [&](cl_int column, cl_float value) {
        a.columns.push_back(column);
        a.values.push_back(value);
      };
      if (y > 0) entry(at - static_cast<cl_int>(side), -1.0f);
      if (x > 0) entry(at - 1, -1.0f);
      entry(at, 4.0f);
      if (x + 1 < side) entry(at + 1, -1.0f);
      if (y + 1 < side) entry(at + static_cast<cl_int>(side), -1.0f);
      a.row_start.push_back(static_cast<cl_int>(a.columns.size()));
    }
  return a;
}

ConjugateGradient::ConjugateGradient(float tolerance, std::size_t max_iterations)
    : tolerance_(tolerance), max_iterations_(max_iterations), stop_below_(std::make_shared<float>(0.0f)) {
  if (max_iterations == 0) throw std::invalid_argument("cg: at least one iteration");
  row_start_ = sinew::vector<cl_int>().name("row_start");
  columns_ = sinew::vector<cl_int>().name("columns");
  values_ = sinew::vector<cl_float>().name("values");
  x_ = sinew::vector<cl_float>().name("x");
  r_ = sinew::vector<cl_float>().name("r");
  p_ = sinew::vector<cl_float>().name("p");
  ap_ = sinew::vector<cl_float>().name("ap");
  squares_ = sinew::vector<cl_float>().name("squares");
  terms_ = sinew::vector<cl_float2>().name("terms");
  dots_ = sinew::result<cl_float2>("dots");
  rr_ = sinew::result<cl_float>("rr");

  auto spmv = kernel("cg.cl", "cg_spmv")
                  .args(whole(row_start_), whole(columns_), whole(values_), whole(p_), out(ap_), offset(ap_),
                        count(ap_));
  auto dots = map_reduce(kernel("cg.cl", "cg_dots").args(in(p_), in(ap_), in(r_), out(terms_)),
                         reduce::sum(terms_, dots_));
  auto update_xr = map_reduce(
      kernel("cg.cl", "cg_update_xr").args(inout(x_), inout(r_), in(p_), in(ap_), out(squares_), value(dots_)),
      reduce::sum(squares_, rr_));
  auto update_p = kernel("cg.cl", "cg_update_p").args(inout(p_), in(r_), value(rr_), value(dots_));
  auto stop_below = stop_below_;
  tree_ = loop(pipeline(spmv, dots, update_xr, update_p))
              .times(max_iterations_)
              .until(rr_, [stop_below](cl_float rr) { return rr <= *stop_below; })
              .name("cg");
}

std::vector<Binding> ConjugateGradient::bind(const CsrMatrix& a, const std::vector<cl_float>& b,
                                             std::vector<cl_float>& x) {
  if (b.size() != a.rows) throw std::invalid_argument("cg: b has another size than the matrix");
  double bb = 0;
  for (float v : b) bb += static_cast<double>(v) * v;
  *stop_below_ = static_cast<float>(static_cast<double>(tolerance_) * tolerance_ * bb);
  x.assign(a.rows, 0.0f);
  r_host_ = b;
  p_host_ = b;
  rr_host_ = static_cast<cl_float>(bb);
  return {Binding(row_start_, a.row_start), Binding(columns_, a.columns), Binding(values_, a.values),
          Binding(x_, x), Binding(r_, r_host_), Binding(p_, p_host_), Binding(rr_, &rr_host_)};
}

ConjugateGradient::Solution ConjugateGradient::solve(Runtime& rt, const CsrMatrix& a, const std::vector<cl_float>& b,
                                                     std::vector<cl_float>& x, const RunOptions& options) {
  Solution s;
  s.report = rt.run(tree_, bind(a, b, x), options).get();
  s.iterations = s.report.iterations;
  s.residual_norm = std::sqrt(rr_host_);
  return s;
}

ConjugateGradient::Solution ConjugateGradient::execute(Runtime& rt, const CsrMatrix& a,
                                                       const std::vector<cl_float>& b, std::vector<cl_float>& x,
                                                       const RunOptions& options) {
  Solution s;
  s.report = rt.execute(tree_, bind(a, b, x), options);
  s.iterations = s.report.iterations;
  s.residual_norm = std::sqrt(rr_host_);
  return s;
}

std::vector<cl_float> cg_right_hand_side(std::size_t rows) {
  std::vector<cl_float> b(rows);
  for (std::size_t i = 0; i < rows; ++i)
    b[i] = static_cast<cl_float>(1.0 + std::sin(0.001 * static_cast<double>(i)) + (i % 97 == 0 ? 5.0 : 0.0));
  return b;
}

double cg_accepted_residual(double tolerance, std::size_t side) {
  const double condition = 0.5 * static_cast<double>(side + 1) * static_cast<double>(side + 1);
  return 4 * std::max(tolerance, static_cast<double>(FLT_EPSILON) * condition);
}

namespace {
std::vector<double> product(const CsrMatrix& a, const std::vector<double>& v) {
  std::vector<double> out(a.rows);
  for (std::size_t i = 0; i < a.rows; ++i) {
    double sum = 0;
    for (auto k = a.row_start[i]; k < a.row_start[i + 1]; ++k) sum += a.values[k] * v[a.columns[k]];
    out[i] = sum;
  }
  return out;
}
double dot(const std::vector<double>& u, const std::vector<double>& v) {
  double sum = 0;
  for (std::size_t i = 0; i < u.size(); ++i) sum += u[i] * v[i];
  return sum;
}
}  // namespace

double relative_residual(const CsrMatrix& a, const std::vector<cl_float>& b, const std::vector<cl_float>& x) {
  return relative_residual(a, b, std::vector<double>(x.begin(), x.end()));
}

double relative_residual(const CsrMatrix& a, const std::vector<cl_float>& b, const std::vector<double>& x) {
  const auto ax = product(a, x);
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < a.rows; ++i) {
    rr += (b[i] - ax[i]) * (b[i] - ax[i]);
    bb += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(rr / bb);
}

std::vector<double> reference_cg(const CsrMatrix& a, const std::vector<cl_float>& b, double tolerance,
                                 std::size_t max_iterations, std::size_t& iterations) {
  std::vector<double> x(a.rows, 0.0), r(b.begin(), b.end()), p = r;
  const double stop = tolerance * tolerance * dot(r, r);
  for (iterations = 0; iterations < max_iterations;) {
    const auto ap = product(a, p);
    const double rr = dot(r, r), alpha = rr / dot(p, ap);
    for (std::size_t i = 0; i < a.rows; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    const double rr_new = dot(r, r);
    for (std::size_t i = 0; i < a.rows; ++i) p[i] = r[i] + rr_new / rr * p[i];
    ++iterations;
    if (rr_new <= stop) break;
  }
  return x;
}

}  // namespace sinew::samples
