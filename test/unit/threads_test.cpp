// The runtime's growing thread pool: results and errors through futures, no task waits for an
// idle thread, threads are reused.
#include "exec/threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>

using sinew::detail::ThreadPool;

TEST(ThreadPool, ResultsAndExceptionsReachTheFutures) {
  ThreadPool pool;
  auto ok = pool.submit([] { return 42; });
  auto bad = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_EQ(ok.get(), 42);
  EXPECT_THROW(bad.get(), std::runtime_error);
}

TEST(ThreadPool, ATaskWaitingForAnotherNeverDeadlocks) {
  // A request waits for its queue workers, which are tasks of the same pool: every task must get
  // a thread even when all the others are blocked.
  ThreadPool pool;
  constexpr int kDepth = 12;
  std::function<int(int)> nest = [&](int depth) -> int {
    if (depth == 0) return 0;
    return pool.submit([&, depth] { return nest(depth - 1); }).get() + 1;
  };
  auto f = pool.submit([&] { return nest(kDepth); });
  ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(f.get(), kDepth);
}

TEST(ThreadPool, IdleThreadsAreReused) {
  ThreadPool pool;
  for (int i = 0; i < 200; ++i) pool.submit([] {}).get();
  // One after another: the thread of the last task counts as free before its future is ready,
  // however slowly it gets back to waiting.
  EXPECT_EQ(pool.threads(), 1u);
  std::atomic<int> sum{0};
  std::vector<std::future<void>> all;
  for (int i = 0; i < 50; ++i) all.push_back(pool.submit([&, i] { sum += i; }));
  for (auto& f : all) f.get();
  EXPECT_EQ(sum.load(), 49 * 50 / 2);
}

TEST(ThreadPool, DestructionRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool;
    for (int i = 0; i < 20; ++i)
      pool.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      });
  }
  EXPECT_EQ(ran.load(), 20);
}
