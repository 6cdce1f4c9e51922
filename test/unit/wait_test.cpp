// The wait policy (exec/wait.hpp) driven with fake completions, a fake clock and fake CPU
// devices: no OpenCL.
#include "exec/wait.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace sinew;
using namespace sinew::detail;

namespace {

// A command that ends after `polls` calls of ended(); wait() then returns (or throws).
class FakeCompletion final : public Completion {
 public:
  explicit FakeCompletion(int polls, bool fails = false) : left_(polls), fails_(fails) {}
  bool ended() override {
    ++polled;
    return left_ <= 0 || --left_ <= 0;
  }
  void wait() override {
    ++waited;
    left_ = 0;  // a blocking wait returns once the command has ended
    if (fails_) throw std::runtime_error("the command failed");
  }
  int polled = 0, waited = 0;

 private:
  int left_;
  bool fails_;
};

// A clock that only moves when the policy sleeps or yields.
class FakePacer final : public Pacer {
 public:
  std::chrono::steady_clock::time_point now() override { return t_; }
  void yield() override {
    ++yields;
    t_ += std::chrono::microseconds(10);
  }
  void sleep(std::chrono::microseconds pause) override {
    sleeps.push_back(pause);
    t_ += pause;
  }
  int yields = 0;
  std::vector<std::chrono::microseconds> sleeps;

 private:
  std::chrono::steady_clock::time_point t_{};
};

// CPU devices that compute for `checks` calls of running().
class FakeCpus final : public CpuActivity {
 public:
  explicit FakeCpus(int checks) : left_(checks) {}
  bool running() const override { return left_-- > 0; }
  void nap(std::chrono::microseconds pause) const override { naps.push_back(pause); }
  mutable std::vector<std::chrono::microseconds> naps;

 private:
  mutable int left_;
};

}  // namespace

TEST(WaitPolicy, AutomaticBlocksWithoutCpuWorkAndPollsBesideIt) {
  EXPECT_EQ(resolve(WaitMode::automatic, false), WaitMode::block);
  EXPECT_EQ(resolve(WaitMode::automatic, true), WaitMode::poll);
  EXPECT_EQ(resolve(WaitMode::block, true), WaitMode::block);
  EXPECT_EQ(resolve(WaitMode::poll, false), WaitMode::poll);
}

TEST(WaitPolicy, BlockWaitsInTheDriverWithoutPolling) {
  FakeCompletion c(1000);
  FakePacer pacer;
  wait_for(c, WaitMode::block, true, pacer);
  EXPECT_EQ(c.polled, 0);
  EXPECT_EQ(c.waited, 1);
  EXPECT_EQ(pacer.yields, 0);
}

TEST(WaitPolicy, PollingYieldsFirstThenNapsLongerUpTo100us) {
  FakeCompletion c(60);
  FakePacer pacer;
  wait_for(c, WaitMode::poll, true, pacer);
  EXPECT_EQ(c.waited, 1);  // the driver's wait still reports the command's own error
  EXPECT_EQ(pacer.yields, 20);  // 200 us of yields at 10 us each
  ASSERT_GE(pacer.sleeps.size(), 4u);
  EXPECT_EQ(pacer.sleeps[0], std::chrono::microseconds(20));
  EXPECT_EQ(pacer.sleeps[1], std::chrono::microseconds(40));
  EXPECT_EQ(pacer.sleeps[2], std::chrono::microseconds(80));
  for (std::size_t i = 3; i < pacer.sleeps.size(); ++i) EXPECT_EQ(pacer.sleeps[i], std::chrono::microseconds(100));
}

TEST(WaitPolicy, PollingWithoutNapNeverSleeps) {
  FakeCompletion c(500);
  FakePacer pacer;
  wait_for(c, WaitMode::poll, false, pacer);
  EXPECT_TRUE(pacer.sleeps.empty());
  EXPECT_GE(pacer.yields, 499);
}

TEST(WaitPolicy, AFailedCommandsErrorReachesTheWaiter) {
  FakeCompletion c(3, /*fails=*/true);
  FakePacer pacer;
  EXPECT_THROW(wait_for(c, WaitMode::poll, true, pacer), std::runtime_error);
}

// While the CPUs compute, every discrete queue is polled (never a blocking wait) and each is
// settled as it ends, so the report sees each device's own end.
TEST(WaitPolicy, EndsBesideComputingCpusArePolledAndSettledAsTheyCome) {
  FakeCompletion slow(6), fast(2);
  FakeCpus cpus(100);
  FakePacer pacer;
  std::vector<std::size_t> settled;
  std::vector<int> waits_when_settled;
  std::vector<FakeCompletion*> all = {&slow, &fast};
  wait_for_ends({{&slow, 1}, {&fast, 2}}, cpus, WaitMode::automatic, [&](std::size_t i) {
    settled.push_back(i);
    waits_when_settled.push_back(all[i]->waited);
  }, pacer);
  EXPECT_EQ(settled, (std::vector<std::size_t>{1, 0}));  // the fast one first
  EXPECT_EQ(waits_when_settled, (std::vector<int>{1, 1}));  // wait() (errors) before settle
  EXPECT_FALSE(cpus.naps.empty());
  EXPECT_EQ(cpus.naps.front(), std::chrono::microseconds(20));
  for (auto nap : cpus.naps) EXPECT_LE(nap, std::chrono::microseconds(100));
  EXPECT_EQ(pacer.yields, 0);  // napping on the CPUs, not spinning
}

// Once no CPU computes and one device is left, its queues are waited for in the driver.
TEST(WaitPolicy, OneDeviceLeftWithoutCpusWaitsInTheDriver) {
  FakeCompletion q0(1000), q1(1000), q2(1000);
  FakeCpus cpus(0);
  FakePacer pacer;
  std::vector<std::size_t> settled;
  wait_for_ends({{&q0, 1}, {&q1, 1}, {&q2, 1}}, cpus, WaitMode::automatic,
                [&](std::size_t i) { settled.push_back(i); }, pacer);
  EXPECT_EQ(settled, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(q0.polled, 1);  // polled once, then the driver's wait
  EXPECT_EQ(q0.waited, 1);
  EXPECT_EQ(pacer.yields, 0);
}

TEST(WaitPolicy, PollModeNeverBlocksEvenForOneDevice) {
  FakeCompletion q0(5);
  FakeCpus cpus(0);
  FakePacer pacer;
  std::size_t settled = 0;
  wait_for_ends({{&q0, 1}}, cpus, WaitMode::poll, [&](std::size_t) { ++settled; }, pacer);
  EXPECT_EQ(settled, 1u);
  EXPECT_GE(q0.polled, 5);
  EXPECT_EQ(q0.waited, 1);
}

// Several devices left and no CPU: polled with yields until each ends, each settled once.
TEST(WaitPolicy, SeveralDevicesArePolledUntilEachEnds) {
  FakeCompletion a(3), b(9);
  FakeCpus cpus(0);
  FakePacer pacer;
  std::vector<std::size_t> settled;
  wait_for_ends({{&a, 1}, {&b, 2}}, cpus, WaitMode::automatic, [&](std::size_t i) { settled.push_back(i); }, pacer);
  EXPECT_EQ(settled, (std::vector<std::size_t>{0, 1}));
  EXPECT_GT(pacer.yields, 0);
  EXPECT_EQ(a.waited, 1);
  EXPECT_EQ(b.waited, 1);
}

TEST(WaitPolicy, AFailedQueueEndStopsTheWaitWithItsError) {
  FakeCompletion ok(1), bad(2, /*fails=*/true);
  FakeCpus cpus(10);
  FakePacer pacer;
  std::vector<std::size_t> settled;
  EXPECT_THROW(wait_for_ends({{&ok, 1}, {&bad, 2}}, cpus, WaitMode::automatic,
                             [&](std::size_t i) { settled.push_back(i); }, pacer),
               std::runtime_error);
  EXPECT_EQ(settled, (std::vector<std::size_t>{0}));  // the failed one is never settled
}

TEST(WaitPolicy, NothingToWaitForReturnsAtOnce) {
  FakeCpus cpus(10);
  FakePacer pacer;
  wait_for_ends({}, cpus, WaitMode::automatic, [](std::size_t) { FAIL(); }, pacer);
  EXPECT_TRUE(cpus.naps.empty());
}
