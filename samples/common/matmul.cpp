// samples/common/matmul.cpp — the matmul descriptor (issue 18): blocks of rows through CLBlast's
// gemm, one Tascell workload for the dynamic schedule.
#include "common/descriptors.hpp"
#include "common/reference.hpp"

#include <cfloat>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Matmul::description() const {
  return "C = A * B of N x N floats with CLBlast's gemm, A and C partitioned by rows (B whole on every device)";
}

std::size_t Matmul::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.n;
  if (n < 1 || n > 16384) throw std::invalid_argument("matmul: a matrix side from 1 to 16384, not " + std::to_string(n));
  return n;
}

// A, B, C, and the reference's product and magnitudes (doubles).
std::uint64_t Matmul::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({3 * sizeof(cl_float) + 2 * sizeof(double), n, n});
}

void Matmul::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.n = n;
  reset_state(n);
  expected_.reset();
  magnitude_.reset();
  a_v_ = sinew::vector<cl_float>().unit(n).name("A");
  b_v_ = sinew::vector<cl_float>().name("B");
  c_v_ = sinew::vector<cl_float>().unit(n).name("C");
  tree_ = sinew::blas::gemm(1.0f, a_v_, b_v_, 0.0f, c_v_, n, n);
  reference::Random rng(params.seed);
  a_.resize(n * n);
  b_.resize(n * n);
  for (auto& x : a_) x = rng.uniform(-1, 1);
  for (auto& x : b_) x = rng.uniform(-1, 1);
  c_.assign(n * n, 0);
}

std::vector<Binding> Matmul::bindings() {
  std::fill(c_.begin(), c_.end(), std::nanf(""));
  ran_ = true;
  return {Binding(a_v_, std::span<const cl_float>(a_)), Binding(b_v_, std::span<const cl_float>(b_)), Binding(c_v_, c_)};
}

Check Matmul::compare() { return check_product(size_, a_, b_, c_, expected_, magnitude_); }

Check check_product(std::size_t n, const std::vector<cl_float>& a, const std::vector<cl_float>& b,
                    const std::vector<cl_float>& c, std::optional<std::vector<double>>& expected,
                    std::optional<std::vector<double>>& magnitude) {
  if (!expected) {
    expected = std::vector<double>(n * n, 0.0);
    magnitude = std::vector<double>(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double aij = a[i * n + j];
        for (std::size_t k = 0; k < n; ++k) {
          (*expected)[i * n + k] += aij * b[j * n + k];
          (*magnitude)[i * n + k] += std::fabs(aij * b[j * n + k]);
        }
      }
  }
  Check check;
  check.measure = "max |got - ref| / (2 n FLT_EPSILON sum |a b|)";
  check.tolerance = 1;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double bound = 2.0 * static_cast<double>(n) * FLT_EPSILON * (*magnitude)[i] + 1e-30;
    const double e = std::isfinite(c[i]) ? std::fabs(c[i] - (*expected)[i]) / bound : INFINITY;
    if (!(e <= check.max_error)) {
      check.max_error = e;
      worst = i;
    }
  }
  std::ostringstream s;
  if (check.max_error > check.tolerance) {
    s << "C(" << worst / n << ", " << worst % n << ") = " << c[worst] << ", expected " << (*expected)[worst];
  } else {
    check.ok = true;
    s << "OK";
  }
  check.message = s.str();
  return check;
}

}  // namespace sinew::samples
