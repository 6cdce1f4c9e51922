// bench/handwritten/filters.cpp — hand-written filter pipeline (kernels/filters.cl: gaussian_noise
// -> solarise -> mirror, in place on an RGBA image) on the CPU, the GPU and both, by lines.
//
// The kernels are called exactly as Sinew's filter_pipeline sample calls them
// (samples/common/filter_pipeline.cpp): gaussian_noise(img, factor, seed, first, count) over
// count/2 work-items (two pixels each), solarise(img, threshold, count) over count work-items,
// mirror(img, width, count) over (width/2, lines); `first` is the slice's first pixel in the image
// and `count` its pixels, a whole number of lines.
#include "detail.hpp"

#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace sinew_bench::handwritten {

namespace {

constexpr std::size_t kRange = 64;

// ----- the C++ reference, line by line the same integer arithmetic as filters.cl -----------------

std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

std::uint8_t add_noise(std::uint8_t v, std::uint32_t pixel, std::uint32_t channel, std::uint32_t seed, int factor) {
  const std::uint32_t h = hash32(pixel * 3U + channel + seed * 0x9e3779b9U);
  const int sum = static_cast<int>(h & 0xffU) + static_cast<int>((h >> 8) & 0xffU) +
                  static_cast<int>((h >> 16) & 0xffU) + static_cast<int>(h >> 24);
  const int noise = ((sum - 510) * factor) / 148;
  return static_cast<std::uint8_t>(std::clamp(static_cast<int>(v) + noise, 0, 255));
}

std::vector<std::uint8_t> reference(const FilterData& d) {
  std::vector<std::uint8_t> img = d.input;
  const std::size_t side = d.side;
  for (std::size_t p = 0; p < d.pixels(); ++p)
    for (std::uint32_t c = 0; c < 3; ++c) {
      std::uint8_t& v = img[4 * p + c];
      v = add_noise(v, static_cast<std::uint32_t>(p), c, d.seed, d.noise_factor);
      if (v >= d.threshold) v = static_cast<std::uint8_t>(255 - v);
    }
  for (std::size_t line = 0; line < side; ++line)
    for (std::size_t x = 0; x < side / 2; ++x)
      for (int c = 0; c < 4; ++c) std::swap(img[4 * (line * side + x) + c], img[4 * (line * side + side - 1 - x) + c]);
  return img;
}

void verify(const FilterData& d, const std::vector<std::uint8_t>& expected, const std::uint8_t* got, const std::string& variant) {
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (got[i] != expected[i]) {
      const std::size_t pixel = i / 4;
      std::ostringstream s;
      s << "handwritten " << variant << ": pixel (x " << pixel % d.side << ", line " << pixel / d.side << ") channel "
        << i % 4 << " is " << int(got[i]) << ", expected " << int(expected[i]);
      throw std::runtime_error(s.str());
    }
}

// The three kernels of one queue, their fixed arguments set.
struct Filters {
  cl::Kernel noise, solarise, mirror;
  std::size_t side;

  Filters(Env& env, Side& dev, const FilterData& d) : side(d.side) {
    cl::Program& p = env.impl().program(dev, "filters.cl");
    noise = cl::Kernel(p, "gaussian_noise");
    solarise = cl::Kernel(p, "solarise");
    mirror = cl::Kernel(p, "mirror");
    noise.setArg(1, static_cast<cl_int>(d.noise_factor));
    noise.setArg(2, static_cast<cl_uint>(d.seed));
    solarise.setArg(1, static_cast<cl_int>(d.threshold));
    mirror.setArg(1, static_cast<cl_uint>(d.side));
  }

  // The pipeline over `count` pixels (whole lines) of `buf`, whose first pixel is pixel `first`
  // of the image.
  void enqueue(cl::CommandQueue& q, cl::Buffer& buf, std::size_t first, std::size_t count) {
    const auto c = static_cast<cl_uint>(count);
    noise.setArg(0, buf);
    noise.setArg(3, static_cast<cl_uint>(first));
    noise.setArg(4, c);
    q.enqueueNDRangeKernel(noise, cl::NullRange, cl::NDRange(round_up(count / 2, kRange)), cl::NullRange);
    solarise.setArg(0, buf);
    solarise.setArg(2, c);
    q.enqueueNDRangeKernel(solarise, cl::NullRange, cl::NDRange(round_up(count, kRange)), cl::NullRange);
    mirror.setArg(0, buf);
    mirror.setArg(2, c);
    q.enqueueNDRangeKernel(mirror, cl::NullRange, cl::NDRange(side / 2, count / side), cl::NullRange);
  }
};

// The CPU's lines: a zero-copy buffer over the user's image, the kernels, a map to make the
// results visible. start() returns at once.
struct CpuPart {
  cl::Buffer buf;
  cl::Event mapped;
  void* ptr = nullptr;
  void start(cl::CommandQueue& q, cl::Context& ctx, Filters& f, std::uint8_t* img, std::size_t pixels) {
    buf = cl::Buffer(ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, pixels * 4, img);
    f.enqueue(q, buf, 0, pixels);
    ptr = q.enqueueMapBuffer(buf, CL_FALSE, CL_MAP_READ, 0, pixels * 4, nullptr, &mapped);
    q.flush();
  }
  void finish(cl::CommandQueue& q) {
    mapped.wait();
    q.enqueueUnmapMemObject(buf, ptr);
    q.finish();
    buf = cl::Buffer();
  }
};

// The GPU's lines, chunked through pinned staging: pixels [base, base + n) of the image.
struct GpuPart {
  std::unique_ptr<GpuPipeline> pipe;
  std::vector<std::unique_ptr<Filters>> filters;
  std::size_t base;
  GpuPart(Env& env, const FilterData& d, std::uint8_t* img, std::size_t base_pixel, const Options& o,
          bool staged = true)
      : base(base_pixel) {
    Side& gpu = env.impl().gpu;
    const std::size_t lines = std::max<std::size_t>(1, o.chunk_bytes / (d.side * 4));
    pipe = std::make_unique<GpuPipeline>(gpu, std::vector<GpuPipeline::Stream>{{4, img + 4 * base, img + 4 * base}},
                                         lines * d.side, o.queues, staged);
    for (unsigned s = 0; s < pipe->slots(); ++s) filters.push_back(std::make_unique<Filters>(env, gpu, d));
  }
  void run(std::size_t pixels) {
    pipe->run(pixels, [&](unsigned s, cl::CommandQueue& q, std::size_t first, std::size_t count) {
      filters[s]->enqueue(q, pipe->buffer(s, 0), base + first, count);
    });
  }
};

}  // namespace

FilterData FilterData::make(std::size_t side) {
  if (side < 2 || side % 2) throw std::invalid_argument("filter pipeline: the image side must be even, not " + std::to_string(side));
  FilterData d;
  d.side = side;
  d.input.resize(4 * side * side);
  std::mt19937 rng(0x5eed);
  for (std::size_t y = 0; y < side; ++y)
    for (std::size_t x = 0; x < side; ++x) {
      std::uint8_t* p = &d.input[4 * (y * side + x)];
      p[0] = static_cast<std::uint8_t>((x * 255) / (side - 1));
      p[1] = static_cast<std::uint8_t>((y * 255) / (side - 1));
      p[2] = static_cast<std::uint8_t>(rng() >> 24);
      p[3] = 255;
    }
  return d;
}

double filters_cpu(Env& env, const FilterData& d, const Options& o, Stats* stats) {
  return filters_split(env, 1.0, d, o, stats);
}

double filters_gpu(Env& env, const FilterData& d, const Options& o, Stats* stats) {
  Side& gpu = env.impl().gpu;
  const std::size_t bytes = d.pixels() * 4;
  Filters f(env, gpu, d);
  cl::CommandQueue& q = gpu.queue(0);
  cl::Buffer buf(gpu.context, CL_MEM_READ_WRITE, bytes);
  std::vector<std::uint8_t> img(bytes);
  const auto expected = reference(d);
  return measure(
      o, stats, [&] { std::copy(d.input.begin(), d.input.end(), img.begin()); },
      [&] {
        q.enqueueWriteBuffer(buf, CL_FALSE, 0, bytes, img.data());
        f.enqueue(q, buf, 0, d.pixels());
        q.enqueueReadBuffer(buf, CL_TRUE, 0, bytes, img.data());
      },
      [&] { verify(d, expected, img.data(), "filters gpu naive"); });
}

double filters_gpu_pinned(Env& env, const FilterData& d, const Options& o, Stats* stats) {
  return filters_split(env, 0.0, d, o, stats);
}

double filters_gpu_pinned_user(Env& env, const FilterData& d, const Options& o, Stats* stats) {
  return filters_split_pinned_user(env, 0.0, d, o, stats);
}

namespace {

// filters_split and filters_split_pinned_user: `img` is the user's image (reset from d.input
// before each run, untimed). The first lines run zero-copy on the CPU, the rest go through the
// GPU pipeline, staged (img pageable) or not (img pinned: transfers straight from and to it).
double split_over(Env& env, double cpu_share, const FilterData& d, std::uint8_t* img, bool staged, const Options& o,
                  Stats* stats, const std::string& what) {
  const std::size_t side = d.side;
  const std::size_t cpu_lines =
      cpu_share >= 1 ? side : cpu_share <= 0 ? 0 : std::min<std::size_t>(side, std::llround(cpu_share * side));
  const std::size_t cpu_pixels = cpu_lines * side, gpu_pixels = d.pixels() - cpu_pixels;
  Side* cpu = cpu_pixels ? &env.impl().need_cpu() : nullptr;
  std::unique_ptr<Filters> cf;
  if (cpu) cf = std::make_unique<Filters>(env, *cpu, d);
  std::unique_ptr<GpuPart> g;
  if (gpu_pixels) g = std::make_unique<GpuPart>(env, d, img, cpu_pixels, o, staged);
  const auto expected = reference(d);
  const std::string name = cpu_lines == side ? "filters cpu zero-copy" + what
                           : cpu_lines == 0  ? std::string(staged ? "filters gpu pinned staging" : "filters gpu") + what
                                             : "filters split (" + std::to_string(cpu_lines) + " cpu lines)" + what;
  return measure(
      o, stats, [&] { std::copy(d.input.begin(), d.input.end(), img); },
      [&] {
        CpuPart part;
        if (cpu) part.start(cpu->queue(0), cpu->context, *cf, img, cpu_pixels);
        if (gpu_pixels) g->run(gpu_pixels);
        if (cpu) part.finish(cpu->queue(0));
      },
      [&] { verify(d, expected, img, name); });
}

}  // namespace

double filters_split(Env& env, double cpu_share, const FilterData& d, const Options& o, Stats* stats) {
  std::vector<std::uint8_t> img(d.pixels() * 4);
  return split_over(env, cpu_share, d, img.data(), /*staged=*/true, o, stats, "");
}

double filters_split_pinned_user(Env& env, double cpu_share, const FilterData& d, const Options& o, Stats* stats) {
  auto* img = static_cast<std::uint8_t*>(env.impl().user_pinned(0, d.pixels() * 4));
  return split_over(env, cpu_share, d, img, /*staged=*/false, o, stats, ", user image pinned");
}

}  // namespace sinew_bench::handwritten
