// samples/common/fft.cpp — the FFT descriptor (paper §4): a batch of clFFT transforms.
#include "common/descriptors.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {
namespace {
bool clfft_length(std::size_t n) {
  for (std::size_t p : {2, 3, 5, 7, 11, 13})
    while (n % p == 0) n /= p;
  return n == 1;
}
double modulus(const cl_float2& a) { return std::hypot(static_cast<double>(a.s[0]), static_cast<double>(a.s[1])); }
double distance(const cl_float2& a, const cl_float2& b) {
  return std::hypot(static_cast<double>(a.s[0]) - b.s[0], static_cast<double>(a.s[1]) - b.s[1]);
}
}  // namespace

std::string Fft::description() const {
  return params.roundtrip ? "Pipeline of a forward and an inverse batched FFT (clFFT), partitioned by transforms"
                          : "Forward batched FFT (clFFT), partitioned by transforms";
}

std::string Fft::size_unit() const {
  return "transforms of " + std::to_string(params.length) + " complex points (" +
         std::to_string(params.length * sizeof(cl_float2) / 1024) + " KB each)";
}

std::size_t Fft::transforms_for(std::size_t size) const {
  const std::size_t n = size ? size : params.transforms, len = params.length;
  if (n == 0) throw std::invalid_argument("fft: at least one transform is needed");
  if (len < 2 || !clfft_length(len))
    throw std::invalid_argument("fft: clFFT needs a length that is a product of 2, 3, 5, 7, 11 and 13, not " +
                                std::to_string(len));
  if (!params.roundtrip && (len & (len - 1)))
    throw std::invalid_argument("fft: the forward-only check needs a power-of-two length, not " + std::to_string(len));
  return n;
}

// The input and the bound signal, and the forward-only reference.
std::uint64_t Fft::host_bytes(std::size_t size) const {
  return saturating_product({params.roundtrip ? 2u : 3u, transforms_for(size), params.length, sizeof(cl_float2)});
}

void Fft::prepare(std::size_t size) {
  const std::size_t n = transforms_for(size), len = params.length;
  params.transforms = n;
  reset_state(n);
  expected_.reset();

  // One transform per unit: the decomposition hands each device whole transforms.
  vec_ = sinew::vector<cl_float2>().unit(len).name("signal");
  if (params.roundtrip)
    tree_ = sinew::pipeline(sinew::fft(vec_, FftDirection::forward), sinew::fft(vec_, FftDirection::inverse));
  else
    tree_ = sinew::fft(vec_, FftDirection::forward);

  reference::Random rng(0xff7);
  input_.resize(n * len);
  for (auto& c : input_) c = cl_float2{{rng.uniform(-1.0f, 1.0f), rng.uniform(-1.0f, 1.0f)}};
  data_.assign(input_.size(), cl_float2{});
}

std::vector<Binding> Fft::bindings() {
  data_ = input_;
  ran_ = true;
  return {Binding(vec_, data_)};
}

Check Fft::compare() {
  const std::vector<cl_float2>* want = &input_;
  Check c;
  if (params.roundtrip) {
    c.tolerance = 1e-3;
    c.measure = "max |out - in| / max |in| after forward + inverse";
  } else {
    if (!expected_) {
      expected_ = input_;
      reference::fft(*expected_, params.length, false);
    }
    want = &*expected_;
    c.tolerance = 1e-4;
    c.measure = "max |out - ref| / max |ref| against a double-precision FFT";
  }
  double scale = 0, worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < data_.size(); ++i) {
    scale = std::max(scale, modulus((*want)[i]));
    const double d = distance(data_[i], (*want)[i]);
    if (std::isnan(d)) {
      worst = d;
      worst_at = i;
      break;
    }
    if (d > worst) {
      worst = d;
      worst_at = i;
    }
  }
  c.max_error = scale > 0 ? worst / scale : worst;
  c.ok = c.max_error <= c.tolerance;  // false for NaN
  if (c.ok) {
    c.message = "OK";
  } else {
    std::ostringstream s;
    const auto& g = data_[worst_at];
    const auto& w = (*want)[worst_at];
    s << "transform " << worst_at / params.length << " point " << worst_at % params.length << ": got (" << g.s[0]
      << ", " << g.s[1] << "), expected (" << w.s[0] << ", " << w.s[1] << "); relative error " << c.max_error;
    c.message = s.str();
  }
  return c;
}

}  // namespace sinew::samples
