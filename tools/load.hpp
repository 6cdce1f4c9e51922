// tools/load.hpp — a CPU load generator: busy threads that solve dense linear systems until told to
// stop. It is the "application that spawns as many software threads as available hardware
// threads, each running a computationally heavy algebraic problem" of the spec's load experiment
// (Fig. 4), used by `sinew load` and by bench_balance.
//
// Lifetime and threads: a LoadGenerator owns its threads; the destructor stops and joins them.
// start(), stop(), running(), threads() and solved() may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace sinew_tools {

// Solves a x = b in place by Gaussian elimination with partial pivoting: `a` is n x n, row-major,
// and is overwritten by its LU factors; `b` becomes x. Returns false when the matrix is singular
// (a zero pivot). The generator's unit of work; public so that tests can check it solves.
bool solve_dense(std::vector<double>& a, std::vector<double>& b, std::size_t n);

class LoadGenerator {
 public:
  // The order of the matrices solved: one problem is about 2/3 * 96^3 = 0.6 million
  // multiply-adds, a fraction of a millisecond, so stop() is prompt.
  static constexpr std::size_t kOrder = 96;

  LoadGenerator() = default;
  ~LoadGenerator();
  LoadGenerator(const LoadGenerator&) = delete;
  LoadGenerator& operator=(const LoadGenerator&) = delete;

  // Starts `threads` busy threads (0: one per hardware thread). Throws std::logic_error when
  // already running. Returns the number of threads started.
  unsigned start(unsigned threads = 0);
  // Stops the threads (each notices within one problem) and joins them. Returns the problems
  // solved since start(); 0 when not running.
  std::uint64_t stop();

  bool running() const;
  // Threads of the current run (0 when stopped).
  unsigned threads() const;
  // Problems solved since the last start() (kept after stop() until the next start()).
  std::uint64_t solved() const { return solved_.load(std::memory_order_relaxed); }

  // One per hardware thread, at least 1.
  static unsigned hardware_threads();

 private:
  void work(unsigned seed);

  mutable std::mutex mutex_;  // guards threads_ (start/stop from several threads)
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> solved_{0};
  // Every solution's first component lands here, so the compiler cannot drop the work.
  std::atomic<double> sink_{0};
};

}  // namespace sinew_tools
