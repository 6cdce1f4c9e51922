// LibrarySetupGuard (exec/library_setup_guard.hpp): the first call of a key runs alone — no other call beside it
// — until one succeeds; later calls run side by side. What keeps CLBlast's unlocked set-up of its
// tuning database from racing when two devices make their first call at once.
#include "exec/library_setup_guard.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using sinew::detail::LibrarySetupGuard;

namespace {
// Runs `threads` calls of `key` at once and returns how many ran at the same time at most.
int most_at_once(LibrarySetupGuard<int>& calls, const std::vector<int>& keys, bool succeed = true) {
  std::atomic<int> now{0}, most{0};
  std::vector<std::thread> threads;
  for (int key : keys)
    threads.emplace_back([&, key] {
      calls.call(
          key,
          [&] {
            const int n = ++now;
            int m = most.load();
            while (n > m && !most.compare_exchange_weak(m, n)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            --now;
            return succeed;
          },
          [](bool ok) { return ok; });
    });
  for (auto& t : threads) t.join();
  return most.load();
}
}  // namespace

TEST(LibrarySetupGuard, FirstCallsRunAloneEvenForOtherKeys) {
  LibrarySetupGuard<int> calls;
  EXPECT_EQ(most_at_once(calls, {1, 2, 3, 1, 2, 3}), 1);
}

TEST(LibrarySetupGuard, LaterCallsRunSideBySide) {
  LibrarySetupGuard<int> calls;
  most_at_once(calls, {1, 2});  // both keys set up
  EXPECT_EQ(most_at_once(calls, {1, 1, 2, 2}), 4);
}

TEST(LibrarySetupGuard, UntilACallSucceedsEveryCallRunsAlone) {
  LibrarySetupGuard<int> calls;
  most_at_once(calls, {7}, /*succeed=*/false);
  EXPECT_EQ(most_at_once(calls, {7, 7, 7}, /*succeed=*/false), 1);
  most_at_once(calls, {7});  // set up at last
  EXPECT_EQ(most_at_once(calls, {7, 7, 7}), 3);
}
