// exec/staging.hpp — feeding discrete devices from pageable host memory through pinned buffers.
//
// A DMA engine reads page-locked memory only; from pageable memory the driver stages every byte
// itself (8-15 GB/s on the H100 machine against 55 GB/s pinned). A Staging ring is a few pinned
// chunks owned by one queue: the partition's thread copies chunk k into the ring while the device
// still reads chunk k-1, so host copies and DMA overlap, and the several queues of an overlapped
// GPU copy in parallel on their own threads. Data already in pinned memory (Runtime::pinned) goes
// straight to the DMA engine instead.
#pragma once

#include "platform/cl.hpp"

#include <sinew/options.hpp>

#include <chrono>
#include <cstddef>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace sinew::detail {

class Staging {
 public:
  static constexpr std::size_t kChunk = 4u << 20;  // bytes per chunk
  static constexpr std::size_t kSlots = 3;

  Staging() = default;
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging();

  // How this ring waits for a slot's DMA (RuntimeOptions::wait).
  WaitMode wait = WaitMode::automatic;

  // Host -> device: copies `bytes` from `src` into `dst` at `offset`. Returns once `src` has been
  // read; the transfers may still be in flight (their events are appended to `events`).
  void upload(cl::CommandQueue& q, const cl::Buffer& dst, std::size_t offset, const void* src, std::size_t bytes,
              std::vector<cl::Event>& events);
  // Device -> host: copies `bytes` of `src` at `offset` into `dst`; returns when `dst` is filled.
  void download(cl::CommandQueue& q, const cl::Buffer& src, std::size_t offset, void* dst, std::size_t bytes,
                std::vector<cl::Event>& events);

 private:
  struct Slot {
    cl::Buffer pinned;
    void* ptr = nullptr;
    cl::Event busy;  // the last transfer that used this slot
  };
  void ensure(cl::CommandQueue& q);
  std::vector<Slot> ring_;
  cl::CommandQueue owner_;  // the queue the ring was mapped with
};

// Waiting for a discrete device. NVIDIA's OpenCL spins inside clFinish / clWaitForEvents: the
// quickest wait while the host's cores are idle, but with one host thread per GPU queue several
// spinning threads take cores from a CPU device's work-groups while both run. How host threads
// wait (RuntimeOptions::wait, $SINEW_WAIT):
//   auto (default)  block in the driver when the request has no CPU work (on the H100 machine
//                   polling from three queue threads was 5% slower than the driver's wait for a
//                   10M-float saxpy on the GPU alone); with CPU work, poll, napping to the end
//   block           always block in the driver
//   poll            always poll the command's status: yielding the core between polls (a
//                   staging chunk's DMA: tens of microseconds) or, with `nap`, sleeping 20 to
//                   100 us after the first 200 us (the end of a run)
// (Sleeping until the driver calls back on the command's completion was tried: NVIDIA's
// callbacks came some 20 ms late.)

// event.wait(), by polling unless the mode is `block`.
void wait_for(const cl::Event& event, WaitMode mode, bool nap = false);
// queue.finish(), for discrete devices as the mode says; `nap`: a CPU device shares the cores.
void drain(cl::CommandQueue& queue, bool discrete, WaitMode mode, bool nap = true);

// Whether the command has ended: completed, or failed (wait() then throws its error).
bool ended(const cl::Event& event);

// The ends of a request's CPU devices as their drivers call back (PoCL calls back from the
// thread that completed the command, at once): when each ended, in ms since `origin`, and a nap
// that the last one's end cuts short. The callbacks own the state, so they may run after this
// object is gone.
class CallbackEnds {
 public:
  explicit CallbackEnds(std::chrono::steady_clock::time_point origin);
  // Watches `event`; its index for ms(), or nothing if the driver refused the callback.
  std::optional<std::size_t> watch(const cl::Event& event);
  // When the i-th watched event ended, once its callback has run.
  std::optional<double> ms(std::size_t i) const;
  // Some watched event has not ended.
  bool running() const;
  // Sleeps for `pause`, or until no watched event is running.
  void nap(std::chrono::microseconds pause) const;

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
