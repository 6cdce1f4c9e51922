// The runtime's growing thread pool: results and errors through futures, no task waits for an
// idle thread, threads are reused.
#include "exec/host_copy.hpp"
#include "exec/threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>
#include <stdexcept>
#include <vector>

using sinew::detail::HostCopy;
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

// run_next from a pool thread's job: the job runs on that thread, after the job that asked for it
// has published its result, and a chain of such jobs starts no other thread. From another thread
// it runs as a posted job.
TEST(ThreadPool, RunNextRunsOnTheSameThreadAfterTheJobsResult) {
  ThreadPool pool;
  constexpr int kChain = 50;
  std::vector<std::thread::id> ran(kChain);
  std::atomic<int> ended{0};  // links ended
  std::atomic<int> order_errors{0};
  std::promise<void> finished;
  std::function<void(int)> link = [&](int i) {
    ran[i] = std::this_thread::get_id();
    if (ended.load() != i) ++order_errors;  // the link before has ended before this one runs
    ThreadPool::tail();
    if (i + 1 < kChain) pool.run_next([&, i] { link(i + 1); });
    ended = i + 1;
    if (i + 1 == kChain) finished.set_value();  // last: the test's state goes once it is seen
  };
  pool.run_next([&] { link(0); });  // not from a pool thread: posted
  auto all = finished.get_future();
  ASSERT_EQ(all.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  for (int i = 1; i < kChain; ++i) EXPECT_EQ(ran[i], ran[0]) << i;
  EXPECT_EQ(order_errors.load(), 0);
  EXPECT_EQ(pool.threads(), 1u);
}

// Before its tail a job may still wait for what it gives run_next (a loop predicate running a
// tree and waiting for it): that runs on another thread at once, never after the job.
TEST(ThreadPool, RunNextBeforeTheTailRunsAsAnyJob) {
  ThreadPool pool;
  auto waiter = pool.submit([&] {
    std::promise<std::thread::id> ran;
    auto seen = ran.get_future();
    pool.run_next([&] { ran.set_value(std::this_thread::get_id()); });
    return seen.wait_for(std::chrono::seconds(20)) == std::future_status::ready &&
           seen.get() != std::this_thread::get_id();
  });
  EXPECT_TRUE(waiter.get());
}

// A staged chunk's copy split over helpers (exec/host_copy.hpp): every byte lands where it
// belongs and no byte beyond it is touched, whatever the size (below one piece, pieces that do
// not divide it, odd tails) and the ways.
TEST(HostCopy, EveryByteOnceAtEverySizeAndWays) {
  ThreadPool pool;
  const std::size_t piece = HostCopy::kMinPiece;
  for (unsigned ways : {1u, 2u, 3u, 8u})
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, piece - 1, 2 * piece, 2 * piece + 1, 5 * piece + 77,
                              std::size_t{4} << 20, (std::size_t{4} << 20) + 13}) {
      std::vector<unsigned char> src(bytes), dst(bytes + 128, 0xEE);
      for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 131 + i / 4096);
      const HostCopy copy(&pool, ways);
      copy(dst.data() + 64, src.data(), bytes);
      for (std::size_t i = 0; i < 64; ++i) ASSERT_EQ(dst[i], 0xEE) << "before, " << ways << " ways, " << bytes;
      for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(dst[64 + i], src[i]) << i << " of " << bytes << ", " << ways;
      for (std::size_t i = 64 + bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE) << "after, " << ways << " ways";
    }
}

TEST(HostCopy, HelpersComeFromThePoolOnlyForLargeCopies) {
  ThreadPool pool;
  std::vector<char> a(8 * HostCopy::kMinPiece, 1), b(a.size());
  HostCopy(&pool, 8)(b.data(), a.data(), HostCopy::kMinPiece);  // one piece: no helper
  EXPECT_EQ(pool.threads(), 0u);
  HostCopy(&pool, 4)(b.data(), a.data(), a.size());
  EXPECT_GE(pool.threads(), 1u);
  EXPECT_LE(pool.threads(), 3u);  // the caller copies one of the four pieces itself
  EXPECT_EQ(b, a);
  // A size the ways do not divide: still no more than ways - 1 helpers (no piece for a tail).
  ThreadPool other;
  HostCopy(&other, 2)(b.data(), a.data(), 2 * HostCopy::kMinPiece + 1);
  EXPECT_EQ(other.threads(), 1u);
  EXPECT_EQ(HostCopy(nullptr, 8).ways(), 1u);  // no pool: one thread
}

TEST(HostCopy, WaysFollowTheSettingThenTheQueuesAndTheRunsCpuWork) {
  using sinew::detail::copy_ways;
  using sinew::detail::kMaxWays;
  using sinew::detail::kMaxWaysBesideCpuWork;
  EXPECT_EQ(kMaxWays, 8u);               // docs/decisions/033
  EXPECT_EQ(kMaxWaysBesideCpuWork, 4u);  // docs/decisions/172
  EXPECT_EQ(copy_ways(3, true, 4, 16), 3u);                       // a setting wins
  EXPECT_EQ(copy_ways(0, false, 4, 16), 4u);                      // the host's threads shared among the queues
  EXPECT_EQ(copy_ways(0, false, 1, 64), kMaxWays);
  EXPECT_EQ(copy_ways(0, true, 1, 64), kMaxWaysBesideCpuWork);    // a CPU device computes: fewer helpers
  EXPECT_EQ(copy_ways(0, true, 1, 16), kMaxWaysBesideCpuWork);
  EXPECT_EQ(copy_ways(0, true, 2, 4), 2u);                        // but still the queues' share
  EXPECT_EQ(copy_ways(0, false, 3, 2), 1u);                       // fewer threads than queues
  EXPECT_EQ(copy_ways(0, false, 0, 16), 1u);                      // nothing staged
}
