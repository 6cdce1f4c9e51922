// bench/handwritten/handwritten.cpp — the hand-written OpenCL baselines (see handwritten.hpp):
// device discovery, program builds, the CPU's zero-copy share, the GPU's chunked pipeline, and
// the kernels of saxpy, the filter pipeline and the tiny pipeline.
#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include "common/kernels.hpp"
#include "common/reference.hpp"
#include "handwritten.hpp"
#include "sinew_side.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bench::hw {

namespace detail {
// The library's kernels the baselines run as they are (kernels/scan.cl), embedded by
// bench/CMakeLists.txt.
const std::map<std::string, const char*>& library_kernels();
}  // namespace detail

namespace {

constexpr std::size_t kRange = 64;  // global ranges are rounded up to this (the kernels check count)
std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

// The project's kernels, as the samples embed them: both sides run the very same source.
const std::string& kernel_source(const std::string& file) { return sinew::samples::kernel_text(file); }

cl::Program build(const cl::Context& context, const cl::Device& device, const std::string& file) {
  cl::Program p(context, kernel_source(file));
  try {
    p.build({device}, "");
  } catch (const cl::Error&) {
    throw std::runtime_error("building " + file + " failed:\n" + p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device));
  }
  return p;
}

std::vector<std::pair<cl::Platform, cl::Device>> all_devices() {
  std::vector<std::pair<cl::Platform, cl::Device>> out;
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {
    return out;  // no platform: the ICD loader reports it as an error
  }
  for (auto& p : platforms) try {
      std::vector<cl::Device> devices;
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
      for (auto& d : devices) out.emplace_back(p, d);
    } catch (const cl::Error&) {}
  return out;
}

// One device in its own context, with its programs and in-order queues.
struct Side {
  cl::Device device;
  cl::Context context;
  std::string description;
  std::map<std::string, cl::Program> programs;
  std::vector<cl::CommandQueue> queues;

  void open(const cl::Platform& p, const cl::Device& d) {
    device = d;
    context = cl::Context(d);
    description = p.getInfo<CL_PLATFORM_NAME>() + " | " + d.getInfo<CL_DEVICE_NAME>() + " | driver " +
                  d.getInfo<CL_DRIVER_VERSION>() + " | " + std::to_string(d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>()) +
                  " compute units";
  }
  cl::CommandQueue& queue(unsigned i) {
    while (queues.size() <= i) queues.emplace_back(context, device);
    return queues[i];
  }
  cl::Kernel kernel(const std::string& file, const char* name) {
    auto it = programs.find(file);
    if (it == programs.end()) it = programs.emplace(file, build(context, device, file)).first;
    return cl::Kernel(it->second, name);
  }
};

// Host memory of a context (CL_MEM_ALLOC_HOST_PTR) mapped for its whole life: pinned memory.
struct Pinned {
  cl::CommandQueue queue;
  cl::Buffer buffer;
  void* ptr;
  std::size_t bytes;
  Pinned(Side& s, std::size_t n)
      : queue(s.queue(0)),
        buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, std::max<std::size_t>(n, 1)),
        ptr(queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, std::max<std::size_t>(n, 1))),
        bytes(n) {
    std::memset(ptr, 0, n);  // touched now, not in a timed run
  }
  Pinned(const Pinned&) = delete;
  ~Pinned() {
    try {
      queue.enqueueUnmapMemObject(buffer, ptr);
      queue.finish();
    } catch (...) {}
  }
};

}  // namespace

struct Env::Impl {
  Side cpu, gpu;
  bool has_cpu = false;
  std::vector<std::unique_ptr<Pinned>> user_pinned;  // declared after the sides: freed first

  Side& need_cpu() {
    if (!has_cpu) throw std::runtime_error("no OpenCL CPU device (install PoCL: apt-get install pocl-opencl-icd)");
    return cpu;
  }
  // The user's data "already in pinned memory": block i of exactly `bytes` in the GPU's context,
  // kept between jobs so that the variants of a size share one allocation (a program that keeps
  // its data pinned allocates it once; allocating hundreds of MB of it takes a while).
  void* pinned(unsigned i, std::size_t bytes) {
    if (user_pinned.size() <= i) user_pinned.resize(i + 1);
    if (!user_pinned[i] || user_pinned[i]->bytes != bytes) {
      user_pinned[i].reset();  // free the old block before taking the new one
      user_pinned[i] = std::make_unique<Pinned>(gpu, bytes);
    }
    return user_pinned[i]->ptr;
  }
};

Env::Env() : impl_(std::make_unique<Impl>()) {
  std::vector<std::pair<cl::Platform, cl::Device>> cpus, gpus;
  for (auto& [p, d] : all_devices()) {
    const cl_device_type t = d.getInfo<CL_DEVICE_TYPE>();
    if (t & CL_DEVICE_TYPE_GPU)
      gpus.emplace_back(p, d);
    else if (t & CL_DEVICE_TYPE_CPU)
      cpus.emplace_back(p, d);
  }
  if (cpus.empty() && gpus.empty()) throw std::runtime_error("no OpenCL CPU or GPU device (check clinfo -l)");
  impl_->has_cpu = !cpus.empty();
  if (impl_->has_cpu) impl_->cpu.open(cpus[0].first, cpus[0].second);
  const auto& g = !gpus.empty() ? gpus[0] : cpus.size() > 1 ? cpus[1] : cpus[0];
  impl_->gpu.open(g.first, g.second);
  if (gpus.empty())
    impl_->gpu.description += cpus.size() > 1 ? " [stand-in for a GPU: the second CPU device]"
                                              : " [stand-in for a GPU: the CPU device again, own context]";
}

Env::~Env() = default;
std::string Env::cpu_description() const { return impl_->has_cpu ? impl_->cpu.description : "none"; }
std::string Env::gpu_description() const { return impl_->gpu.description; }
bool Env::has_cpu() const { return impl_->has_cpu; }

namespace {

// One queue's kernels of a workload, their fixed arguments set: enqueue() runs elements [0,
// count) of `buffers`, which hold the workload's elements from `first` on.
struct Kernels {
  virtual ~Kernels() = default;
  virtual void enqueue(cl::CommandQueue& q, std::vector<cl::Buffer>& buffers, std::size_t first, std::size_t count) = 0;
};

// The user's arrays of a workload: each `element_bytes` per element, the output is the last.
struct Array {
  void* data;
  std::size_t element_bytes;
  bool read_only;
};

// The GPU's share, in chunks over several in-order queues ("slots"). Each slot owns a device
// buffer per array and, when staged, a pinned staging buffer per array (mapped once, so that
// transfers from it are DMA). For chunk k on slot s: copy the user's data into the staging,
// enqueue the uploads, the kernels and the download, flush; before slot s is reused its previous
// download is waited for and copied out. Unstaged, transfers go straight from and to the user's
// memory (pinned already, or pageable for the naive path: one slot, one chunk).
class GpuPipeline {
 public:
  GpuPipeline(Side& gpu, std::vector<Array> arrays, std::size_t chunk, unsigned slots, bool staged,
              const std::function<std::unique_ptr<Kernels>(Side&)>& kernels)
      : gpu_(gpu), arrays_(std::move(arrays)), chunk_(std::max<std::size_t>(1, chunk)), staged_(staged), slots_(slots) {
    for (unsigned s = 0; s < slots_.size(); ++s) {
      slots_[s].kernels = kernels(gpu_);
      for (const auto& a : arrays_) {
        const std::size_t bytes = chunk_ * a.element_bytes;
        slots_[s].device.emplace_back(gpu_.context, CL_MEM_READ_WRITE, bytes);
        if (!staged_) continue;
        slots_[s].staging.push_back(std::make_unique<Pinned>(gpu_, bytes));  // mapped once, touched now
      }
    }
  }

  // Elements [0, n) of the arrays, element `base` of the workload on; returns when every result
  // is in the user's memory.
  void run(std::size_t base, std::size_t n) {
    const std::size_t chunks = (n + chunk_ - 1) / chunk_;
    for (std::size_t c = 0; c < chunks; ++c) {
      Slot& slot = slots_[c % slots_.size()];
      cl::CommandQueue& q = gpu_.queue(static_cast<unsigned>(c % slots_.size()));
      drain(slot);  // this slot's staging is free once its last chunk is copied out
      slot.first = c * chunk_;
      slot.count = std::min(chunk_, n - slot.first);
      for (std::size_t i = 0; i < arrays_.size(); ++i) {
        if (i + 1 < arrays_.size() && !arrays_[i].read_only) continue;
        const std::size_t bytes = slot.count * arrays_[i].element_bytes;
        const char* src = static_cast<const char*>(arrays_[i].data) + slot.first * arrays_[i].element_bytes;
        if (staged_) src = static_cast<const char*>(std::memcpy(slot.staging[i]->ptr, src, bytes));
        q.enqueueWriteBuffer(slot.device[i], CL_FALSE, 0, bytes, src);
      }
      slot.kernels->enqueue(q, slot.device, base + slot.first, slot.count);
      Array& out = arrays_.back();
      void* dst = staged_ ? slot.staging.back()->ptr : static_cast<char*>(out.data) + slot.first * out.element_bytes;
      q.enqueueReadBuffer(slot.device.back(), CL_FALSE, 0, slot.count * out.element_bytes, dst, nullptr, &slot.done);
      slot.busy = true;
      q.flush();
    }
    for (std::size_t c = chunks > slots_.size() ? chunks - slots_.size() : 0; c < chunks; ++c)
      drain(slots_[c % slots_.size()]);  // the last chunks, in the order issued
    for (unsigned s = 0; s < slots_.size(); ++s) gpu_.queue(s).finish();
  }

 private:
  struct Slot {
    std::unique_ptr<Kernels> kernels;
    std::vector<cl::Buffer> device;
    std::vector<std::unique_ptr<Pinned>> staging;
    cl::Event done;  // the chunk's download
    bool busy = false;
    std::size_t first = 0, count = 0;
  };
  void drain(Slot& s) {
    if (!s.busy) return;
    s.done.wait();
    const Array& out = arrays_.back();
    if (staged_)
      std::memcpy(static_cast<char*>(out.data) + s.first * out.element_bytes, s.staging.back()->ptr,
                  s.count * out.element_bytes);
    s.busy = false;
  }

  Side& gpu_;
  std::vector<Array> arrays_;
  std::size_t chunk_;
  bool staged_;
  std::vector<Slot> slots_;
};

// A workload over a prepared sample's arrays: the first elements on the CPU device, zero-copy
// (CL_MEM_USE_HOST_PTR buffers, the output mapped at the end, which makes the results visible in
// the user's memory on a device that does not work in it directly), the rest through the GPU
// pipeline, both at once. `unit`: the CPU's share is a whole number of units; `chunk_unit`: a
// chunk is a whole number of these.
class Split final : public Workload {
 public:
  using Factory = std::function<std::unique_ptr<Kernels>(Side&)>;
  Split(Env& env, sinew::samples::Sample& s, const Options& o, std::vector<Array> arrays, std::size_t n,
        std::size_t unit, std::size_t chunk_unit, Factory kernels)
      : env_(env.impl()),
        s_(s), o_(o), arrays_(std::move(arrays)), n_(n), unit_(unit), chunk_unit_(chunk_unit),
        kernels_(std::move(kernels)) {}

  Job naive_gpu() override { return job(0, false, true); }
  Job split(double share, bool user_pinned) override { return job(share, user_pinned, false); }

 private:
  Job job(double share, bool user_pinned, bool naive) {
    const std::size_t cpu_n = share >= 1   ? n_
                              : share <= 0 ? 0
                                           : std::min(n_, std::size_t(std::llround(share * n_ / unit_)) * unit_);
    std::vector<Array> user = arrays_;
    std::vector<std::pair<void*, void*>> copies;  // (the sample's array, its pinned copy)
    for (std::size_t i = 0; user_pinned && i < user.size(); ++i) {
      const std::size_t bytes = n_ * user[i].element_bytes;
      user[i].data = env_.pinned(static_cast<unsigned>(i), bytes);
      if (user[i].read_only)
        std::memcpy(user[i].data, arrays_[i].data, bytes);  // never written: copied once
      else
        copies.emplace_back(arrays_[i].data, user[i].data);
    }
    struct State {
      Side* cpu = nullptr;
      std::unique_ptr<Kernels> cpu_kernels;
      std::unique_ptr<GpuPipeline> gpu;
    };
    auto st = std::make_shared<State>();
    if (cpu_n) st->cpu = &env_.need_cpu(), st->cpu_kernels = kernels_(*st->cpu);
    if (cpu_n < n_) {
      std::vector<Array> rest = user;
      for (auto& a : rest) a.data = static_cast<char*>(a.data) + cpu_n * a.element_bytes;
      const std::size_t per_chunk = std::max<std::size_t>(1, o_.chunk_bytes / (4 * chunk_unit_)) * chunk_unit_;
      st->gpu = std::make_unique<GpuPipeline>(env_.gpu, rest, naive ? n_ : per_chunk, naive ? 1 : o_.queues,
                                              !naive && !user_pinned, kernels_);
    }
    const std::size_t n = n_, out_bytes = n_ * arrays_.back().element_bytes;
    auto* s = &s_;
    return {[s, copies, out_bytes] {
              s->bindings();  // restores the sample's inputs
              for (auto [from, to] : copies) std::memcpy(to, from, out_bytes);
            },
            [st, user, cpu_n, n] {
              std::vector<cl::Buffer> buffers;
              cl::Event mapped;
              void* ptr = nullptr;
              if (st->cpu) {
                for (const auto& a : user)
                  buffers.emplace_back(st->cpu->context,
                                       CL_MEM_USE_HOST_PTR | (a.read_only ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE),
                                       cpu_n * a.element_bytes, a.data);
                cl::CommandQueue& q = st->cpu->queue(0);
                st->cpu_kernels->enqueue(q, buffers, 0, cpu_n);
                ptr = q.enqueueMapBuffer(buffers.back(), CL_FALSE, CL_MAP_READ, 0, cpu_n * user.back().element_bytes,
                                         nullptr, &mapped);
                q.flush();
              }
              if (st->gpu) st->gpu->run(cpu_n, n - cpu_n);
              if (st->cpu) {
                mapped.wait();
                st->cpu->queue(0).enqueueUnmapMemObject(buffers.back(), ptr);
                st->cpu->queue(0).finish();
              }
              return kNaN;
            },
            [s, copies, out_bytes] {
              for (auto [to, from] : copies) std::memcpy(to, from, out_bytes);
              return check_of(*s);
            }};
  }

  Env::Impl& env_;
  sinew::samples::Sample& s_;
  Options o_;
  std::vector<Array> arrays_;
  std::size_t n_, unit_, chunk_unit_;
  Factory kernels_;
};

struct SaxpyKernels final : Kernels {
  cl::Kernel k;
  float a;
  SaxpyKernels(Side& d, float a_) : k(d.kernel("saxpy.cl", "saxpy")), a(a_) {}
  void enqueue(cl::CommandQueue& q, std::vector<cl::Buffer>& b, std::size_t, std::size_t count) override {
    k.setArg(0, b[0]), k.setArg(1, b[1]), k.setArg(2, a), k.setArg(3, static_cast<cl_uint>(count));
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(count, kRange)));
  }
};

// Called as the filter_pipeline sample calls them: gaussian_noise(img, factor, seed, first,
// count) over count/2 work-items (two pixels each; `first` is the slice's first pixel in the
// image), solarise(img, threshold, count) over count, mirror(img, width, count) over (width/2,
// lines).
struct FilterKernels final : Kernels {
  cl::Kernel noise, solarise, mirror;
  std::size_t width;
  FilterKernels(Side& d, const sinew::samples::FilterPipelineParams& p, std::size_t w)
      : noise(d.kernel("filters.cl", "gaussian_noise")),
        solarise(d.kernel("filters.cl", "solarise")),
        mirror(d.kernel("filters.cl", "mirror")),
        width(w) {
    noise.setArg(1, p.noise_factor), noise.setArg(2, p.seed), solarise.setArg(1, p.threshold);
    mirror.setArg(1, static_cast<cl_uint>(w));
  }
  void enqueue(cl::CommandQueue& q, std::vector<cl::Buffer>& b, std::size_t first, std::size_t count) override {
    const auto c = static_cast<cl_uint>(count);
    noise.setArg(0, b[0]), noise.setArg(3, static_cast<cl_uint>(first)), noise.setArg(4, c);
    q.enqueueNDRangeKernel(noise, cl::NullRange, cl::NDRange(round_up(count / 2, kRange)));
    solarise.setArg(0, b[0]), solarise.setArg(2, c);
    q.enqueueNDRangeKernel(solarise, cl::NullRange, cl::NDRange(round_up(count, kRange)));
    mirror.setArg(0, b[0]), mirror.setArg(2, c);
    q.enqueueNDRangeKernel(mirror, cl::NullRange, cl::NDRange(width / 2, count / width));
  }
};

}  // namespace

std::unique_ptr<Workload> saxpy(Env& env, sinew::samples::Saxpy& s, const Options& o) {
  auto b = s.bindings();
  const float a = s.params.a;
  // The CPU's share rounded to 1024 elements; chunks to the 64 of a global range.
  return std::make_unique<Split>(env, s, o, std::vector<Array>{{b.at(0).data, 4, true}, {b.at(1).data, 4, false}},
                                 b.at(1).elements, 1024, kRange,
                                 [a](Side& d) { return std::make_unique<SaxpyKernels>(d, a); });
}

std::unique_ptr<Workload> filters(Env& env, sinew::samples::FilterPipeline& s, const Options& o) {
  auto b = s.bindings();
  const auto p = s.params;
  const std::size_t w = s.width();
  // By whole lines, on both devices.
  return std::make_unique<Split>(env, s, o, std::vector<Array>{{b.at(0).data, 4, false}}, w * s.height(), w, w,
                                 [p, w](Side& d) { return std::make_unique<FilterKernels>(d, p, w); });
}

// ----- the heat loop --------------------------------------------------------------------------

namespace {

// The convergence test's reduction: the largest of the n per-row changes heat_sweep wrote, by one
// work-group (n is a grid side: a few thousand floats).
const char* kRowMax = R"CL(
__kernel void row_max(__global const float* rowdiff, __global float* out, uint n, __local float* scratch) {
  const uint lid = (uint)get_local_id(0), width = (uint)get_local_size(0);
  float m = 0.0f;  // changes are >= 0
  for (uint i = lid; i < n; i += width) m = fmax(m, rowdiff[i]);
  scratch[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = width / 2; step > 0; step /= 2) {
    if (lid < step) scratch[lid] = fmax(scratch[lid], scratch[lid + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[0] = scratch[0];
}
)CL";

// One device's buffers and kernels for the loop, made once (set-up).
struct HeatDevice {
  Side* side = nullptr;
  cl::Buffer grid[2], slice[2], unew, rowdiff, residual;  // slice[i]: grid[i]'s rows 1..n
  cl::Kernel sweep, rowmax;
  std::size_t group = 1, reduce_group = 1;
  bool swap = false;
};

}  // namespace

struct HeatLoop::Impl {
  Env::Impl& env;
  sinew::samples::Heat& s;
  std::size_t n = 0, iterations = 0;
  float alpha = 0, wall = 0, tolerance = 0;
  std::vector<float> u0;
  std::unique_ptr<HeatDevice> dev[2];  // [0] CPU, [1] GPU
  // The last run's result, and the reference (computed on the first check).
  std::size_t ran = 0;
  float residual = 0;
  std::vector<double> expected, expected_residuals;
  float* user = nullptr;  // the sample's grid (its bindings' u)

  Impl(Env& e, sinew::samples::Heat& h) : env(e.impl()), s(h) {
    n = h.params.side;
    iterations = h.params.iterations ? h.params.iterations : sinew::samples::Heat::default_iterations(n);
    alpha = h.params.alpha, wall = h.params.wall, tolerance = h.params.tolerance;
    auto b = h.bindings();  // restores the grid to the initial one
    const auto* u = static_cast<const float*>(b.at(0).data);
    u0.assign(u, u + n * n);
  }

  HeatDevice& device(bool gpu) {
    auto& d = dev[gpu];
    if (d) return *d;
    d = std::make_unique<HeatDevice>();
    Side& side = gpu ? env.gpu : env.need_cpu();
    d->side = &side;
    const std::size_t row = n * sizeof(float), bytes = (n + 2) * row;
    // The sample's work-group: a power of two dividing n, at most 128 (heat.cl's tree reduction).
    while (d->group < 128 && n % (2 * d->group) == 0) d->group *= 2;
    cl::CommandQueue& q = side.queue(0);
    for (auto& g : d->grid) {
      g = cl::Buffer(side.context, CL_MEM_READ_WRITE, bytes);
      q.enqueueFillBuffer(g, wall, 0, bytes);  // the wall rows 0 and n + 1 stay as they are
    }
    const auto align_bits = side.device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>();
    d->swap = (row * 8) % align_bits == 0;
    if (d->swap)
      for (int i = 0; i < 2; ++i) {
        cl_buffer_region r{row, n * row};
        d->slice[i] = d->grid[i].createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r);
      }
    d->unew = cl::Buffer(side.context, CL_MEM_READ_WRITE, n * row);
    d->rowdiff = cl::Buffer(side.context, CL_MEM_READ_WRITE, row);
    d->residual = cl::Buffer(side.context, CL_MEM_READ_WRITE, sizeof(float));
    d->sweep = side.kernel("heat.cl", "heat_sweep");
    d->sweep.setArg(2, d->rowdiff), d->sweep.setArg(3, cl::Local(d->group * sizeof(float)));
    d->sweep.setArg(4, static_cast<cl_uint>(n)), d->sweep.setArg(5, alpha), d->sweep.setArg(6, wall);
    cl::Program p(side.context, std::string(kRowMax));
    p.build({side.device}, "");
    d->rowmax = cl::Kernel(p, "row_max");
    std::size_t limit = std::min<std::size_t>(256, d->rowmax.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(side.device));
    while (d->reduce_group * 2 <= limit) d->reduce_group *= 2;
    d->rowmax.setArg(0, d->rowdiff), d->rowmax.setArg(1, d->residual), d->rowmax.setArg(2, static_cast<cl_uint>(n));
    d->rowmax.setArg(3, cl::Local(d->reduce_group * sizeof(float)));
    q.finish();
    return *d;
  }

  void run(HeatDevice& d, bool swap) {
    cl::CommandQueue& q = d.side->queue(0);
    const std::size_t row = n * sizeof(float);
    q.enqueueWriteBuffer(d.grid[0], CL_FALSE, row, n * row, user);
    int cur = 0;
    ran = 0;
    for (std::size_t i = 0; i < iterations; ++i) {
      d.sweep.setArg(0, d.grid[cur]);
      d.sweep.setArg(1, swap ? d.slice[1 - cur] : d.unew);
      q.enqueueNDRangeKernel(d.sweep, cl::NullRange, cl::NDRange(d.group, n), cl::NDRange(d.group, 1));
      q.enqueueNDRangeKernel(d.rowmax, cl::NullRange, cl::NDRange(d.reduce_group), cl::NDRange(d.reduce_group));
      if (swap)
        cur = 1 - cur;
      else
        q.enqueueCopyBuffer(d.unew, d.grid[0], 0, row, n * row);
      q.enqueueReadBuffer(d.residual, CL_TRUE, 0, sizeof(float), &residual);
      ++ran;
      if (residual < tolerance) break;
    }
    q.enqueueReadBuffer(d.grid[cur], CL_TRUE, row, n * row, user);
  }

  std::string check() {
    if (expected.empty() || expected_residuals.size() != ran) {
      expected.assign(u0.begin(), u0.end());
      expected_residuals.clear();
      sinew::samples::reference::heat(expected, n, ran, alpha, wall, expected_residuals);
    }
    double scale = std::fabs(wall);
    for (float v : u0) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    if (scale == 0) scale = 1;
    const double tol = 8 * FLT_EPSILON * static_cast<double>(ran + 1);
    if (ran == 0) return "no sweep ran";
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const double err = std::fabs(user[i] - expected[i]) / scale;
      if (!(err <= tol))
        return "cell (" + std::to_string(i % n) + ", " + std::to_string(i / n) + "): got " + std::to_string(user[i]) +
               ", expected " + std::to_string(expected[i]) + " after " + std::to_string(ran) + " sweeps";
    }
    if (!(std::fabs(residual - expected_residuals.back()) / scale <= tol))
      return "the last sweep's max change is " + std::to_string(residual) + ", expected " +
             std::to_string(expected_residuals.back());
    if (ran < iterations && !(residual < tolerance)) return "stopped early without converging";
    return "OK";
  }
};

HeatLoop::HeatLoop(Env& env, sinew::samples::Heat& s) : impl_(std::make_shared<Impl>(env, s)) {}
HeatLoop::~HeatLoop() = default;

bool HeatLoop::can_swap(bool gpu) { return impl_->device(gpu).swap; }

Job HeatLoop::job(bool gpu, bool swap) {
  HeatDevice& d = impl_->device(gpu);  // set-up, untimed
  if (swap && !d.swap) throw std::runtime_error("heat: a grid row is not a multiple of the base address alignment");
  auto m = impl_;
  return {[m] { m->user = static_cast<float*>(m->s.bindings().at(0).data); },
          [m, &d, swap] {
            m->run(d, swap);
            return kNaN;
          },
          [m] { return m->check(); }};
}

// ----- the scan -------------------------------------------------------------------------------

namespace {

// One device's scan kernels and its buffers for the blocks' totals of every level, made once.
struct ScanDevice {
  Side* side = nullptr;
  cl::Kernel blocks, add;
  std::size_t local = 1, per_item = 8;
  std::size_t block() const { return local * per_item; }
  std::vector<std::pair<cl::Buffer, std::size_t>> levels;  // level j's totals: buffer, count
  cl::Buffer x, y;                                           // the GPU's copies of the arrays
};

std::size_t scan_groups(std::size_t n, std::size_t block) { return (n + block - 1) / block; }

}  // namespace

struct Scan::Impl {
  Env::Impl& env;
  sinew::samples::PrefixSum& s;
  std::unique_ptr<ScanDevice> dev[2];  // [0] CPU, [1] GPU

  Impl(Env& e, sinew::samples::PrefixSum& p) : env(e.impl()), s(p) {}

  ScanDevice& device(bool gpu) {
    auto& d = dev[gpu];
    if (d) return *d;
    d = std::make_unique<ScanDevice>();
    Side& side = gpu ? env.gpu : env.need_cpu();
    d->side = &side;
    // kernels/scan.cl as sinew::scan builds it for a float sum: the element type and the operator
    // defined in front.
    const std::string source = "#define SINEW_OP(a, b) ((a) + (b))\n#define SINEW_T float\n" +
                               std::string(detail::library_kernels().at("scan.cl"));
    cl::Program p(side.context, source);
    try {
      p.build({side.device}, "");
    } catch (const cl::Error&) {
      throw std::runtime_error("building scan.cl failed:\n" + p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(side.device));
    }
    d->blocks = cl::Kernel(p, "sinew_scan_blocks");
    d->add = cl::Kernel(p, "sinew_scan_add");
    std::size_t local = std::min<std::size_t>(256, side.device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>());
    for (cl::Kernel* k : {&d->blocks, &d->add})
      local = std::min(local, k->getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(side.device));
    while (d->local * 2 <= local) d->local *= 2;
    const std::size_t budget = side.device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>() / 2;
    while (d->per_item > 1 && (d->block() + d->local) * sizeof(float) > budget) d->per_item /= 2;
    const std::size_t n = s.params.elements;
    for (std::size_t count = n; ;) {  // until one block holds a level's totals
      const std::size_t totals = scan_groups(count, d->block());
      d->levels.emplace_back(cl::Buffer(side.context, CL_MEM_READ_WRITE, totals * sizeof(float)), totals);
      if (totals <= 1) break;
      count = totals;
    }
    if (gpu) {
      d->x = cl::Buffer(side.context, CL_MEM_READ_ONLY, n * sizeof(float));
      d->y = cl::Buffer(side.context, CL_MEM_READ_WRITE, n * sizeof(float));
    }
    return *d;
  }

  // What lib/exec/nodes/scan.cpp enqueues for one partition holding everything.
  void enqueue(ScanDevice& d, cl::CommandQueue& q, const cl::Buffer& x, const cl::Buffer& y, std::size_t n) {
    const float identity = 0.0f;
    const cl::Buffer* src = &x;
    const cl::Buffer* dst = &y;
    std::size_t count = n;
    for (std::size_t j = 0; j < d.levels.size(); ++j) {
      d.blocks.setArg(0, *src), d.blocks.setArg(1, *dst), d.blocks.setArg(2, static_cast<cl_uint>(count));
      d.blocks.setArg(3, d.levels[j].first), d.blocks.setArg(4, cl::Local(d.block() * sizeof(float)));
      d.blocks.setArg(5, cl::Local(d.local * sizeof(float))), d.blocks.setArg(6, identity);
      d.blocks.setArg(7, static_cast<cl_uint>(d.per_item));
      d.blocks.setArg(8, static_cast<cl_uint>(j == 0 ? s.params.exclusive : 1));
      q.enqueueNDRangeKernel(d.blocks, cl::NullRange, cl::NDRange(d.levels[j].second * d.local), cl::NDRange(d.local));
      src = dst = &d.levels[j].first;
      count = d.levels[j].second;
    }
    for (std::size_t j = d.levels.size() - 1; j-- > 0;) {
      d.add.setArg(0, j == 0 ? y : d.levels[j - 1].first);
      d.add.setArg(1, static_cast<cl_uint>(j == 0 ? n : d.levels[j - 1].second));
      d.add.setArg(2, d.levels[j].first), d.add.setArg(3, static_cast<cl_uint>(d.per_item));
      q.enqueueNDRangeKernel(d.add, cl::NullRange, cl::NDRange(d.levels[j].second * d.local), cl::NDRange(d.local));
    }
  }

  void run(ScanDevice& d, bool gpu) {
    auto b = s.bindings();
    const std::size_t n = s.params.elements, bytes = n * sizeof(float);
    cl::CommandQueue& q = d.side->queue(0);
    if (gpu) {
      q.enqueueWriteBuffer(d.x, CL_FALSE, 0, bytes, b.at(0).data);
      enqueue(d, q, d.x, d.y, n);
      q.enqueueReadBuffer(d.y, CL_TRUE, 0, bytes, b.at(1).data);
      return;
    }
    cl::Buffer x(d.side->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes, b.at(0).data);
    cl::Buffer y(d.side->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, b.at(1).data);
    enqueue(d, q, x, y, n);
    void* mapped = q.enqueueMapBuffer(y, CL_TRUE, CL_MAP_READ, 0, bytes);
    q.enqueueUnmapMemObject(y, mapped);
    q.finish();
  }
};

Scan::Scan(Env& env, sinew::samples::PrefixSum& s) : impl_(std::make_shared<Impl>(env, s)) {}
Scan::~Scan() = default;

Job Scan::job(bool gpu) {
  ScanDevice& d = impl_->device(gpu);  // set-up, untimed
  auto m = impl_;
  return {[] {},
          [m, &d, gpu] {
            m->run(d, gpu);
            return kNaN;
          },
          [m] {
            auto c = m->s.check();
            return c.ok ? std::string("OK") : c.message;
          }};
}

// ----- loops over a replicated vector (JacobiLoop, NbodyLoop) ----------------------------------

namespace {

// One device's kernels of such a loop, over units [first, first + count) of the vector.
struct LoopKernels {
  virtual ~LoopKernels() = default;
  // Before the loop (timed): what the device's slice of the other vectors needs (an upload, or
  // zero-copy buffers over the user's arrays).
  virtual void begin(cl::CommandQueue&) {}
  // One step: reads `all` (the whole vector), writes the slice's new units at `next`'s start.
  virtual void step(cl::CommandQueue& q, const cl::Buffer& all, const cl::Buffer& next) = 0;
  // After a step: the loop test's value enqueued and read into `value` (not blocking); false
  // when the loop has no test.
  virtual bool value(cl::CommandQueue&, float*, cl::Event*) { return false; }
  // After the loop (timed): the slice's other results back in the user's arrays.
  virtual void end(cl::CommandQueue&) {}
};

// Host memory for a CPU buffer over it (CL_MEM_USE_HOST_PTR), page-aligned.
struct HostBlock {
  void* ptr = nullptr;
  explicit HostBlock(std::size_t bytes) : ptr(std::aligned_alloc(4096, round_up(std::max<std::size_t>(bytes, 1), 4096))) {
    if (!ptr) throw std::bad_alloc();
    std::memset(ptr, 0, bytes);  // touched now, not in a timed run
  }
  HostBlock(const HostBlock&) = delete;
  HostBlock& operator=(const HostBlock&) = delete;
  ~HostBlock() { std::free(ptr); }
};

// The loop on the CPU (units [0, cpu_units)) and the GPU (the rest); see handwritten.hpp.
class Replicated {
 public:
  using Factory = std::function<std::unique_ptr<LoopKernels>(Side&, bool gpu, std::size_t first, std::size_t count)>;
  Replicated(Env::Impl& env, std::size_t units, std::size_t unit_bytes, std::size_t cpu_units, const Factory& make)
      : units_(units), ub_(unit_bytes), cpu_units_(std::min(cpu_units, units)) {
    const std::size_t total = units_ * ub_;
    if (cpu_units_ > 0) {
      Dev& c = dev_[0];
      c.side = &env.need_cpu();
      c.first = 0, c.count = cpu_units_;
      c.k = make(*c.side, false, c.first, c.count);
      scratch_ = std::make_unique<HostBlock>(total);
    }
    if (cpu_units_ < units_) {
      Dev& g = dev_[1];
      g.side = &env.gpu;
      g.first = cpu_units_, g.count = units_ - cpu_units_;
      g.k = make(*g.side, true, g.first, g.count);
      const auto align = g.side->device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8;
      for (int i = 0; i < 2; ++i) {
        g.buf[i] = cl::Buffer(g.side->context, CL_MEM_READ_WRITE, total);
        if (g.first == 0) {
          g.next[i] = g.buf[i];
        } else if ((g.first * ub_) % align == 0) {
          cl_buffer_region r{g.first * ub_, g.count * ub_};
          g.next[i] = g.buf[i].createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r);
        } else {  // a slice that cannot start a sub-buffer is written aside and copied in
          g.next[i] = cl::Buffer(g.side->context, CL_MEM_READ_WRITE, g.count * ub_);
          g.copy_in = true;
        }
      }
      g.side->queue(0).finish();
    }
  }

  // `iterations` steps over the user's vector `user` (at most: `done` sees the values after each
  // step). Returns the steps run.
  std::size_t run(void* user, std::size_t iterations, const std::function<bool(const float*, std::size_t)>& done) {
    const std::size_t total = units_ * ub_;
    Dev& c = dev_[0];
    Dev& g = dev_[1];
    void* host[2] = {user, scratch_ ? scratch_->ptr : nullptr};
    if (c.side) {
      for (int i = 0; i < 2; ++i) c.buf[i] = cl::Buffer(c.side->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, total, host[i]);
      c.next[0] = c.buf[0], c.next[1] = c.buf[1];  // the CPU's units start the vector
      c.k->begin(c.side->queue(0));
    }
    if (g.side) {
      g.side->queue(0).enqueueWriteBuffer(g.buf[0], CL_FALSE, 0, total, user);
      g.k->begin(g.side->queue(0));
    }
    int cur = 0;
    std::size_t ran = 0;
    float values[2];
    while (ran < iterations) {
      std::size_t n_values = 0;
      for (Dev* d : {&c, &g}) {
        if (!d->side) continue;
        cl::CommandQueue& q = d->side->queue(0);
        d->k->step(q, d->buf[cur], d->next[1 - cur]);
        if (d->copy_in) q.enqueueCopyBuffer(d->next[1 - cur], d->buf[1 - cur], 0, d->first * ub_, d->count * ub_);
        d->has_value = d->k->value(q, &values[n_values], &d->read);
        n_values += d->has_value;
        q.flush();
      }
      if (c.side && g.side) {  // the written slices cross: the GPU's into the CPU's next vector, and back
        cl::Event down;
        cl::CommandQueue& gq = g.side->queue(0);
        gq.enqueueReadBuffer(g.buf[1 - cur], CL_FALSE, g.first * ub_, g.count * ub_,
                             static_cast<char*>(host[1 - cur]) + g.first * ub_, nullptr, &down);
        gq.flush();
        c.side->queue(0).finish();
        gq.enqueueWriteBuffer(g.buf[1 - cur], CL_FALSE, 0, c.count * ub_, host[1 - cur]);
        gq.flush();
        down.wait();
      }
      for (Dev* d : {&c, &g})
        if (d->side && d->has_value) d->read.wait();
      cur = 1 - cur;
      ++ran;
      if (done(values, n_values)) break;
    }
    if (c.side) {
      c.k->end(c.side->queue(0));
      c.side->queue(0).finish();
    }
    if (g.side) {
      g.k->end(g.side->queue(0));
      if (!c.side) g.side->queue(0).enqueueReadBuffer(g.buf[cur], CL_FALSE, 0, total, user);
      g.side->queue(0).finish();
    }
    if (c.side && host[cur] != user) std::memcpy(user, host[cur], total);  // the last values ended in the other
    return ran;
  }

 private:
  struct Dev {
    Side* side = nullptr;
    std::unique_ptr<LoopKernels> k;
    std::size_t first = 0, count = 0;
    cl::Buffer buf[2], next[2];
    bool copy_in = false, has_value = false;
    cl::Event read;
  };
  std::size_t units_, ub_, cpu_units_;
  Dev dev_[2];  // [0] CPU, [1] GPU
  std::unique_ptr<HostBlock> scratch_;
};

struct JacobiKernels final : LoopKernels {
  cl::Kernel sweep, rowmax;
  cl::Buffer rowdiff, residual;
  std::size_t n, count, group = 1, reduce_group = 1;
  JacobiKernels(Side& d, std::size_t n_, std::size_t first, std::size_t count_, float alpha, float wall)
      : n(n_), count(count_) {
    while (group < 128 && n % (2 * group) == 0) group *= 2;  // as the tree in bench_loop: a power of two dividing n
    sweep = d.kernel("jacobi.cl", "jacobi_sweep");
    rowdiff = cl::Buffer(d.context, CL_MEM_READ_WRITE, count * sizeof(float));
    residual = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(float));
    sweep.setArg(2, rowdiff), sweep.setArg(3, cl::Local(group * sizeof(float)));
    sweep.setArg(4, static_cast<cl_uint>(first * n)), sweep.setArg(5, static_cast<cl_uint>(n));
    sweep.setArg(6, alpha), sweep.setArg(7, wall);
    cl::Program p(d.context, std::string(kRowMax));
    p.build({d.device}, "");
    rowmax = cl::Kernel(p, "row_max");
    const std::size_t limit = std::min<std::size_t>(256, rowmax.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d.device));
    while (reduce_group * 2 <= limit) reduce_group *= 2;
    rowmax.setArg(0, rowdiff), rowmax.setArg(1, residual), rowmax.setArg(2, static_cast<cl_uint>(count));
    rowmax.setArg(3, cl::Local(reduce_group * sizeof(float)));
  }
  void step(cl::CommandQueue& q, const cl::Buffer& all, const cl::Buffer& next) override {
    sweep.setArg(0, all), sweep.setArg(1, next);
    q.enqueueNDRangeKernel(sweep, cl::NullRange, cl::NDRange(group, count), cl::NDRange(group, 1));
  }
  bool value(cl::CommandQueue& q, float* out, cl::Event* read) override {
    q.enqueueNDRangeKernel(rowmax, cl::NullRange, cl::NDRange(reduce_group), cl::NDRange(reduce_group));
    q.enqueueReadBuffer(residual, CL_FALSE, 0, sizeof(float), out, nullptr, read);
    return true;
  }
};

struct NbodyKernels final : LoopKernels {
  cl::Kernel k;
  Side& side;
  bool gpu;
  std::size_t first, count;
  cl_float4* vel = nullptr;  // the user's velocities (set before each run)
  cl::Buffer vel_buffer;     // the GPU's slice of them (made once), or the CPU's over the user's
  NbodyKernels(Side& d, bool g, std::size_t first_, std::size_t count_, std::size_t n, float dt, float eps2)
      : k(d.kernel("nbody.cl", "nbody_step")), side(d), gpu(g), first(first_), count(count_) {
    if (gpu) vel_buffer = cl::Buffer(d.context, CL_MEM_READ_WRITE, count * sizeof(cl_float4));
    k.setArg(3, static_cast<cl_uint>(first)), k.setArg(4, static_cast<cl_uint>(count));
    k.setArg(5, static_cast<cl_uint>(n)), k.setArg(6, dt), k.setArg(7, eps2);
  }
  void begin(cl::CommandQueue& q) override {
    if (gpu)
      q.enqueueWriteBuffer(vel_buffer, CL_FALSE, 0, count * sizeof(cl_float4), vel + first);
    else
      vel_buffer = cl::Buffer(side.context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, count * sizeof(cl_float4), vel + first);
    k.setArg(1, vel_buffer);
  }
  void step(cl::CommandQueue& q, const cl::Buffer& all, const cl::Buffer& next) override {
    k.setArg(0, all), k.setArg(2, next);
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(count, kRange)));
  }
  void end(cl::CommandQueue& q) override {
    if (gpu) q.enqueueReadBuffer(vel_buffer, CL_FALSE, 0, count * sizeof(cl_float4), vel + first);
  }
};

}  // namespace

struct JacobiLoop::Impl {
  Env::Impl& env;
  std::size_t n, iterations;
  float alpha, wall, tolerance;
  std::map<std::size_t, std::shared_ptr<Replicated>> loops;  // by CPU rows: set-up made once
  std::size_t ran = 0;
  float residual = 0;
  std::vector<float> initial;  // the grid the reference starts from
  std::vector<double> expected, expected_residuals;

  std::string check(const float* grid, std::size_t r, float res) {
    if (r == 0) return "no sweep ran";
    if (expected.empty() || expected_residuals.size() != r) {
      expected.assign(initial.begin(), initial.end());
      sinew::samples::reference::heat(expected, n, r, alpha, wall, expected_residuals);
    }
    double scale = std::fabs(wall);
    for (float v : initial) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    if (scale == 0) scale = 1;
    const double tol = 8 * FLT_EPSILON * static_cast<double>(r + 1);
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (!(std::fabs(grid[i] - expected[i]) / scale <= tol))
        return "cell (" + std::to_string(i % n) + ", " + std::to_string(i / n) + "): got " + std::to_string(grid[i]) +
               ", expected " + std::to_string(expected[i]) + " after " + std::to_string(r) + " sweeps";
    if (!(std::fabs(res - expected_residuals.back()) / scale <= tol))
      return "the last sweep's max change is " + std::to_string(res) + ", expected " +
             std::to_string(expected_residuals.back());
    if (r < iterations && !(res < tolerance)) return "stopped early without converging";
    return "OK";
  }
};

JacobiLoop::JacobiLoop(Env& env, std::size_t n, std::size_t iterations, float alpha, float wall, float tolerance)
    : impl_(std::make_shared<Impl>(Impl{env.impl(), n, iterations, alpha, wall, tolerance, {}, 0, 0, {}, {}, {}})) {}
JacobiLoop::~JacobiLoop() = default;

std::string JacobiLoop::check(const float* grid, std::size_t ran, float residual) {
  return impl_->check(grid, ran, residual);
}

Job JacobiLoop::job(std::size_t cpu_rows, float* grid, const std::vector<float>& initial) {
  auto m = impl_;
  m->initial = initial;
  auto& loop = m->loops[cpu_rows];
  if (!loop) {  // set-up, untimed
    const std::size_t n = m->n;
    const float alpha = m->alpha, wall = m->wall;
    loop = std::make_shared<Replicated>(m->env, n, n * sizeof(float), cpu_rows,
                                        [&](Side& d, bool, std::size_t first, std::size_t count) {
                                          return std::make_unique<JacobiKernels>(d, n, first, count, alpha, wall);
                                        });
  }
  auto l = loop;
  return {[m, grid] { std::copy(m->initial.begin(), m->initial.end(), grid); },
          [m, l, grid] {
            m->ran = l->run(grid, m->iterations, [m](const float* v, std::size_t k) {
              m->residual = *std::max_element(v, v + k);
              return m->residual < m->tolerance;
            });
            return kNaN;
          },
          [m, grid] { return m->check(grid, m->ran, m->residual); }};
}

struct NbodyLoop::Impl {
  Env::Impl& env;
  sinew::samples::Nbody& s;
  std::map<std::size_t, std::shared_ptr<Replicated>> loops;
  std::map<std::size_t, std::vector<NbodyKernels*>> kernels;  // each loop's, to point at the user's arrays
};

NbodyLoop::NbodyLoop(Env& env, sinew::samples::Nbody& s) : impl_(std::make_shared<Impl>(Impl{env.impl(), s, {}, {}})) {}
NbodyLoop::~NbodyLoop() = default;

Job NbodyLoop::job(std::size_t cpu_bodies) {
  auto m = impl_;
  auto& loop = m->loops[cpu_bodies];
  const std::size_t n = m->s.params.bodies;
  if (!loop) {
    const float dt = m->s.params.dt, eps2 = m->s.params.softening * m->s.params.softening;
    auto& ks = m->kernels[cpu_bodies];
    loop = std::make_shared<Replicated>(m->env, n, sizeof(cl_float4), cpu_bodies,
                                        [&](Side& d, bool gpu, std::size_t first, std::size_t count) {
                                          auto k = std::make_unique<NbodyKernels>(d, gpu, first, count, n, dt, eps2);
                                          ks.push_back(k.get());
                                          return k;
                                        });
  }
  auto l = loop;
  auto bindings = std::make_shared<std::vector<sinew::Binding>>();
  return {[m, bindings] { *bindings = m->s.bindings(); },
          [m, l, bindings, cpu_bodies] {
            for (NbodyKernels* k : m->kernels.at(cpu_bodies)) k->vel = static_cast<cl_float4*>(bindings->at(1).data);
            l->run(bindings->at(0).data, m->s.params.steps, [](const float*, std::size_t) { return false; });
            return kNaN;
          },
          [m] { return check_of(m->s); }};
}

std::vector<DeviceDesc> list_devices() {
  std::vector<DeviceDesc> out;
  for (auto& [p, d] : all_devices()) out.push_back({p.getInfo<CL_PLATFORM_NAME>(), d.getInfo<CL_DEVICE_NAME>()});
  return out;
}

struct TinyPipeline::Impl {
  cl::Context context;
  cl::CommandQueue queue;
  cl::Program program;
  cl::Kernel square, add, scale;
  cl::Buffer x, t, u;
  std::size_t n = 0;
};

TinyPipeline::TinyPipeline(std::size_t device, std::size_t n, float b, float f) : impl_(std::make_unique<Impl>()) {
  const auto all = all_devices();
  if (device >= all.size()) throw std::runtime_error("no OpenCL device #" + std::to_string(device));
  Impl& m = *impl_;
  const cl::Device& d = all[device].second;
  m.n = n;
  m.context = cl::Context(d);
  m.queue = cl::CommandQueue(m.context, d);
  m.program = build(m.context, d, "concepts.cl");
  m.x = cl::Buffer(m.context, CL_MEM_READ_ONLY, n * sizeof(float));
  m.t = cl::Buffer(m.context, CL_MEM_READ_WRITE, n * sizeof(float));
  m.u = cl::Buffer(m.context, CL_MEM_READ_WRITE, n * sizeof(float));
  const auto count = static_cast<cl_uint>(n);
  m.square = cl::Kernel(m.program, "square");
  m.square.setArg(0, m.x), m.square.setArg(1, m.t), m.square.setArg(2, count);
  m.add = cl::Kernel(m.program, "add_scalar");
  m.add.setArg(0, m.t), m.add.setArg(1, m.u), m.add.setArg(2, b), m.add.setArg(3, count);
  m.scale = cl::Kernel(m.program, "scale");
  m.scale.setArg(0, m.u), m.scale.setArg(1, f), m.scale.setArg(2, count);
}

TinyPipeline::~TinyPipeline() = default;

void TinyPipeline::run(const float* x, float* u) {
  Impl& m = *impl_;
  m.queue.enqueueWriteBuffer(m.x, CL_FALSE, 0, m.n * sizeof(float), x);
  m.queue.enqueueNDRangeKernel(m.square, cl::NullRange, cl::NDRange(m.n));
  m.queue.enqueueNDRangeKernel(m.add, cl::NullRange, cl::NDRange(m.n));
  m.queue.enqueueNDRangeKernel(m.scale, cl::NullRange, cl::NDRange(m.n));
  m.queue.enqueueReadBuffer(m.u, CL_FALSE, 0, m.n * sizeof(float), u);
  m.queue.finish();
}

}  // namespace bench::hw
