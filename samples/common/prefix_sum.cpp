// samples/common/prefix_sum.cpp — the PrefixSum descriptor: sinew::scan of a float vector.
#include "common/descriptors.hpp"
#include "common/reference.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string PrefixSum::description() const {
  return std::string("Scan: the ") + (params.exclusive ? "exclusive" : "inclusive") +
         " prefix sum of a float vector into a second one, partitioned by elements";
}

std::size_t PrefixSum::elements_for(std::size_t size) const {
  const std::size_t n = size ? size : params.elements;
  // The scan indexes a slice with 32-bit integers; a partition may hold the whole vector.
  if (n == 0 || n > 0x7fffffffu)
    throw std::invalid_argument("prefix_sum: between 1 and 2^31-1 elements, not " + std::to_string(n));
  return n;
}

// x, y, and the reference's sums and magnitudes in double (computed on the first check).
std::uint64_t PrefixSum::host_bytes(std::size_t size) const {
  const std::uint64_t n = elements_for(size);
  return saturating_product({n, 2 * sizeof(cl_float) + 2 * sizeof(double)});
}

void PrefixSum::prepare(std::size_t size) {
  const std::size_t n = elements_for(size);
  params.elements = n;
  reset_state(n);
  x_v_ = sinew::vector<cl_float>().name("x");
  y_v_ = sinew::vector<cl_float>().name("y");
  tree_ = sinew::scan(x_v_, y_v_, sinew::scan_op::sum(),
                      params.exclusive ? sinew::ScanKind::exclusive : sinew::ScanKind::inclusive);
  x_.resize(n);
  y_.assign(n, 0.0f);
  reference::Random rng(params.seed);
  for (auto& v : x_) v = rng.uniform(-1, 1);
}

// x is only read: every run starts from the same input, nothing to restore.
std::vector<Binding> PrefixSum::bindings() {
  ran_ = true;
  return {Binding(x_v_, std::span<const cl_float>(x_)), Binding(y_v_, std::span<cl_float>(y_))};
}

Check PrefixSum::compare() {
  Check c;
  c.tolerance = 1e-5;
  c.measure = "max |y - ref| / sum of |x| over the elements combined, ref in double";
  std::vector<double> sums, magnitudes;
  reference::prefix_sum(x_, params.exclusive, sums, magnitudes);
  std::size_t worst = 0;
  for (std::size_t i = 0; i < y_.size(); ++i) {
    const double e = std::fabs(static_cast<double>(y_[i]) - sums[i]) / (magnitudes[i] + 1e-30);
    if (std::isnan(e) || e > c.max_error) {
      c.max_error = e;
      worst = i;
      if (std::isnan(e)) break;
    }
  }
  c.ok = c.max_error <= c.tolerance;
  std::ostringstream s;
  if (c.ok)
    s << "OK";
  else
    s << "element " << worst << ": got " << y_[worst] << ", expected " << sums[worst] << "; relative error "
      << c.max_error;
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
