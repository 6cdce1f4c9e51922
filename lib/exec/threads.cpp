// exec/threads.cpp — the growing thread pool.
#include "exec/threads.hpp"

namespace sinew::detail {

namespace {
// The pool whose loop this thread runs, whether its job has reached its tail, and the jobs
// run_next kept for it.
thread_local const ThreadPool* this_threads_pool = nullptr;
thread_local bool at_tail = false;
thread_local std::deque<std::function<void()>> next_on_this_thread;
}  // namespace

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

std::size_t ThreadPool::threads() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

void ThreadPool::post(Job job) {
  std::lock_guard lock(mutex_);
  jobs_.push_back(std::move(job));
  // Idle or returning threads not yet claimed by a queued job take it; else one more thread.
  if (idle_ + returning_ >= jobs_.size()) {
    wake_.notify_one();
    return;
  }
  try {
    threads_.emplace_back([this] { loop(); });
  } catch (...) {
    jobs_.pop_back();  // no thread for it: the caller gets the error, the job never runs
    throw;
  }
}

void ThreadPool::tail() { at_tail = this_threads_pool != nullptr; }

void ThreadPool::run_next(std::function<void()> f) {
  if (this_threads_pool == this && at_tail) {
    next_on_this_thread.push_back(std::move(f));
    return;
  }
  post(Job{std::move(f), [] {}});
}

void ThreadPool::loop() {
  this_threads_pool = this;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!jobs_.empty()) {
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job.run();  // exceptions are kept for the future
      at_tail = false;
      lock.lock();
      ++returning_;  // free before the future is ready: a waiter's next task finds this thread
      lock.unlock();
      job.publish();
      job = Job{};
      lock.lock();
      --returning_;
      // Busy again (counted neither idle nor returning): jobs posted meanwhile go to other threads.
      while (!next_on_this_thread.empty()) {
        auto next = std::move(next_on_this_thread.front());
        next_on_this_thread.pop_front();
        lock.unlock();
        next();  // keeps its own outcome
        at_tail = false;
        lock.lock();
      }
      continue;
    }
    if (stopping_) return;
    ++idle_;
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    --idle_;
  }
}

}  // namespace sinew::detail
