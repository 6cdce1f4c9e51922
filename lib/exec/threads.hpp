// exec/threads.hpp — the host threads that carry requests and drive queues, kept between runs.
//
// A recurrent application runs the same tree thousands of times; starting a thread for each
// request and one per queue cost tens of microseconds a run. The pool hands a task to an idle
// thread, or starts one when none is idle, so a task never waits for another to finish (requests
// wait for their queue threads: a fixed-size pool could deadlock). It holds as many threads as
// were ever busy at once (one per request in flight, one per queue it drives, and the helpers
// that split staged copies, exec/host_copy.hpp).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
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

  // Runs `f` on a pool thread; its result or exception through the future. The thread counts as
  // free again before the future is ready, so a caller that waits for one task and then submits
  // the next reuses the same thread.
  template <class F>
  auto submit(F f) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    struct State {
      F f;
      std::promise<R> promise;
      std::exception_ptr error;
      std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> value;
    };
    auto state = std::make_shared<State>(State{std::move(f), {}, {}, {}});
    auto future = state->promise.get_future();
    Job job;
    job.run = [state] {
      try {
        if constexpr (std::is_void_v<R>) {
          state->f();
          state->value = true;
        } else {
          state->value.emplace(state->f());
        }
      } catch (...) {
        state->error = std::current_exception();
      }
    };
    job.publish = [state] {
      if (state->error) {
        state->promise.set_exception(state->error);
      } else if constexpr (std::is_void_v<R>) {
        state->promise.set_value();
      } else {
        state->promise.set_value(std::move(*state->value));
      }
    };
    post(std::move(job));
    return future;
  }

  // Runs `f` on this pool thread once the job it is running has ended and published its result,
  // before the thread looks for other work, where the job has reached its tail (tail()): no
  // other thread is woken, so a chain of jobs each started by the end of the one before (the
  // requests over one resident array, exec/resident_array.hpp) runs on one thread. Elsewhere (a
  // thread not of this pool, a job before its tail, which may still wait for `f`), `f` runs as
  // any job would (post). `f` keeps its own outcome.
  void run_next(std::function<void()> f);
  // The running job waits for nothing more: what run_next is given from here on waits for the
  // job's end on this thread. No effect on a thread not of a pool; reset at every job's end.
  static void tail();

  std::size_t threads() const;  // started so far

 private:
  struct Job {
    std::function<void()> run;      // the work; keeps its outcome
    std::function<void()> publish;  // hands the outcome to the future
  };
  void post(Job job);
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;       // waiting for a job
  std::size_t returning_ = 0;  // done with a job, publishing it, about to look for the next
  bool stopping_ = false;
};

}  // namespace sinew::detail
