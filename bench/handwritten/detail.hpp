// bench/handwritten/detail.hpp — what the hand-written baselines share: the OpenCL bindings, the
// two devices, the timing loop and the chunked GPU pipeline through pinned staging.
//
// Private to sinew_handwritten (not included by the benchmark programs).
#pragma once

#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include "handwritten.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinew_bench::handwritten {

// Every device of every platform the ICD loader offers, with its platform, in order; none when
// there is no platform (the loader reports that as an error).
std::vector<std::pair<cl::Platform, cl::Device>> all_devices();

// One device in its own context, with its programs and queues.
struct Side {
  cl::Device device;
  cl::Context context;
  std::string name, description;
  std::map<std::string, cl::Program> programs;  // by kernel file name
  std::vector<cl::CommandQueue> queues;

  // The i-th in-order queue of this device (created on first use).
  cl::CommandQueue& queue(unsigned i);
};

struct Pinned;

struct Env::Impl {
  Side cpu, gpu;
  bool stand_in = false;
  bool has_cpu = true;

  // The CPU side; throws when the machine has no CPU device.
  Side& need_cpu();
  std::string kernels_dir;

  // The program of kernels/<file> built for `side` (built once, then kept).
  cl::Program& program(Side& side, const std::string& file);

  // The user's data "already in pinned memory": block `i` (one per array of a variant) of
  // exactly `bytes`, pinned in the GPU's context (see Pinned). Kept between calls, so that the
  // variants of a sweep share one allocation per size (allocating hundreds of MB of pinned memory
  // takes a while, and a program that keeps its data pinned does it once); reallocated when the
  // size changes. Its contents are whatever the last user left.
  void* user_pinned(unsigned i, std::size_t bytes);
  ~Impl();

 private:
  std::vector<std::unique_ptr<Pinned>> user_pinned_;  // destroyed before the sides (declared after)
};

// The timing loop every baseline uses: reset (untimed), body (timed), verify after the warm-up
// and after the last timed run. Returns the median of the timed runs.
double measure(const Options& o, Stats* stats, const std::function<void()>& reset, const std::function<void()>& body,
               const std::function<void()>& verify);

// Pinned host memory owned by a device's context (CL_MEM_ALLOC_HOST_PTR), mapped for the whole
// of its life: what a program whose data lives in pinned memory works with.
struct Pinned {
  Side& side;
  cl::Buffer buffer;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  Pinned(Side& s, std::size_t bytes);
  ~Pinned();
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
};

inline std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

// Runs a stream of chunks through the GPU on several in-order queues ("slots"). Each slot owns a
// device buffer per vector and, when staged, a pinned staging buffer per vector (allocated with
// CL_MEM_ALLOC_HOST_PTR and mapped once: the mapped pointer is pinned host memory, so transfers
// from it are DMA and asynchronous). For chunk k on slot s: copy the user's data into the
// staging, enqueue the uploads, the kernels and the download, flush; before slot s is reused its
// previous download is waited for and copied out to the user's memory. Meanwhile the other slots'
// transfers and kernels run, so upload, compute and download of consecutive chunks overlap.
// Unstaged (the user's memory is pinned already): transfers go straight from and to it.
class GpuPipeline {
 public:
  struct Stream {
    std::size_t element_bytes = 0;
    const void* in = nullptr;  // host data uploaded before the kernels (nullptr: not uploaded)
    void* out = nullptr;       // host memory the result is downloaded to (nullptr: not downloaded)
  };
  using Launch = std::function<void(unsigned slot, cl::CommandQueue& q, std::size_t first, std::size_t count)>;

  // chunk_elements: elements per chunk (callers round it to their unit).
  GpuPipeline(Side& gpu, std::vector<Stream> streams, std::size_t chunk_elements, unsigned slots, bool staged);
  ~GpuPipeline();
  GpuPipeline(const GpuPipeline&) = delete;
  GpuPipeline& operator=(const GpuPipeline&) = delete;

  unsigned slots() const { return static_cast<unsigned>(slots_.size()); }
  cl::Buffer& buffer(unsigned slot, std::size_t stream) { return slots_.at(slot).device.at(stream); }
  // Runs elements [0, n) of the streams and returns when every result is in the user's memory;
  // `launch` enqueues the kernels of one chunk on q (kernels index the chunk from 0).
  void run(std::size_t n, const Launch& launch);

 private:
  struct Slot {
    std::vector<cl::Buffer> device, staging;
    std::vector<void*> host;  // mapped staging pointers
    cl::Event done;           // the chunk's last download
    bool busy = false;
    std::size_t first = 0, count = 0;
  };
  void drain(Slot& s);

  Side& gpu_;
  std::vector<Stream> streams_;
  std::size_t chunk_;
  bool staged_;
  std::vector<Slot> slots_;
};

}  // namespace sinew_bench::handwritten
