// bench/handwritten/handwritten.hpp — hand-written OpenCL baselines for Sinew's benchmarks.
//
// Plain OpenCL 1.2 through the C++ bindings, no Sinew code: what a careful programmer would write
// by hand for the same work as Sinew's samples (saxpy.cl, and the filters.cl pipeline), so that
// bench_saxpy and bench_pipeline can say how far Sinew is from it.
//
// Every function runs its variant `warmup` times (untimed; program builds happen before), then
// `repeat` times timed with std::chrono::steady_clock around the whole run — host-resident input
// in, results back in host memory — and returns the median in milliseconds. It verifies the
// output against a plain C++ reference after the warm-up and after the last timed run, and
// throws std::runtime_error on a mismatch. Resetting the output buffer to its input before each
// run is not timed.
//
// Set-up that a hand-written program does once per problem and keeps is not timed: contexts,
// queues, programs, kernel objects, device buffers and pinned staging buffers. What depends on
// the user's data is timed: zero-copy buffers over the user's arrays, every transfer, every
// memcpy between the user's (pageable) memory and pinned staging, the kernels, map/unmap.
//
// Lifetime and threads: an Env owns every OpenCL object; keep it alive while its functions run.
// One thread at a time per Env.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sinew_bench::handwritten {

// The two devices the baselines use: the first CPU device and the first GPU device of any
// platform. Without a GPU, a second CPU device (e.g. POCL_DEVICES="pthread pthread") stands in
// for it so that the GPU code paths run, and gpu_is_stand_in() says so; with a single CPU device
// the same device is opened a second time in its own context. Without a CPU device (a GPU
// machine with no CPU OpenCL driver) has_cpu() is false and the CPU and split variants throw.
class Env {
 public:
  // Discovers the devices; throws std::runtime_error when there is no device at all. The kernels'
  // sources are read from `kernels_dir` (default: $SINEW_SOURCE_DIR/kernels if that variable is
  // set, else the source tree this library was built from).
  explicit Env(std::string kernels_dir = {});
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  std::string cpu_name() const;
  std::string gpu_name() const;
  // "platform | device | driver" of each device, for the record.
  std::string cpu_description() const;
  std::string gpu_description() const;
  bool gpu_is_stand_in() const;
  bool has_cpu() const;
  const std::string& kernels_dir() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct Options {
  unsigned repeat = 5;                // timed runs (the median is returned)
  unsigned warmup = 1;                // untimed runs first (at least one is always made)
  std::size_t chunk_bytes = 8u << 20; // GPU pipelines: bytes of each vector per chunk
  unsigned queues = 3;                // GPU pipelines: in-order queues (chunks in flight)
};

// Every timed run, for whoever wants more than the median.
struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double iqr_ms = 0;  // interquartile range (quantile(0.75) - quantile(0.25)): how noisy the runs were
  std::vector<double> runs_ms;
};

// The q-quantile (0..1) of `v`, interpolated linearly between the two nearest ranks (as
// numpy.quantile's default); NaN for an empty `v`.
double quantile(std::vector<double> v, double q);

// ----- saxpy: y = a*x + y (kernels/saxpy.cl) ---------------------------------------------------

struct SaxpyData {
  float a = 2.5f;
  std::vector<float> x, y0;  // y0: the input y (the output starts as a copy of it)
  // Random x and y0 in [-1, 1).
  static SaxpyData random(std::size_t n, std::uint64_t seed = 11);
  std::size_t size() const { return x.size(); }
  std::size_t bytes() const { return 3 * x.size() * sizeof(float); }  // read x, y; write y
};

// (a) CPU device alone, zero-copy: CL_MEM_USE_HOST_PTR buffers over the user's arrays, map/unmap.
double saxpy_cpu_zero_copy(Env& env, const SaxpyData& d, const Options& o = {}, Stats* stats = nullptr);
// (b) GPU alone, naive: enqueueWriteBuffer of the whole pageable arrays, kernel, enqueueReadBuffer.
double saxpy_gpu(Env& env, const SaxpyData& d, const Options& o = {}, Stats* stats = nullptr);
// (c) GPU alone, chunked through pinned staging (CL_MEM_ALLOC_HOST_PTR, mapped) on o.queues
// in-order queues: upload of one chunk, the kernel on another and the download of a third
// overlap; the memcpy between the user's pageable arrays and the staging is timed.
double saxpy_gpu_pinned(Env& env, const SaxpyData& d, const Options& o = {}, Stats* stats = nullptr);
// (c') as (c) but the user's arrays already live in pinned memory: no memcpy, transfers straight
// from and to them. (Copying the data into that memory is set-up and not timed; the pinned memory
// is allocated once and kept by the Env, see saxpy_split_pinned_user.) = saxpy_split_pinned_user
// at cpu_share 0.
double saxpy_gpu_pinned_user(Env& env, const SaxpyData& d, const Options& o = {}, Stats* stats = nullptr);
// (d) the first cpu_share of the elements on the CPU device (as (a)), the rest on the GPU (as
// (c)), at the same time. cpu_share 0 and 1 run one device only, through the same code.
double saxpy_split(Env& env, double cpu_share, const SaxpyData& d, const Options& o = {}, Stats* stats = nullptr);
// (d') as (d) but the user's x and y already live in pinned memory (CL_MEM_ALLOC_HOST_PTR in the
// GPU's context, mapped): the CPU's elements are zero-copy (CL_MEM_USE_HOST_PTR) over that same
// memory, the GPU's chunks are transferred straight from and to it (as (c')), no memcpy. The
// pinned memory is allocated once per size and kept by the Env across calls (the user's program
// would have it already); filling it with the data is set-up and not timed.
double saxpy_split_pinned_user(Env& env, double cpu_share, const SaxpyData& d, const Options& o = {},
                               Stats* stats = nullptr);
// The number of elements saxpy_split gives the CPU for a share (rounded to 1024 elements).
std::size_t saxpy_split_cpu_elements(double cpu_share, std::size_t n);

// ----- filter pipeline: gaussian_noise -> solarise -> mirror (kernels/filters.cl) -------------

struct FilterData {
  std::size_t side = 0;             // width = height, even
  int noise_factor = 16;            // the sample's defaults (samples/common/descriptors.hpp)
  int threshold = 192;
  std::uint32_t seed = 2024;
  std::vector<std::uint8_t> input;  // RGBA, 4 bytes a pixel, side * side pixels
  static FilterData make(std::size_t side);
  std::size_t pixels() const { return side * side; }
  std::size_t bytes() const { return 2 * pixels() * 4; }  // read and write every pixel once
};

// CPU device alone, zero-copy over the user's image; the three kernels in one in-order queue.
double filters_cpu(Env& env, const FilterData& d, const Options& o = {}, Stats* stats = nullptr);
// GPU alone, naive: write the whole image, three kernels, read it back (pageable transfers).
double filters_gpu(Env& env, const FilterData& d, const Options& o = {}, Stats* stats = nullptr);
// GPU alone, chunks of whole lines through pinned staging on o.queues queues (as saxpy (c)).
double filters_gpu_pinned(Env& env, const FilterData& d, const Options& o = {}, Stats* stats = nullptr);
// As filters_gpu_pinned but the user's image already lives in pinned memory: no memcpy.
// = filters_split_pinned_user at cpu_share 0.
double filters_gpu_pinned_user(Env& env, const FilterData& d, const Options& o = {}, Stats* stats = nullptr);
// The first cpu_share of the lines on the CPU device (zero-copy), the rest on the GPU (pinned,
// chunked), at the same time.
double filters_split(Env& env, double cpu_share, const FilterData& d, const Options& o = {}, Stats* stats = nullptr);
// As filters_split but the user's image already lives in pinned memory (allocated once per size
// and kept by the Env, as for saxpy_split_pinned_user): the CPU's lines zero-copy over it, the
// GPU's chunks transferred straight from and to it, no memcpy.
double filters_split_pinned_user(Env& env, double cpu_share, const FilterData& d, const Options& o = {},
                                 Stats* stats = nullptr);

// ----- per-execution overhead: three tiny kernels in a row (kernels/concepts.cl) ---------------

// Every OpenCL device of every platform, in discovery order (platforms, then their devices).
struct DeviceDesc {
  std::string platform, name, driver;
  bool gpu = false;
};
std::vector<DeviceDesc> list_devices();
// Where the baselines read kernels from: $SINEW_SOURCE_DIR/kernels, else the source tree this
// library was built from.
std::string default_kernels_dir();

// u = (x*x + b) * f by concepts.cl's square (x -> t), add_scalar (t -> u) and scale (u in place)
// over n floats on one device (an index into list_devices()) in a context of its own. The
// constructor is the set-up a program does once (context, queue, program build, kernels with their
// arguments set, device buffers); run() is what it does per execution: write x, three NDRanges
// over n work-items, read u, finish. One thread at a time.
class TinyPipeline {
 public:
  TinyPipeline(std::size_t device, std::size_t n, float b, float f, std::string kernels_dir = {});
  ~TinyPipeline();
  TinyPipeline(const TinyPipeline&) = delete;
  TinyPipeline& operator=(const TinyPipeline&) = delete;
  void run(const float* x, float* u);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinew_bench::handwritten
