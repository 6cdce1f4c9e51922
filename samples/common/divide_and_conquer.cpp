// samples/common/divide_and_conquer.cpp — the Mergesort and MaxSubarray descriptors:
// sinew::divide_and_conquer over samples/kernels/mergesort.cl and max_subarray.cl.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {
namespace {
// The skeleton indexes with 32-bit integers (sinew::divide_and_conquer).
std::size_t checked_elements(const std::string& sample, std::size_t n) {
  if (n == 0 || n > 0x7fffffffu)
    throw std::invalid_argument(sample + ": between 1 and 2^31-1 elements, not " + std::to_string(n));
  return n;
}
}  // namespace

// ----- mergesort -------------------------------------------------------------------------------

std::string Mergesort::description() const {
  return "Divide and conquer: mergesort of " + params.key + " keys in place (bitonic leaves of " +
         std::to_string(params.leaf_size) + ", " + std::to_string(params.fanout) + "-way parallel merges)";
}

std::size_t Mergesort::elements_for(std::size_t size) const {
  if (params.key != "uint" && params.key != "float")
    throw std::invalid_argument("mergesort: keys are uint or float, not '" + params.key + "'");
  // The bitonic leaf (kernels/mergesort.cl) sorts a power of two of keys; any other leaf size
  // would leave keys out of place.
  if (params.leaf_size == 0 || (params.leaf_size & (params.leaf_size - 1)) != 0)
    throw std::invalid_argument("mergesort: a leaf of " + std::to_string(params.leaf_size) +
                                " keys is not a power of two (the bitonic leaf sorts 2^k keys)");
  return checked_elements(name(), size ? size : params.elements);
}

// The keys, their original order (restored before every run) and std::sort's copy for the check.
std::uint64_t Mergesort::host_bytes(std::size_t size) const {
  return saturating_product({elements_for(size), 3 * sizeof(cl_uint)});
}

void Mergesort::prepare(std::size_t size) {
  const std::size_t n = elements_for(size);
  params.elements = n;
  reset_state(n);
  const bool floats = params.key == "float";
  auto leaf = samples::kernel("mergesort.cl", "sort_leaf")
                  .build_options(floats ? "-DSINEW_KEY_MAX=INFINITY" : "-DSINEW_KEY_MAX=UINT_MAX");
  auto merge = samples::kernel("mergesort.cl", "merge_runs");
  const DivideAndConquerSettings settings{.fanout = params.fanout, .leaf_size = params.leaf_size};
  if (floats) {
    float_v_ = sinew::vector<cl_float>().name("keys");
    tree_ = divide_and_conquer(float_v_, leaf, merge, settings);
  } else {
    uint_v_ = sinew::vector<cl_uint>().name("keys");
    tree_ = divide_and_conquer(uint_v_, leaf, merge, settings);
  }
  tree_.name(name());
  original_.resize(n);
  sorted_.clear();
  reference::Random rng(params.seed);
  for (auto& k : original_) {
    if (floats) {
      const float f = rng.uniform(-1e6f, 1e6f);
      std::memcpy(&k, &f, sizeof f);
    } else {
      k = static_cast<cl_uint>(rng.next() >> 32);
    }
  }
  keys_ = original_;
}

// Sorting is in place: every run starts from the original keys.
std::vector<Binding> Mergesort::bindings() {
  ran_ = true;
  keys_ = original_;
  if (params.key == "float")
    return {Binding(float_v_, std::span<cl_float>(reinterpret_cast<cl_float*>(keys_.data()), keys_.size()))};
  return {Binding(uint_v_, std::span<cl_uint>(keys_))};
}

Check Mergesort::compare() {
  Check c;
  c.measure = "keys that differ from std::sort's";
  // The reference is sorted once: a benchmark compares after many runs of the same keys.
  if (sorted_.size() != original_.size()) {
    sorted_ = original_;
    if (params.key == "float") {
      std::vector<cl_float> f(sorted_.size());
      std::memcpy(f.data(), sorted_.data(), f.size() * sizeof(cl_float));
      std::sort(f.begin(), f.end());
      std::memcpy(sorted_.data(), f.data(), f.size() * sizeof(cl_float));
    } else {
      std::sort(sorted_.begin(), sorted_.end());
    }
  }
  std::size_t bad = 0, first = keys_.size();
  auto check = [&](const auto* got, const auto* want) {
    for (std::size_t i = 0; i < sorted_.size(); ++i)
      if (!(got[i] == want[i]) && bad++ == 0) first = i;
  };
  // Floats compare as floats (-0 and +0 are equal keys; std::sort may order them either way).
  if (params.key == "float")
    check(reinterpret_cast<const cl_float*>(keys_.data()), reinterpret_cast<const cl_float*>(sorted_.data()));
  else
    check(keys_.data(), sorted_.data());
  c.max_error = static_cast<double>(bad);
  c.ok = bad == 0;
  std::ostringstream s;
  if (c.ok) s << "OK";
  else s << bad << " keys out of place, the first at " << first;
  c.message = s.str();
  return c;
}

// ----- max_subarray ----------------------------------------------------------------------------

std::string MaxSubarray::description() const {
  return "Divide and conquer: the maximum subarray sum of a float vector (summaries joined " +
         std::to_string(params.fanout) + " at a time)";
}

std::size_t MaxSubarray::elements_for(std::size_t size) const {
  return checked_elements(name(), size ? size : params.elements);
}

std::uint64_t MaxSubarray::host_bytes(std::size_t size) const {
  return saturating_product({elements_for(size), sizeof(cl_float) + sizeof(cl_float4)});
}

void MaxSubarray::prepare(std::size_t size) {
  const std::size_t n = elements_for(size);
  params.elements = n;
  reset_state(n);
  v_ = sinew::vector<cl_float4>().name("summaries");
  tree_ = divide_and_conquer(v_, samples::kernel("max_subarray.cl", "summarise_leaf"),
                             samples::kernel("max_subarray.cl", "join_runs"),
                             {.fanout = params.fanout, .leaf_size = params.leaf_size});
  tree_.name("max_subarray");
  x_.resize(n);
  reference::Random rng(params.seed);
  for (auto& v : x_) v = rng.uniform(-1, 0.98f);  // slightly negative on average: a real search
  summaries_.resize(n);
}

// Each run starts from one-element summaries (x, x, x, x).
std::vector<Binding> MaxSubarray::bindings() {
  ran_ = true;
  for (std::size_t i = 0; i < x_.size(); ++i) summaries_[i] = cl_float4{{x_[i], x_[i], x_[i], x_[i]}};
  return {Binding(v_, std::span<cl_float4>(summaries_))};
}

Check MaxSubarray::compare() {
  Check c;
  c.tolerance = 1e-4;
  c.measure = "|best - Kadane's in double| / the sum of |x|";
  double best = x_.front(), here = 0, magnitude = 0;
  for (float v : x_) {
    here = std::max<double>(v, here + v);
    best = std::max(best, here);
    magnitude += std::fabs(v);
  }
  const double got = summaries_.front().s[3];
  c.max_error = std::fabs(got - best) / (magnitude + 1e-30);
  c.ok = c.max_error <= c.tolerance;
  std::ostringstream s;
  if (c.ok) s << "OK";
  else s << "best " << got << ", expected " << best;
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
