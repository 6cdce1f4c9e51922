// exec/wait.cpp — the wait policy (see wait.hpp).
#include "exec/wait.hpp"

#include <algorithm>
#include <thread>

namespace sinew::detail {

namespace {
class RealPacer final : public Pacer {
 public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  void yield() override { std::this_thread::yield(); }
  void sleep(std::chrono::microseconds pause) override { std::this_thread::sleep_for(pause); }
};
}  // namespace

Pacer& real_pacer() {
  static RealPacer pacer;
  return pacer;
}

WaitMode resolve(WaitMode mode, bool cpu_work) {
  if (mode != WaitMode::automatic) return mode;
  return cpu_work ? WaitMode::poll : WaitMode::block;
}

namespace {
// Polls until `c` has ended (errors surface through its wait()).
void poll(Completion& c, bool nap, Pacer& pacer) {
  const auto spin_until = pacer.now() + std::chrono::microseconds(200);
  auto pause = std::chrono::microseconds(20);
  while (!c.ended()) {
    if (nap && pacer.now() >= spin_until) {
      pacer.sleep(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(100));
    } else {
      pacer.yield();
    }
  }
}
}  // namespace

void wait_for(Completion& c, WaitMode mode, bool nap, Pacer& pacer) {
  if (mode != WaitMode::block) poll(c, nap, pacer);
  c.wait();
}

void wait_for_ends(const std::vector<QueueEnd>& ends, const CpuActivity& cpus, WaitMode mode,
                   const std::function<void(std::size_t)>& settle, Pacer& pacer) {
  std::vector<std::size_t> pending(ends.size());
  for (std::size_t i = 0; i < ends.size(); ++i) pending[i] = i;
  auto done = [&](std::size_t i) {
    ends[i].end->wait();
    settle(i);
  };
  auto pause = std::chrono::microseconds(20);
  while (!pending.empty()) {
    std::erase_if(pending, [&](std::size_t i) {
      if (!ends[i].end->ended()) return false;
      done(i);
      return true;
    });
    if (pending.empty()) break;
    if (cpus.running()) {
      cpus.nap(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(100));
    } else if (std::all_of(pending.begin(), pending.end(),
                           [&](std::size_t i) { return ends[i].device == ends[pending.front()].device; })) {
      // One device left: its queues end together, only the last one's end counts.
      for (std::size_t i : pending) {
        if (mode == WaitMode::poll) poll(*ends[i].end, false, pacer);
        done(i);
      }
      pending.clear();
    } else {
      pacer.yield();
    }
  }
}

}  // namespace sinew::detail
