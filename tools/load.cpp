// tools/load.cpp — the CPU load generator: threads solving random dense linear systems.
#include "load.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace sinew_tools {

bool solve_dense(std::vector<double>& a, std::vector<double>& b, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    // Partial pivoting: the largest |a(i,k)| below the diagonal, for stability.
    std::size_t p = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::fabs(a[i * n + k]) > std::fabs(a[p * n + k])) p = i;
    if (a[p * n + k] == 0.0) return false;
    if (p != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      std::swap(b[k], b[p]);
    }
    const double inv = 1.0 / a[k * n + k];
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = a[i * n + k] * inv;
      a[i * n + k] = f;
      for (std::size_t j = k + 1; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (std::size_t k = n; k-- > 0;) {
    double s = b[k];
    for (std::size_t j = k + 1; j < n; ++j) s -= a[k * n + j] * b[j];
    b[k] = s / a[k * n + k];
  }
  return true;
}

LoadGenerator::~LoadGenerator() { stop(); }

unsigned LoadGenerator::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

unsigned LoadGenerator::start(unsigned threads) {
  std::lock_guard lock(mutex_);
  if (!threads_.empty()) throw std::logic_error("the load generator is already running");
  if (threads == 0) threads = hardware_threads();
  stop_.store(false);
  solved_.store(0);
  threads_.reserve(threads);
  try {
    for (unsigned t = 0; t < threads; ++t) threads_.emplace_back([this, t] { work(t + 1); });
  } catch (...) {
    // Could not create them all: leave nothing running behind the exception.
    stop_.store(true);
    for (auto& th : threads_) th.join();
    threads_.clear();
    throw;
  }
  return threads;
}

std::uint64_t LoadGenerator::stop() {
  std::lock_guard lock(mutex_);
  if (threads_.empty()) return 0;
  stop_.store(true);
  for (auto& th : threads_) th.join();
  threads_.clear();
  return solved_.load();
}

bool LoadGenerator::running() const {
  std::lock_guard lock(mutex_);
  return !threads_.empty();
}

unsigned LoadGenerator::threads() const {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(threads_.size());
}

void LoadGenerator::work(unsigned seed) {
  constexpr std::size_t n = kOrder;
  std::vector<double> a(n * n), b(n);
  std::uint64_t state = 0x9e3779b97f4a7c15ull * seed;
  auto uniform = [&state] {  // xorshift64*: cheap next to the O(n^3) solve, in [-1, 1)
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<double>((state * 0x2545f4914f6cdd1dull) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  };
  while (!stop_.load(std::memory_order_relaxed)) {
    // A fresh diagonally dominant system each time, so it is never singular and never the same.
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) a[i * n + j] = uniform();
      a[i * n + i] += static_cast<double>(n);
      b[i] = uniform();
    }
    if (solve_dense(a, b, n)) {
      sink_.store(b[0], std::memory_order_relaxed);
      solved_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

}  // namespace sinew_tools
