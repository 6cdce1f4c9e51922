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

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
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
// wait ($SINEW_WAIT):
//   auto (default)  block in the driver when the request has no CPU work (on the H100 machine
//                   polling from three queue threads was 5% slower than the driver's wait for a
//                   10M-float saxpy on the GPU alone); with CPU work, poll, napping (while the
//                   CPU computes, when the caller can tell: `nap_while`; else to the end)
//   block           always block in the driver
//   poll            always poll the command's status: yielding the core between polls (a
//                   staging chunk's DMA: tens of microseconds) or, with `nap`, sleeping 20 to
//                   100 us after the first 200 us (the end of a run)
// (Sleeping until the driver calls back on the command's completion was tried: NVIDIA's
// callbacks came some 20 ms late.)
enum class WaitMode { automatic, block, poll };
WaitMode wait_mode();

// The CPU devices of a request still computing. A discrete device's wait naps while some are, and
// wakes as the last one ends: its device may have finished meanwhile, and the request ends with
// the last wait (a nap that ran on cost the H100 machine some 18 us per 10M-float split).
class CpuWork {
 public:
  explicit CpuWork(int running) : running_(running) {}
  bool running() const { return running_.load(std::memory_order_acquire) > 0; }
  void one_ended();
  // Sleeps for `pause`, or until no CPU device computes.
  void nap(std::chrono::microseconds pause);

 private:
  std::atomic<int> running_;
  std::mutex mutex_;
  std::condition_variable ended_;
};

// event.wait(), by polling unless the mode is `block`; with `nap_while`, napping only while it
// counts CPU work still running.
void wait_for(const cl::Event& event, bool nap = false, CpuWork* nap_while = nullptr);
// queue.finish(), for discrete devices as the mode says; `nap`: a CPU device shares the cores
// (while `nap_while` counts some running, when given).
void drain(cl::CommandQueue& queue, bool discrete, bool nap = true, CpuWork* nap_while = nullptr);

}  // namespace sinew::detail
