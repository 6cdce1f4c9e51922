// exec/buffer_ledger.hpp — every device buffer a run takes from the runtime's pool: what each
// device holds now and at most (Report::device_bytes), the poison check's guards around a
// partition's buffers, and the early return of a finished chunk's buffers to the pool.
//
// Thread safety: the run's workers allocate and recycle at once (a schedule that cuts chunks
// while the run goes allocates each chunk's buffers on its worker's thread); every member is
// safe to call from any of them.
#pragma once

#include "exec/environment.hpp"
#include "exec/worker.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace sinew::detail {

class BufferLedger {
 public:
  // `pool`: the runtime's; `poison` (0: off): the byte that fills the guard regions around every
  // slice and halo buffer on discrete devices (RuntimeOptions::poison_check).
  BufferLedger(BufferPool& pool, std::uint8_t poison) : pool_(pool), poison_(poison) {}
  // Every buffer still held goes back to the pool (the run's queues have finished by then).
  ~BufferLedger();
  BufferLedger(const BufferLedger&) = delete;
  BufferLedger& operator=(const BufferLedger&) = delete;

  std::uint8_t poison() const { return poison_; }
  // Partitions come in many sizes (a schedule that cuts chunks as the run goes): a partition's
  // buffer is rounded up to two leading binary digits of its size (at most half again), so that
  // a finished chunk's buffers serve later chunks and the next request's (the pool matches sizes
  // exactly). Set before the first allocation.
  void round_partition_sizes(bool on) { round_sizes_ = on; }

  // A device buffer from the pool, returned to it when the run ends. `owner`: the partition whose
  // buffer it is, so that recycle() finds it.
  cl::Buffer device_buffer(const cl::Context& context, std::size_t bytes, const DeviceInfo& info,
                           PartState* owner = nullptr);
  // A partition's own device buffer (a slice, a halo buffer): from the pool, or, with the poison
  // check on, a sub-buffer in the middle of a pooled one whose guards hold the poison byte, so a
  // kernel reading past its ends reads poison. `unit_bytes` sizes the guards.
  cl::Buffer partition_buffer(PartState& ps, std::size_t bytes, std::size_t unit_bytes);
  // A partition's buffer for vector `v` in a role (kSliceRole, kHaloRole) holding its units plus
  // `extra_units`: partition_buffer's, or the worker's buffer for that vector and role that every
  // partition of a streaming worker shares (Worker::reuse_units).
  static constexpr int kSliceRole = 0, kHaloRole = 1, kScratchRole = 2;
  cl::Buffer chunk_buffer(PartState& ps, const VectorState* v, int role, std::size_t extra_units);
  // A library call's scratch of at least `bytes` (clFFT's intermediate buffer), so that the
  // library allocates none of its own outside the ledger. The leaves of a partition run one after
  // another on its queue and share one, as a streaming worker's partitions do (replaced by a
  // larger one where a call needs more).
  cl::Buffer scratch_buffer(PartState& ps, std::size_t bytes);
  // A finished chunk gives its device buffers back to the pool at once, for the chunks taken
  // after it (allocating a GPU buffer per chunk costs each chunk far more than reusing one). Only
  // once its commands have all finished.
  void recycle(PartState& ps);
  // The most device memory the run held at once per device (by the device's DeviceInfo): every
  // buffer it holds until it ends, less those finished chunks gave back (Report::device_bytes).
  std::map<const DeviceInfo*, std::uint64_t> allocated() const;

 private:
  struct Entry {
    cl::Context context;
    std::size_t bytes;
    cl::Buffer buffer;
    const DeviceInfo* device;
  };
  BufferPool& pool_;
  const std::uint8_t poison_;
  bool round_sizes_ = false;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::map<const DeviceInfo*, std::pair<std::uint64_t, std::uint64_t>> held_;  // bytes now, the most
};

}  // namespace sinew::detail
