// exec/threads.cpp — the growing thread pool.
#include "exec/threads.hpp"

namespace sinew::detail {

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

void ThreadPool::post(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  jobs_.push_back(std::move(job));
  // Idle threads not yet claimed by a queued job take it; else one more thread.
  if (idle_ >= jobs_.size()) {
    wake_.notify_one();
    return;
  }
  threads_.emplace_back([this] { loop(); });
}

void ThreadPool::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!jobs_.empty()) {
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();  // a packaged_task: exceptions go to its future
      job = nullptr;
      lock.lock();
      continue;
    }
    if (stopping_) return;
    ++idle_;
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    --idle_;
  }
}

}  // namespace sinew::detail
