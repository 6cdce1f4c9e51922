// exec/wait_cl.hpp — the wait policy (exec/wait.hpp) for OpenCL: events as Completions, queues
// drained, and the CPU devices' ends as their drivers call back.
#pragma once

#include "exec/wait.hpp"
#include "platform/cl.hpp"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace sinew::detail {

// An OpenCL event's end.
class EventCompletion final : public Completion {
 public:
  explicit EventCompletion(cl::Event event) : event_(std::move(event)) {}
  bool ended() override;
  void wait() override { event_.wait(); }
  const cl::Event& event() const { return event_; }

 private:
  cl::Event event_;
};

// Whether the command has ended: completed, or failed (wait() then throws its error).
bool ended(const cl::Event& event);
// event.wait(), by the policy (wait_for in wait.hpp).
void wait_for(const cl::Event& event, WaitMode mode, bool nap = false);
// queue.finish(), for discrete devices as the mode says (a marker polled, with no clFinish after
// it); `nap`: a CPU device shares the cores.
void drain(cl::CommandQueue& queue, bool discrete, WaitMode mode, bool nap = true);

// The ends of a request's CPU devices as their drivers call back (PoCL calls back from the
// thread that completed the command, at once): when each ended, in ms since `origin`, and a nap
// that the last one's end cuts short. The callbacks own the state, so they may run after this
// object is gone.
class CallbackEnds final : public CpuActivity {
 public:
  explicit CallbackEnds(std::chrono::steady_clock::time_point origin);
  // Watches `event`; its index for ms(), or nothing if the driver refused the callback.
  std::optional<std::size_t> watch(const cl::Event& event);
  // When the i-th watched event ended, once its callback has run.
  std::optional<double> ms(std::size_t i) const;
  bool running() const override;
  void nap(std::chrono::microseconds pause) const override;

 private:
  struct State {
    std::chrono::steady_clock::time_point origin;
    mutable std::mutex mutex;
    std::condition_variable none_running;
    std::vector<double> ms;  // -1 until called back
    std::size_t running = 0;
  };
  std::shared_ptr<State> state_;
};

}  // namespace sinew::detail
