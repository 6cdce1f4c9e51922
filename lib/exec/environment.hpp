// exec/environment.hpp — what the executor borrows from the Runtime: devices, compiled programs,
// queues (with their kernel objects) and library plans. Everything here is thread-safe; several
// requests execute at once, each with queues of its own.
#pragma once

#include "exec/staging.hpp"
#include "exec/threads.hpp"
#include "platform/device.hpp"
#include "platform/program_cache.hpp"

#include <sinew/binding.hpp>
#include <sinew/options.hpp>

#include <clFFT.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sinew::detail {

// An in-order queue (with profiling or without) and the kernel objects created for it. One request uses a slot at
// a time, so setting kernel arguments never races (one kernel object per queue).
struct QueueSlot {
  // Declared first, so that it is given back after the queue has finished and gone.
  std::unique_ptr<QueueBuild> build;
  cl::CommandQueue queue;
  bool profiled = false;
  std::map<std::pair<cl_program, std::string>, cl::Kernel> kernels;
  Staging staging;  // pinned chunks for pageable host data (discrete devices)
  Staging results;  // the dynamic schedule's downloads, finished after the next chunk is enqueued
  cl::Kernel& kernel(const cl::Program& program, const std::string& entry);
  // Appended to the build options of every program whose kernels this queue runs (QueueBuild).
  std::string build_options() const { return build ? build->options() : std::string(); }

  // A tree's kernel leaf as prepared for this queue: found again on the next request without
  // hashing its source or asking the driver. Keyed by the source object, which the entry keeps
  // alive (so its address is never reused for another source).
  struct Leaf {
    std::shared_ptr<const void> source;
    cl::Kernel* kernel = nullptr;
    cl_uint parameters = 0;          // CL_KERNEL_NUM_ARGS
    std::size_t work_group = 0;      // CL_KERNEL_WORK_GROUP_SIZE on this queue's device
  };
  using LeafKey = std::tuple<const void*, std::string, std::string>;  // source, entry, build options
  std::map<LeafKey, Leaf> leaves;
  // A global-index kernel object's origin arguments as last set (Kernel::global_indices): the
  // partitions and leaves that share the object set them again only where they differ. Every
  // origin argument is set through this record (exec/nodes/kernel.cpp).
  std::map<const cl::Kernel*, std::vector<cl_long>> origins_set;

  // Pinned host memory for the small values a request reads back (a reduction's partition value,
  // each loop iteration): a non-blocking read into pageable memory completes late (the driver
  // finishes it on a thread of its own) and holds back the queue's next command
  // (docs/decisions/035).
  // Mapped once for the slot's life; what a request took is given back when it acquires the slot
  // again. Not for a host-unified device (reads there are a memcpy).
  unsigned char* host_value(const cl::Context& context, std::size_t bytes);
  void reset_host_values() { host_chunk_ = host_offset_ = 0; }
  QueueSlot() = default;
  QueueSlot(const QueueSlot&) = delete;
  QueueSlot& operator=(const QueueSlot&) = delete;
  ~QueueSlot();

 private:
  struct HostValues {
    cl::Buffer buffer;
    unsigned char* data = nullptr;
    std::size_t bytes = 0;
  };
  std::vector<HostValues> host_values_;       // chunks, handed out in order
  std::size_t host_chunk_ = 0, host_offset_ = 0;  // where this request's next value goes
};

class QueuePool {
 public:
  std::unique_ptr<QueueSlot> acquire(const cl::Context& context, const cl::Device& device, bool profile);
  void release(const cl::Device& device, std::unique_ptr<QueueSlot> slot);

 private:
  std::mutex mutex_;
  std::map<std::pair<cl_device_id, bool>, std::vector<std::unique_ptr<QueueSlot>>> free_;  // by device, profiled
};

// Device buffers kept between requests: a recurrent application runs the same tree on the same
// sizes again and again, and allocating (and first touching) large buffers costs milliseconds.
// Buffers are matched by context and exact size. What a device's buffers take, those in use and
// those pooled together, stays within DeviceInfo::memory() (a memory cap bounds the process, not
// only each run): a buffer the pool cannot serve first drops as many of the device's pooled ones as
// that needs. At most half a device's memory stays pooled.
class BufferPool {
 public:
  cl::Buffer acquire(const cl::Context& context, std::size_t bytes, const DeviceInfo& device);
  void release(const cl::Context& context, std::size_t bytes, cl::Buffer buffer, const DeviceInfo& device);

 private:
  struct Held {
    std::uint64_t in_use = 0, pooled = 0;
  };
  std::mutex mutex_;
  // By device (DeviceInfo::index), context, size: the contexts of a device's fission
  // configurations share its memory.
  std::map<std::tuple<std::size_t, cl_context, std::size_t>, std::vector<cl::Buffer>> free_;
  std::map<std::size_t, Held> held_;  // by device
};

// Baked clFFT plans by (queue, length, batch), not by context: a plan is bound to the device of
// the queue it was baked with (a fission sub-device shares its parent's context, and another
// sub-device's queue gets CLFFT_DEVICE_MISMATCH), and a plan owns clFFT's intermediate buffer
// for large lengths, so two queues running one plan at once (a GPU's overlap queues) would
// overwrite each other's passes. On one in-order queue a plan's transforms never overlap.
// clFFT keeps global state: the Runtime sets it up once and tears it down when the last one goes.
class FftPlans {
 public:
  FftPlans();
  ~FftPlans();
  // The plan for transforms on `queue` (a queue of `context`); only the thread driving `queue`
  // may enqueue it.
  clfftPlanHandle get(const cl::Context& context, cl::CommandQueue& queue, std::size_t length, std::size_t batch);
  // Held around clfftEnqueueTransform. One lock for every clFFT call in the process (bakes,
  // enqueues, destroys; across Runtimes): plans with equal parameters share clFFT's kernel
  // objects (argument setting races) and baking is not thread-safe (clFFT issues #146, #240).
  static std::mutex& enqueue_mutex();

 private:
  struct Plan {
    cl::CommandQueue queue;  // retained, so the handle in the key is never reused while the plan lives
    clfftPlanHandle handle;
  };
  std::mutex mutex_;
  std::map<std::tuple<cl_command_queue, std::size_t, std::size_t>, Plan> plans_;
};

struct Environment {
  std::vector<Device*> devices;  // the runtime's selected devices, by runtime index
  std::vector<DeviceInfo> infos;
  ProgramCache* programs = nullptr;
  QueuePool* queues = nullptr;
  BufferPool* buffers = nullptr;
  FftPlans* fft = nullptr;
  ThreadPool* threads = nullptr;  // requests and queue threads
  TransferMode transfer = TransferMode::staged;  // RuntimeOptions::transfer
  unsigned copy_threads = 0;                     // RuntimeOptions::copy_threads (0: by the run)
  unsigned hardware_threads = 1;                 // the host's, read once (copy_ways)
  WaitMode wait = WaitMode::automatic;           // RuntimeOptions::wait
  ScheduleTuning schedule_tuning;                // RuntimeOptions::schedule_tuning (checked where a tree is prepared)
  // Requests profile their queues (per-partition and per-kernel device times in the Report, and
  // the Chrome trace) when they ask (RunOptions::profile) or RuntimeOptions::profile says so. Off
  // by default: an event per command costs a run measurably (docs/decisions/035) and the
  // scheduler needs none of it.
  bool profile = false;
  bool poison_check = false;  // RuntimeOptions::poison_check: user runs go through measure_checked
  std::string trace;  // RuntimeOptions::trace: a Chrome trace of every run goes there ("": none)
  Logger log;         // warnings (a trace that could not be written)
  // True when [p, p + bytes) lies in memory from Runtime::pinned: DMA reads it directly.
  std::function<bool(const void* p, std::size_t bytes)> is_pinned;
  // Pinned memory as Runtime::pinned gives it (registered: is_pinned knows it).
  std::function<std::shared_ptr<PinnedBlock>(std::size_t bytes)> allocate_pinned;
};

}  // namespace sinew::detail
