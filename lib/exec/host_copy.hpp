// exec/host_copy.hpp — a large host-to-host copy spread over several threads.
//
// Pageable host memory reaches a discrete device through a pinned ring (exec/staging.hpp): a
// memcpy on the host, then DMA. One thread's memcpy is slower than the DMA that follows it
// (docs/decisions/033): each staging copy is split between the queue's thread and helpers from the
// runtime's pool, also beside a CPU device's kernels (docs/decisions/172).
#pragma once

#include <cstddef>

namespace sinew::detail {

class ThreadPool;

class HostCopy {
 public:
  // Pieces below this many bytes are not worth a helper's wake-up (a few microseconds).
  static constexpr std::size_t kMinPiece = 256u << 10;

  HostCopy() = default;
  // `ways` threads per copy at most, the caller's included; helpers come from `pool`. Fewer than
  // two ways, or no pool: a plain memcpy.
  HostCopy(ThreadPool* pool, unsigned ways) : pool_(pool), ways_(pool ? ways : 1) {}

  unsigned ways() const { return ways_ < 1 ? 1 : ways_; }
  // Copies `bytes` from `src` to `dst` (not overlapping); returns when every byte is there.
  void operator()(void* dst, const void* src, std::size_t bytes) const;

 private:
  ThreadPool* pool_ = nullptr;
  unsigned ways_ = 1;
};

// The ways each staging queue's copies take in a run: `setting` (RuntimeOptions::copy_threads)
// when it is not 0; else the host's hardware threads shared among the run's `staging_queues`, at
// most kMaxWays each, and at most kMaxWaysBesideCpuWork where a CPU device computes in the run
// (`cpu_work`): a discrete device's copies are on its critical path, so they keep helpers beside
// a CPU device's kernels, but fewer, since both then draw on the host's cores and memory
// (docs/decisions/172).
inline constexpr unsigned kMaxWays = 8;
inline constexpr unsigned kMaxWaysBesideCpuWork = 4;
unsigned copy_ways(unsigned setting, bool cpu_work, std::size_t staging_queues, unsigned hardware_threads);

}  // namespace sinew::detail
