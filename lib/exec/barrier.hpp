// exec/barrier.hpp — the host-side meeting point of the partitions' threads.
//
// Each partition of a request is driven by its own host thread, so a blocking transfer or library
// call on one device never holds back another. The threads meet only where the tree needs all
// partitions at once (a replica re-synchronisation, a loop predicate): the last to arrive runs the
// step for everyone. A failure in any thread aborts the barrier, so no thread waits forever.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>

namespace sinew::detail {

// Thrown in the threads that wait on an aborted barrier; the executor reports the first real error.
struct BarrierAborted : std::exception {
  const char* what() const noexcept override { return "another partition failed"; }
};

class Barrier {
 public:
  explicit Barrier(std::size_t parties) : parties_(parties) {}

  // Blocks until every party has arrived; the last one runs `action` first. If the action throws,
  // the barrier is aborted and the exception propagates from the last party's call.
  void arrive_and_wait(const std::function<void()>& action = {}) {
    std::unique_lock lock(mutex_);
    if (aborted_) throw BarrierAborted();
    const std::size_t generation = generation_;
    if (++arrived_ == parties_) {
      if (action) {
        try {
          action();
        } catch (...) {
          aborted_ = true;
          cv_.notify_all();
          throw;
        }
      }
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation || aborted_; });
    if (generation_ == generation) throw BarrierAborted();
  }

  void abort() {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t parties_, arrived_ = 0, generation_ = 0;
  bool aborted_ = false;
};

}  // namespace sinew::detail
