// exec/staging.hpp — feeding discrete devices from pageable host memory through pinned buffers.
//
// A DMA engine reads page-locked memory only; from pageable memory the driver stages every byte
// itself (8-15 GB/s on the H100 machine against 55 GB/s pinned). A Staging ring is a few pinned
// chunks owned by one queue: the partition's thread copies chunk k into the ring while the device
// still reads chunk k-1, so host copies and DMA overlap, and the several queues of an overlapped
// GPU copy in parallel on their own threads. Data already in pinned memory (Runtime::pinned) goes
// straight to the DMA engine instead.
#pragma once

#include "exec/wait_cl.hpp"
#include "platform/cl.hpp"

#include <sinew/options.hpp>

#include <cstddef>
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

}  // namespace sinew::detail
