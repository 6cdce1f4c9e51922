// bench/handwritten/saxpy.cpp — hand-written saxpy (kernels/saxpy.cl) on the CPU, the GPU and both.
#include "detail.hpp"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace sinew_bench::handwritten {

namespace {

constexpr std::size_t kRange = 64;  // global ranges are rounded up to this (the kernel checks count)

void verify(const SaxpyData& d, const float* y, const char* variant) {
  for (std::size_t i = 0; i < d.size(); ++i) {
    const float want = std::fma(d.a, d.x[i], d.y0[i]);
    const double scale = std::fabs(static_cast<double>(d.a) * d.x[i]) + std::fabs(d.y0[i]) + 1e-30;
    const double err = std::fabs(static_cast<double>(y[i]) - want) / scale;
    if (!(err <= 4 * FLT_EPSILON)) {
      std::ostringstream s;
      s << "handwritten " << variant << ": element " << i << " of " << d.size() << " is " << y[i] << ", expected "
        << want;
      throw std::runtime_error(s.str());
    }
  }
}

cl::Kernel saxpy_kernel(Env& env, Side& side) { return cl::Kernel(env.impl().program(side, "saxpy.cl"), "saxpy"); }

// The CPU device's part of a run: buffers over the user's arrays (zero-copy), the kernel, and a
// map of y that makes the results visible in the user's memory. start() returns at once.
struct CpuPart {
  cl::Buffer bx, by;
  cl::Event mapped;
  void* ptr = nullptr;
  std::size_t bytes = 0;

  void start(cl::CommandQueue& q, cl::Context& ctx, cl::Kernel& k, const float* x, float* y, std::size_t n, float a) {
    bytes = n * sizeof(float);
    bx = cl::Buffer(ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, bytes, const_cast<float*>(x));
    by = cl::Buffer(ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, bytes, y);
    k.setArg(0, bx);
    k.setArg(1, by);
    k.setArg(2, a);
    k.setArg(3, static_cast<cl_uint>(n));
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(n, kRange)), cl::NullRange);
    ptr = q.enqueueMapBuffer(by, CL_FALSE, CL_MAP_READ, 0, bytes, nullptr, &mapped);
    q.flush();
  }
  void finish(cl::CommandQueue& q) {
    mapped.wait();
    q.enqueueUnmapMemObject(by, ptr);
    q.finish();
    bx = cl::Buffer();
    by = cl::Buffer();
  }
};

// The GPU pipeline for saxpy over x[0..n) and y[0..n) (y read and written), with one kernel
// object per slot.
struct GpuSaxpy {
  std::unique_ptr<GpuPipeline> pipe;
  std::vector<cl::Kernel> kernels;
  float a;

  GpuSaxpy(Env& env, const float* x, float* y, float a_, const Options& o, bool staged) : a(a_) {
    Side& gpu = env.impl().gpu;
    const std::size_t chunk = std::max<std::size_t>(kRange, o.chunk_bytes / sizeof(float) / kRange * kRange);
    pipe = std::make_unique<GpuPipeline>(
        gpu, std::vector<GpuPipeline::Stream>{{sizeof(float), x, nullptr}, {sizeof(float), y, y}}, chunk, o.queues,
        staged);
    for (unsigned s = 0; s < pipe->slots(); ++s) {
      kernels.push_back(saxpy_kernel(env, gpu));
      kernels.back().setArg(0, pipe->buffer(s, 0));
      kernels.back().setArg(1, pipe->buffer(s, 1));
      kernels.back().setArg(2, a);
    }
  }
  void run(std::size_t n) {
    pipe->run(n, [&](unsigned s, cl::CommandQueue& q, std::size_t, std::size_t count) {
      kernels[s].setArg(3, static_cast<cl_uint>(count));
      q.enqueueNDRangeKernel(kernels[s], cl::NullRange, cl::NDRange(round_up(count, kRange)), cl::NullRange);
    });
  }
};

}  // namespace

SaxpyData SaxpyData::random(std::size_t n, std::uint64_t seed) {
  SaxpyData d;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  d.x.resize(n);
  d.y0.resize(n);
  for (auto& v : d.x) v = u(rng);
  for (auto& v : d.y0) v = u(rng);
  return d;
}

std::size_t saxpy_split_cpu_elements(double cpu_share, std::size_t n) {
  if (!(cpu_share > 0)) return 0;
  if (cpu_share >= 1) return n;
  const std::size_t e = static_cast<std::size_t>(std::llround(cpu_share * static_cast<double>(n) / 1024.0)) * 1024;
  return std::min(e, n);
}

double saxpy_cpu_zero_copy(Env& env, const SaxpyData& d, const Options& o, Stats* stats) {
  Side& cpu = env.impl().need_cpu();
  cl::Kernel k = saxpy_kernel(env, cpu);
  cl::CommandQueue& q = cpu.queue(0);
  std::vector<float> y(d.size());
  return measure(
      o, stats, [&] { std::copy(d.y0.begin(), d.y0.end(), y.begin()); },
      [&] {
        CpuPart part;
        part.start(q, cpu.context, k, d.x.data(), y.data(), d.size(), d.a);
        part.finish(q);
      },
      [&] { verify(d, y.data(), "saxpy cpu zero-copy"); });
}

double saxpy_gpu(Env& env, const SaxpyData& d, const Options& o, Stats* stats) {
  Side& gpu = env.impl().gpu;
  const std::size_t n = d.size(), bytes = n * sizeof(float);
  cl::Kernel k = saxpy_kernel(env, gpu);
  cl::CommandQueue& q = gpu.queue(0);
  cl::Buffer dx(gpu.context, CL_MEM_READ_ONLY, bytes), dy(gpu.context, CL_MEM_READ_WRITE, bytes);
  k.setArg(0, dx);
  k.setArg(1, dy);
  k.setArg(2, d.a);
  k.setArg(3, static_cast<cl_uint>(n));
  std::vector<float> y(n);
  return measure(
      o, stats, [&] { std::copy(d.y0.begin(), d.y0.end(), y.begin()); },
      [&] {
        q.enqueueWriteBuffer(dx, CL_FALSE, 0, bytes, d.x.data());
        q.enqueueWriteBuffer(dy, CL_FALSE, 0, bytes, y.data());
        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(n, kRange)), cl::NullRange);
        q.enqueueReadBuffer(dy, CL_TRUE, 0, bytes, y.data());
      },
      [&] { verify(d, y.data(), "saxpy gpu naive"); });
}

double saxpy_gpu_pinned(Env& env, const SaxpyData& d, const Options& o, Stats* stats) {
  std::vector<float> y(d.size());
  GpuSaxpy g(env, d.x.data(), y.data(), d.a, o, /*staged=*/true);
  return measure(
      o, stats, [&] { std::copy(d.y0.begin(), d.y0.end(), y.begin()); }, [&] { g.run(d.size()); },
      [&] { verify(d, y.data(), "saxpy gpu pinned staging"); });
}

double saxpy_gpu_pinned_user(Env& env, const SaxpyData& d, const Options& o, Stats* stats) {
  return saxpy_split_pinned_user(env, 0.0, d, o, stats);
}

namespace {

// saxpy_split and saxpy_split_pinned_user: the user's arrays are x and y (y is reset from d.y0
// before each run, untimed). The first cpu_n elements run zero-copy on the CPU, the rest go
// through the GPU pipeline, staged (x, y pageable: memcpy through pinned staging) or not (x, y
// pinned: transfers straight from and to them).
double split_over(Env& env, double cpu_share, const SaxpyData& d, const float* x, float* y, bool staged,
                  const Options& o, Stats* stats, const std::string& name) {
  const std::size_t n = d.size(), cpu_n = saxpy_split_cpu_elements(cpu_share, n), gpu_n = n - cpu_n;
  Side* cpu = cpu_n ? &env.impl().need_cpu() : nullptr;
  cl::Kernel k;
  if (cpu) k = saxpy_kernel(env, *cpu);
  std::unique_ptr<GpuSaxpy> g;
  if (gpu_n) g = std::make_unique<GpuSaxpy>(env, x + cpu_n, y + cpu_n, d.a, o, staged);
  return measure(
      o, stats, [&] { std::copy(d.y0.begin(), d.y0.end(), y); },
      [&] {
        CpuPart part;
        if (cpu) part.start(cpu->queue(0), cpu->context, k, x, y, cpu_n, d.a);
        if (gpu_n) g->run(gpu_n);
        if (cpu) part.finish(cpu->queue(0));
      },
      [&] { verify(d, y, name.c_str()); });
}

}  // namespace

double saxpy_split(Env& env, double cpu_share, const SaxpyData& d, const Options& o, Stats* stats) {
  std::vector<float> y(d.size());
  return split_over(env, cpu_share, d, d.x.data(), y.data(), /*staged=*/true, o, stats,
                    "saxpy split (cpu share " + std::to_string(cpu_share) + ")");
}

double saxpy_split_pinned_user(Env& env, double cpu_share, const SaxpyData& d, const Options& o, Stats* stats) {
  const std::size_t bytes = d.size() * sizeof(float);
  auto* x = static_cast<float*>(env.impl().user_pinned(0, bytes));
  auto* y = static_cast<float*>(env.impl().user_pinned(1, bytes));
  std::copy(d.x.begin(), d.x.end(), x);  // the user's data, already pinned (set-up, untimed)
  return split_over(env, cpu_share, d, x, y, /*staged=*/false, o, stats,
                    cpu_share <= 0 ? std::string("saxpy gpu, user data pinned")
                                   : "saxpy split, user data pinned (cpu share " + std::to_string(cpu_share) + ")");
}

}  // namespace sinew_bench::handwritten
