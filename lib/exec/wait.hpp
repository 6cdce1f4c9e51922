// exec/wait.hpp — how host threads wait for device work: the policy, over interfaces that unit
// tests drive with fake completions and a fake clock (no OpenCL here; exec/wait_cl.* adapts
// OpenCL events and queues to it).
//
// NVIDIA's OpenCL spins inside clFinish / clWaitForEvents: the quickest wait while the host's
// cores are idle, but a spinning thread takes a core from a CPU device's work-groups while both
// run. So (RuntimeOptions::wait, $SINEW_WAIT):
//   automatic (default)  block in the driver when the request has no CPU work (polling from
//                        queue threads is slower than the driver's wait for a GPU alone:
//                        docs/decisions/034); with CPU work, poll, napping to the end
//   block                always block in the driver
//   poll                 always poll the command's status: yielding the core between polls (a
//                        staging chunk's DMA: tens of microseconds) or, with `nap`, sleeping 20
//                        to 100 us after the first 200 us (the end of a run)
// (Sleeping until the driver calls back on the command's completion is no way to wait for an
// NVIDIA GPU: its callbacks come late, docs/decisions/034.)
#pragma once

#include <sinew/options.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace sinew::detail {

// One command's end as a host thread sees it.
class Completion {
 public:
  virtual ~Completion() = default;
  // Without blocking: the command has ended (completed, or failed: wait() then throws).
  virtual bool ended() = 0;
  // Blocks in the driver until the command has ended; throws its error.
  virtual void wait() = 0;
};

// Time as the policy sees it, so that tests can count its sleeps and yields.
class Pacer {
 public:
  virtual ~Pacer() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void yield() = 0;
  virtual void sleep(std::chrono::microseconds pause) = 0;
};
// The real clock, std::this_thread::yield and sleep_for.
Pacer& real_pacer();

// The CPU devices of a request, as the thread that waits for the discrete ones sees them.
class CpuActivity {
 public:
  virtual ~CpuActivity() = default;
  // Some CPU device still computes.
  virtual bool running() const = 0;
  // Sleeps for `pause`, or until no CPU device computes.
  virtual void nap(std::chrono::microseconds pause) const = 0;
};

// How a queue with CPU work beside it (`cpu_work`) is waited for: automatic becomes poll (napping)
// beside CPU work and block without it.
WaitMode resolve(WaitMode mode, bool cpu_work);

// c.wait(), polling first unless `mode` is block: yielding for the first 200 us (a short run's end
// is not delayed by a sleep, which Linux stretches to 50 us or more), then, with `nap`, sleeping
// ever longer, 20 to 100 us.
void wait_for(Completion& c, WaitMode mode, bool nap, Pacer& pacer = real_pacer());

// One queue's end on a discrete device.
struct QueueEnd {
  Completion* end = nullptr;
  std::size_t device = 0;  // which device the queue belongs to
};

// Waits for the discrete devices' queue ends of a request whose CPU devices compute beside them:
// while a CPU computes, every pending end is polled, napping between polls (20 to 100 us), so
// each is seen as it comes (a thread spinning in NVIDIA's wait beside a CPU device takes a core
// from it: docs/decisions/034); once no CPU computes, the ends of
// one remaining device are waited for in the driver (polled in poll mode), several devices'
// polled with yields. For each end, once it has ended, its wait() is called (which throws a
// failed command's error) and then `settle(i)`, exactly once, in the order the ends were seen.
void wait_for_ends(const std::vector<QueueEnd>& ends, const CpuActivity& cpus, WaitMode mode,
                   const std::function<void(std::size_t)>& settle, Pacer& pacer = real_pacer());

}  // namespace sinew::detail
