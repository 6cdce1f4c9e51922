// bench/handwritten/overhead.cpp — the hand-written side of bench_overhead: three tiny kernels in
// a row on one device, written as the plain sequence of OpenCL calls a program makes per
// execution (write, three NDRanges, read, finish), everything else set up once.
#include "detail.hpp"

#include <fstream>
#include <sstream>

namespace sinew_bench::handwritten {

std::vector<DeviceDesc> list_devices() {
  std::vector<DeviceDesc> out;
  for (auto& [p, d] : all_devices())
    out.push_back({p.getInfo<CL_PLATFORM_NAME>(), d.getInfo<CL_DEVICE_NAME>(), d.getInfo<CL_DRIVER_VERSION>(),
                   (d.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) != 0});
  return out;
}

struct TinyPipeline::Impl {
  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
  cl::Program program;
  cl::Kernel square, add, scale;
  cl::Buffer x, t, u;
  std::size_t n = 0;
};

TinyPipeline::TinyPipeline(std::size_t device, std::size_t n, float b, float f, std::string kernels_dir)
    : impl_(std::make_unique<Impl>()) {
  if (kernels_dir.empty()) kernels_dir = default_kernels_dir();
  const auto all = all_devices();
  if (device >= all.size()) throw std::runtime_error("no OpenCL device #" + std::to_string(device));
  Impl& m = *impl_;
  m.n = n;
  m.device = all[device].second;
  m.context = cl::Context(m.device);
  m.queue = cl::CommandQueue(m.context, m.device);
  std::ifstream in(kernels_dir + "/concepts.cl");
  if (!in) throw std::runtime_error("cannot read " + kernels_dir + "/concepts.cl (set SINEW_SOURCE_DIR to the Sinew source tree)");
  std::ostringstream src;
  src << in.rdbuf();
  m.program = cl::Program(m.context, src.str());
  try {
    m.program.build({m.device}, "");
  } catch (const cl::Error&) {
    throw std::runtime_error("building concepts.cl failed:\n" + m.program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(m.device));
  }
  const std::size_t bytes = n * sizeof(float);
  m.x = cl::Buffer(m.context, CL_MEM_READ_ONLY, bytes);
  m.t = cl::Buffer(m.context, CL_MEM_READ_WRITE, bytes);
  m.u = cl::Buffer(m.context, CL_MEM_READ_WRITE, bytes);
  const cl_uint count = static_cast<cl_uint>(n);
  m.square = cl::Kernel(m.program, "square");
  m.square.setArg(0, m.x);
  m.square.setArg(1, m.t);
  m.square.setArg(2, count);
  m.add = cl::Kernel(m.program, "add_scalar");
  m.add.setArg(0, m.t);
  m.add.setArg(1, m.u);
  m.add.setArg(2, b);
  m.add.setArg(3, count);
  m.scale = cl::Kernel(m.program, "scale");
  m.scale.setArg(0, m.u);
  m.scale.setArg(1, f);
  m.scale.setArg(2, count);
}

TinyPipeline::~TinyPipeline() = default;

void TinyPipeline::run(const float* x, float* u) {
  Impl& m = *impl_;
  const std::size_t bytes = m.n * sizeof(float);
  m.queue.enqueueWriteBuffer(m.x, CL_FALSE, 0, bytes, x);
  m.queue.enqueueNDRangeKernel(m.square, cl::NullRange, cl::NDRange(m.n));
  m.queue.enqueueNDRangeKernel(m.add, cl::NullRange, cl::NDRange(m.n));
  m.queue.enqueueNDRangeKernel(m.scale, cl::NullRange, cl::NDRange(m.n));
  m.queue.enqueueReadBuffer(m.u, CL_FALSE, 0, bytes, u);
  m.queue.finish();
}

}  // namespace sinew_bench::handwritten
