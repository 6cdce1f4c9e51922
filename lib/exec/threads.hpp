// exec/threads.hpp — the host threads that carry requests and drive queues, kept between runs.
//
// A recurrent application runs the same tree thousands of times; starting a thread for each
// request and one per queue cost tens of microseconds a run. The pool hands a task to an idle
// thread, or starts one when none is idle, so a task never waits for another to finish (requests
// wait for their queue threads: a fixed-size pool could deadlock). It holds as many threads as
// were ever busy at once (one per request in flight plus one per queue it drives).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace sinew::detail {

class ThreadPool {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();  // runs the jobs still queued, then joins every thread

  // Runs `f` on a pool thread; its result or exception through the future.
  template <class F>
  auto submit(F f) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(f));
    auto future = task->get_future();
    post([task] { (*task)(); });
    return future;
  }

  std::size_t threads() const;  // started so far

 private:
  void post(std::function<void()> job);
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace sinew::detail
