// bench/handwritten/env.cpp — device discovery, program builds, the timing loop and the chunked
// GPU pipeline shared by the hand-written baselines.
#include "detail.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#ifndef SINEW_SOURCE_DIR
#error "SINEW_SOURCE_DIR must name the Sinew source tree (bench/CMakeLists.txt defines it)"
#endif

namespace sinew_bench::handwritten {

namespace {

std::string describe(const cl::Platform& p, const cl::Device& d) {
  return p.getInfo<CL_PLATFORM_NAME>() + " | " + d.getInfo<CL_DEVICE_NAME>() + " | driver " +
         d.getInfo<CL_DRIVER_VERSION>() + " | " + std::to_string(d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>()) +
         " compute units";
}

Side open_side(const cl::Platform& p, const cl::Device& d) {
  Side s;
  s.device = d;
  s.context = cl::Context(d);
  s.name = d.getInfo<CL_DEVICE_NAME>();
  s.description = describe(p, d);
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read kernel source " + path + " (set SINEW_SOURCE_DIR to the Sinew source tree)");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

// $SINEW_HW_TRACE=PREFIX: the GPU pipelines' queues profile, and each run() over n elements
// writes its transfers' device times to PREFIX.n.csv (the last run's stays), to set beside a
// Sinew trace (SINEW_TRACE).
const char* hw_trace() {
  static const char* path = [] {
    const char* p = std::getenv("SINEW_HW_TRACE");
    return p && *p ? p : nullptr;
  }();
  return path;
}

cl::CommandQueue& Side::queue(unsigned i) {
  while (queues.size() <= i)
    queues.emplace_back(context, device, hw_trace() ? cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE) : 0);
  return queues[i];
}

cl::Program& Env::Impl::program(Side& side, const std::string& file) {
  auto it = side.programs.find(file);
  if (it != side.programs.end()) return it->second;
  cl::Program p(side.context, read_file(kernels_dir + "/" + file));
  try {
    p.build({side.device}, "");
  } catch (const cl::Error&) {
    throw std::runtime_error("building " + file + " for " + side.name + " failed:\n" +
                             p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(side.device));
  }
  return side.programs.emplace(file, std::move(p)).first->second;
}

std::vector<std::pair<cl::Platform, cl::Device>> all_devices() {
  std::vector<std::pair<cl::Platform, cl::Device>> out;
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {
    return out;
  }
  for (auto& p : platforms) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;
    }
    for (auto& d : devices) out.emplace_back(p, d);
  }
  return out;
}

std::string default_kernels_dir() {
  const char* env = std::getenv("SINEW_SOURCE_DIR");
  return std::string(env && *env ? env : SINEW_SOURCE_DIR) + "/kernels";
}

Env::Env(std::string kernels_dir) : impl_(std::make_unique<Impl>()) {
  if (kernels_dir.empty()) kernels_dir = default_kernels_dir();
  impl_->kernels_dir = kernels_dir;

  std::vector<std::pair<cl::Platform, cl::Device>> cpus, gpus;
  for (auto& [p, d] : all_devices()) {
    const cl_device_type t = d.getInfo<CL_DEVICE_TYPE>();
    if (t & CL_DEVICE_TYPE_GPU) gpus.emplace_back(p, d);
    else if (t & CL_DEVICE_TYPE_CPU) cpus.emplace_back(p, d);
  }
  if (cpus.empty() && gpus.empty())
    throw std::runtime_error("no OpenCL CPU or GPU device found (check clinfo -l; for PoCL: apt-get install pocl-opencl-icd)");
  impl_->has_cpu = !cpus.empty();
  if (impl_->has_cpu) impl_->cpu = open_side(cpus[0].first, cpus[0].second);
  if (!gpus.empty()) {
    impl_->gpu = open_side(gpus[0].first, gpus[0].second);
  } else {
    // No GPU: a second CPU device stands in (POCL_DEVICES="pthread pthread"), else the same one
    // in a second context, so that the GPU code paths still run.
    impl_->stand_in = true;
    const auto& pick = cpus.size() > 1 ? cpus[1] : cpus[0];
    impl_->gpu = open_side(pick.first, pick.second);
    impl_->gpu.description += cpus.size() > 1 ? " [stand-in for a GPU: second CPU device]"
                                              : " [stand-in for a GPU: the CPU device again, own context]";
  }
}

Env::~Env() = default;

Env::Impl::~Impl() = default;

void* Env::Impl::user_pinned(unsigned i, std::size_t bytes) {
  if (user_pinned_.size() <= i) user_pinned_.resize(i + 1);
  auto& p = user_pinned_[i];
  if (!p || p->bytes != bytes) {
    p.reset();  // free the old block before taking the new one
    p = std::make_unique<Pinned>(gpu, bytes);
  }
  return p->ptr;
}

Side& Env::Impl::need_cpu() {
  if (!has_cpu)
    throw std::runtime_error("no OpenCL CPU device on this machine (install PoCL: apt-get install pocl-opencl-icd)");
  return cpu;
}

std::string Env::cpu_name() const { return impl_->has_cpu ? impl_->cpu.name : "none"; }
std::string Env::gpu_name() const { return impl_->gpu.name; }
std::string Env::cpu_description() const { return impl_->has_cpu ? impl_->cpu.description : "none (no OpenCL CPU device)"; }
std::string Env::gpu_description() const { return impl_->gpu.description; }
bool Env::gpu_is_stand_in() const { return impl_->stand_in; }
bool Env::has_cpu() const { return impl_->has_cpu; }
const std::string& Env::kernels_dir() const { return impl_->kernels_dir; }

double measure(const Options& o, Stats* stats, const std::function<void()>& reset, const std::function<void()>& body,
               const std::function<void()>& verify) {
  const unsigned warmup = std::max(1u, o.warmup), repeat = std::max(1u, o.repeat);
  for (unsigned i = 0; i < warmup; ++i) {
    reset();
    body();
  }
  verify();
  std::vector<double> runs;
  for (unsigned i = 0; i < repeat; ++i) {
    reset();
    const auto t0 = std::chrono::steady_clock::now();
    body();
    runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  verify();
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  const double median = quantile(runs, 0.5);
  if (stats) *stats = Stats{median, *lo, *hi, quantile(runs, 0.75) - quantile(runs, 0.25), runs};
  return median;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const std::size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
}

Pinned::Pinned(Side& s, std::size_t n) : side(s), bytes(n) {
  buffer = cl::Buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, std::max<std::size_t>(n, 1));
  ptr = s.queue(0).enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, std::max<std::size_t>(n, 1));
  std::memset(ptr, 0, n);  // touch it now, not during a timed run
}

Pinned::~Pinned() {
  try {
    side.queue(0).enqueueUnmapMemObject(buffer, ptr);
    side.queue(0).finish();
  } catch (...) {
  }
}

// ----- GpuPipeline ---------------------------------------------------------------------------

GpuPipeline::GpuPipeline(Side& gpu, std::vector<Stream> streams, std::size_t chunk_elements, unsigned slots,
                         bool staged)
    : gpu_(gpu), streams_(std::move(streams)), chunk_(std::max<std::size_t>(1, chunk_elements)), staged_(staged) {
  slots_.resize(std::max(1u, slots));
  for (unsigned s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    cl::CommandQueue& q = gpu_.queue(s);
    for (const auto& st : streams_) {
      const std::size_t bytes = chunk_ * st.element_bytes;
      slot.device.emplace_back(gpu_.context, CL_MEM_READ_WRITE, bytes);
      if (staged_) {
        slot.staging.emplace_back(gpu_.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
        slot.host.push_back(q.enqueueMapBuffer(slot.staging.back(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
        std::memset(slot.host.back(), 0, bytes);  // touch it now, not during the first timed run
      }
    }
  }
}

GpuPipeline::~GpuPipeline() {
  for (unsigned s = 0; s < slots_.size(); ++s) {
    try {
      auto& q = gpu_.queue(s);
      for (std::size_t i = 0; i < slots_[s].host.size(); ++i) q.enqueueUnmapMemObject(slots_[s].staging[i], slots_[s].host[i]);
      q.finish();
    } catch (...) {
    }
  }
}

void GpuPipeline::drain(Slot& s) {
  if (!s.busy) return;
  s.done.wait();
  if (staged_)
    for (std::size_t i = 0; i < streams_.size(); ++i)
      if (streams_[i].out)
        std::memcpy(static_cast<char*>(streams_[i].out) + s.first * streams_[i].element_bytes, s.host[i],
                    s.count * streams_[i].element_bytes);
  s.busy = false;
}

void GpuPipeline::run(std::size_t n, const Launch& launch) {
  const std::size_t chunks = (n + chunk_ - 1) / chunk_;
  struct Traced {
    unsigned queue;
    std::size_t chunk;
    const char* what;
    cl::Event event;
  };
  std::vector<Traced> traced;
  auto event = [&](unsigned q, std::size_t c, const char* what) -> cl::Event* {
    if (!hw_trace()) return nullptr;
    traced.push_back({q, c, what, cl::Event()});
    return &traced.back().event;
  };
  if (hw_trace()) traced.reserve(chunks * streams_.size() * 2);
  for (std::size_t c = 0; c < chunks; ++c) {
    const unsigned s = static_cast<unsigned>(c % slots_.size());
    Slot& slot = slots_[s];
    cl::CommandQueue& q = gpu_.queue(s);
    drain(slot);  // the staging of this slot is free again once its last chunk is copied out
    slot.first = c * chunk_;
    slot.count = std::min(chunk_, n - slot.first);
    slot.done = cl::Event();
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      const auto& st = streams_[i];
      if (!st.in) continue;
      const std::size_t bytes = slot.count * st.element_bytes;
      const char* src = static_cast<const char*>(st.in) + slot.first * st.element_bytes;
      if (staged_) {
        std::memcpy(slot.host[i], src, bytes);
        src = static_cast<const char*>(slot.host[i]);
      }
      q.enqueueWriteBuffer(slot.device[i], CL_FALSE, 0, bytes, src, nullptr, event(s, c, "write"));
    }
    launch(s, q, slot.first, slot.count);
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      const auto& st = streams_[i];
      if (!st.out) continue;
      const std::size_t bytes = slot.count * st.element_bytes;
      void* dst = staged_ ? slot.host[i] : static_cast<char*>(st.out) + slot.first * st.element_bytes;
      q.enqueueReadBuffer(slot.device[i], CL_FALSE, 0, bytes, dst, nullptr, &slot.done);
      if (hw_trace()) traced.push_back({s, c, "read", slot.done});
    }
    if (!slot.done()) q.enqueueMarkerWithWaitList(nullptr, &slot.done);  // no download: wait on a marker
    slot.busy = true;
    q.flush();
  }
  // The last chunks, in the order they were issued.
  for (std::size_t c = chunks > slots_.size() ? chunks - slots_.size() : 0; c < chunks; ++c) drain(slots_[c % slots_.size()]);
  for (unsigned s = 0; s < slots_.size(); ++s) gpu_.queue(s).finish();
  if (!hw_trace()) return;
  std::ofstream out(std::string(hw_trace()) + "." + std::to_string(n) + ".csv");
  out << "queue,chunk,what,queued_us,start_us,end_us\n";
  cl_ulong base = std::numeric_limits<cl_ulong>::max();
  for (auto& t : traced) base = std::min(base, t.event.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
  for (auto& t : traced)
    out << t.queue << ',' << t.chunk << ',' << t.what << ','
        << (t.event.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>() - base) / 1000.0 << ','
        << (t.event.getProfilingInfo<CL_PROFILING_COMMAND_START>() - base) / 1000.0 << ','
        << (t.event.getProfilingInfo<CL_PROFILING_COMMAND_END>() - base) / 1000.0 << '\n';
}

}  // namespace sinew_bench::handwritten
