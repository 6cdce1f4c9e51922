// exec/staging.hpp — feeding discrete devices from pageable host memory through pinned buffers.
//
// A DMA engine reads page-locked memory only; from pageable memory the driver stages every byte
// itself, far slower than DMA from pinned memory (docs/decisions/033). A Staging ring is a few pinned
// chunks owned by one queue: the partition's thread copies chunk k into the ring while the device
// still reads chunk k-1, so host copies and DMA overlap, and the several queues of an overlapped
// GPU copy in parallel on their own threads; each chunk's copy is itself split over helper
// threads (exec/host_copy.hpp). Data already in pinned memory (Runtime::pinned) goes
// straight to the DMA engine instead.
#pragma once

#include "exec/host_copy.hpp"
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
  // How it copies between the user's memory and its slots (one thread, or several: host_copy.hpp).
  HostCopy copy;

  // Host -> device: copies `bytes` from `src` into `dst` at `offset`. Returns once `src` has been
  // read; the transfers may still be in flight (their events are appended to `events`).
  void upload(cl::CommandQueue& q, const cl::Buffer& dst, std::size_t offset, const void* src, std::size_t bytes,
              std::vector<cl::Event>& events);
  // Device -> host: copies `bytes` of `src` at `offset` into `dst`; returns when `dst` is filled.
  void download(cl::CommandQueue& q, const cl::Buffer& src, std::size_t offset, void* dst, std::size_t bytes,
                std::vector<cl::Event>& events);

  // A download in two halves, so that the queue runs on while the host copies results out (the
  // dynamic schedule's chunks: a blocking download held each chunk's worker until the chunk had
  // finished, and its queue idled until the next was enqueued). begin() reads as many pieces as
  // the ring has free slots for (growing it to kMaxSlots); finish() copies them out as they land
  // and reads the rest. A begun download's slots are its own until it finishes; downloads finish
  // in the order they began, and a ring that serves them serves nothing else.
  struct Pending {
    cl::Buffer src;
    std::size_t offset = 0, bytes = 0;
    char* dst = nullptr;
    std::vector<std::size_t> slots;  // per piece read so far, its slot (kNone: read directly)
  };
  static constexpr std::size_t kMaxSlots = 16;
  Pending begin_download(cl::CommandQueue& q, const cl::Buffer& src, std::size_t offset, void* dst, std::size_t bytes,
                         std::vector<cl::Event>& events);
  void finish_download(cl::CommandQueue& q, Pending& p, std::vector<cl::Event>& events);
  // A begun download that will not be finished (its run failed): its slots are free again.
  void abandon(Pending& p);

 private:
  struct Slot {
    cl::Buffer pinned;
    void* ptr = nullptr;
    cl::Event busy;     // the last transfer that used this slot
    bool held = false;  // it holds a begun download's piece not copied out yet
  };
  static constexpr std::size_t kNone = ~std::size_t{0};
  void ensure(cl::CommandQueue& q);
  std::size_t free_slot(cl::CommandQueue& q);  // a slot no download holds, or kNone
  void read_piece(cl::CommandQueue& q, Pending& p, std::size_t slot, std::vector<cl::Event>& events);
  std::vector<Slot> ring_;
  cl::CommandQueue owner_;  // the queue the ring was mapped with
};

}  // namespace sinew::detail
