// bench/starpu/starpu_side.cpp — the StarPU side of bench_starpu: session set-up, codelets with
// a CPU implementation (plain C++ loops) and an OpenCL implementation (the project's kernels),
// history-based performance models for dmda, and one blocked execution of each problem.
//
// The CPU loops compute exactly what kernels/saxpy.cl and kernels/filters.cl compute (integer
// filters bit for bit; saxpy within the sample's tolerance, with or without a fused multiply-add).
// They are compiled for generic x86-64 and, through target_clones, for x86-64-v3 (AVX2, FMA)
// and v4 (AVX-512), chosen at load time: a careful StarPU user's portable CPU code, where PoCL
// compiles the OpenCL kernels for the host CPU.
#define CL_TARGET_OPENCL_VERSION 120  // clCreateSubBuffer (StarPU's header would pick 1.0)
#include "starpu_side.hpp"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <utility>

#if defined(__x86_64__) && defined(__GNUC__)
#define SINEW_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SINEW_CPU_CLONES
#endif

namespace sinew_bench::starpu {

namespace {

constexpr std::size_t kRange = 64;  // global ranges rounded up to this, as the hand-written baselines do
std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

// ----- codelet error reporting ---------------------------------------------------------------
// A codelet runs on a StarPU worker thread inside C code: it cannot throw. It records the first
// failure here, does nothing more, and the session throws after the execution.
std::mutex g_error_mutex;
std::string g_error;
std::atomic<bool> g_failed{false};

void fail(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  if (!g_failed.exchange(true)) g_error = what;
}

// Tasks run per worker kind in the current execution (for the placement line).
std::atomic<unsigned> g_tasks_cpu{0}, g_tasks_opencl{0}, g_tasks_opencl_cpu{0};

// The OpenCL programs of the current session (one per OpenCL device, built by StarPU), and which
// OpenCL devices (by StarPU devid) are CPUs.
starpu_opencl_program g_saxpy_program, g_filters_program;
bool g_opencl_is_cpu[STARPU_MAXOPENCLDEVS] = {};

bool device_is_cpu(int devid) {
  cl_device_id dev;
  starpu_opencl_get_device(devid, &dev);
  cl_device_type type = 0;
  clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
  return (type & CL_DEVICE_TYPE_CPU) != 0;
}

// ----- the C++ loops (CPU workers) -----------------------------------------------------------

SINEW_CPU_CLONES void saxpy_loop(float a, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

inline std::uint32_t hash32(std::uint32_t x) {  // filters.cl's sinew_hash32
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

inline std::uint8_t add_noise(std::uint8_t v, std::uint32_t pixel, std::uint32_t channel, std::uint32_t seed, int factor) {
  const std::uint32_t h = hash32(pixel * 3U + channel + seed * 0x9e3779b9U);
  const int sum = static_cast<int>(h & 0xffU) + static_cast<int>((h >> 8) & 0xffU) +
                  static_cast<int>((h >> 16) & 0xffU) + static_cast<int>(h >> 24);
  const int noise = ((sum - 510) * factor) / 148;
  return static_cast<std::uint8_t>(std::clamp(static_cast<int>(v) + noise, 0, 255));
}

// `first` is the global index of the block's first pixel: the noise depends on it, never on the
// partitioning.
SINEW_CPU_CLONES void noise_loop(std::uint8_t* img, std::size_t width, std::size_t lines, std::size_t ld,
                                 std::uint32_t first, int factor, std::uint32_t seed) {
  for (std::size_t y = 0; y < lines; ++y) {
    std::uint8_t* line = img + 4 * y * ld;
    const std::uint32_t base = first + static_cast<std::uint32_t>(y * width);
    for (std::size_t x = 0; x < width; ++x)
      for (std::uint32_t c = 0; c < 3; ++c)
        line[4 * x + c] = add_noise(line[4 * x + c], base + static_cast<std::uint32_t>(x), c, seed, factor);
  }
}

SINEW_CPU_CLONES void solarise_loop(std::uint8_t* img, std::size_t width, std::size_t lines, std::size_t ld, int threshold) {
  for (std::size_t y = 0; y < lines; ++y) {
    std::uint8_t* line = img + 4 * y * ld;
    for (std::size_t x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        const int v = line[4 * x + c];
        line[4 * x + c] = static_cast<std::uint8_t>(v >= threshold ? 255 - v : v);
      }
  }
}

SINEW_CPU_CLONES void mirror_loop(std::uint8_t* img, std::size_t width, std::size_t lines, std::size_t ld) {
  for (std::size_t y = 0; y < lines; ++y) {
    std::uint32_t* line = reinterpret_cast<std::uint32_t*>(img + 4 * y * ld);
    for (std::size_t x = 0; x < width / 2; ++x) std::swap(line[x], line[width - 1 - x]);
  }
}

// ----- CPU codelets --------------------------------------------------------------------------

void saxpy_cpu(void* buffers[], void* cl_arg) {
  float a;
  starpu_codelet_unpack_args(cl_arg, &a);
  const auto n = STARPU_VECTOR_GET_NX(buffers[0]);
  saxpy_loop(a, reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[0])),
             reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[1])), n);
  g_tasks_cpu++;
}

struct Image {
  std::uint8_t* ptr;
  std::size_t width, lines, ld;
};
Image cpu_image(void* buffer) {
  return {reinterpret_cast<std::uint8_t*>(STARPU_MATRIX_GET_PTR(buffer)), STARPU_MATRIX_GET_NX(buffer),
          STARPU_MATRIX_GET_NY(buffer), STARPU_MATRIX_GET_LD(buffer)};
}

void noise_cpu(void* buffers[], void* cl_arg) {
  std::int32_t factor;
  std::uint32_t seed, first;
  starpu_codelet_unpack_args(cl_arg, &factor, &seed, &first);
  const Image im = cpu_image(buffers[0]);
  noise_loop(im.ptr, im.width, im.lines, im.ld, first, factor, seed);
  g_tasks_cpu++;
}

void solarise_cpu(void* buffers[], void* cl_arg) {
  std::int32_t threshold;
  starpu_codelet_unpack_args(cl_arg, &threshold);
  const Image im = cpu_image(buffers[0]);
  solarise_loop(im.ptr, im.width, im.lines, im.ld, threshold);
  g_tasks_cpu++;
}

void mirror_cpu(void* buffers[], void*) {
  const Image im = cpu_image(buffers[0]);
  mirror_loop(im.ptr, im.width, im.lines, im.ld);
  g_tasks_cpu++;
}

// ----- OpenCL codelets -----------------------------------------------------------------------

// A kernel of this worker's device with its queue; released when done. Launches are synchronous
// (clFinish before returning), so StarPU's performance model times the kernel itself.
class Launch {
 public:
  Launch(starpu_opencl_program* program, const char* name) : name_(name) {
    const int worker = starpu_worker_get_id_check();
    devid_ = starpu_worker_get_devid(worker);
    const int err = starpu_opencl_load_kernel(&kernel_, &queue_, program, name, devid_);
    if (err != CL_SUCCESS) {
      fail(std::string("starpu_opencl_load_kernel(") + name + ") failed: OpenCL error " + std::to_string(err));
      kernel_ = nullptr;
    }
    on_cpu_ = devid_ >= 0 && devid_ < STARPU_MAXOPENCLDEVS && g_opencl_is_cpu[devid_];
  }
  ~Launch() {
    for (cl_mem m : subs_) clReleaseMemObject(m);
    if (kernel_) starpu_opencl_release_kernel(kernel_);
  }
  bool ok() const { return kernel_ != nullptr && !g_failed; }

  // The cl_mem of a buffer interface's data: StarPU gives a device handle and a byte offset into
  // it. Sub-handles allocated on the device on their own have offset 0; otherwise a sub-buffer
  // stands for the region (the kernels take plain pointers).
  cl_mem memory(uintptr_t dev_handle, std::size_t offset, std::size_t bytes) {
    cl_mem m = reinterpret_cast<cl_mem>(dev_handle);
    if (offset == 0) return m;
    cl_buffer_region region{offset, bytes};
    cl_int err = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) {
      fail(std::string(name_) + ": clCreateSubBuffer at offset " + std::to_string(offset) + " failed: OpenCL error " +
           std::to_string(err) + " (the offset is not a multiple of the device's base address alignment)");
      return m;
    }
    subs_.push_back(sub);
    return sub;
  }

  template <class T>
  void arg(cl_uint index, const T& value) {
    if (!ok()) return;
    const cl_int err = clSetKernelArg(kernel_, index, sizeof(T), &value);
    if (err != CL_SUCCESS) fail(std::string(name_) + ": clSetKernelArg(" + std::to_string(index) + ") failed: " + std::to_string(err));
  }

  void run(cl_uint dims, const std::size_t* global) {
    if (!ok()) return;
    cl_int err = clEnqueueNDRangeKernel(queue_, kernel_, dims, nullptr, global, nullptr, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = clFinish(queue_);
    if (err != CL_SUCCESS) {
      fail(std::string(name_) + ": clEnqueueNDRangeKernel/clFinish failed: OpenCL error " + std::to_string(err));
      return;
    }
    (on_cpu_ ? g_tasks_opencl_cpu : g_tasks_opencl)++;
  }

 private:
  const char* name_;
  int devid_ = 0;
  cl_kernel kernel_ = nullptr;
  cl_command_queue queue_ = nullptr;
  bool on_cpu_ = false;
  std::vector<cl_mem> subs_;
};

void saxpy_opencl(void* buffers[], void* cl_arg) {
  float a;
  starpu_codelet_unpack_args(cl_arg, &a);
  const auto n = STARPU_VECTOR_GET_NX(buffers[0]);
  Launch k(&g_saxpy_program, "saxpy");
  k.arg(0, k.memory(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]), STARPU_VECTOR_GET_OFFSET(buffers[0]), n * sizeof(float)));
  k.arg(1, k.memory(STARPU_VECTOR_GET_DEV_HANDLE(buffers[1]), STARPU_VECTOR_GET_OFFSET(buffers[1]), n * sizeof(float)));
  k.arg(2, static_cast<cl_float>(a));
  k.arg(3, static_cast<cl_uint>(n));
  const std::size_t global = round_up(n, kRange);
  k.run(1, &global);
}

// The block's image on the device: kernels address lines `width` pixels apart, so the device copy
// must be packed (StarPU allocates a sub-matrix on a device with ld = nx).
cl_mem opencl_image(Launch& k, void* buffer, std::size_t* width, std::size_t* lines, const char* who) {
  *width = STARPU_MATRIX_GET_NX(buffer);
  *lines = STARPU_MATRIX_GET_NY(buffer);
  if (STARPU_MATRIX_GET_LD(buffer) != *width)
    fail(std::string(who) + ": the device copy of a block has ld " + std::to_string(STARPU_MATRIX_GET_LD(buffer)) +
         " != width " + std::to_string(*width) + " (the kernels need packed lines)");
  return k.memory(STARPU_MATRIX_GET_DEV_HANDLE(buffer), STARPU_MATRIX_GET_OFFSET(buffer), *width * *lines * 4);
}

void noise_opencl(void* buffers[], void* cl_arg) {
  std::int32_t factor;
  std::uint32_t seed, first;
  starpu_codelet_unpack_args(cl_arg, &factor, &seed, &first);
  Launch k(&g_filters_program, "gaussian_noise");
  std::size_t width, lines;
  k.arg(0, opencl_image(k, buffers[0], &width, &lines, "gaussian_noise"));
  const std::size_t count = width * lines;
  k.arg(1, static_cast<cl_int>(factor));
  k.arg(2, static_cast<cl_uint>(seed));
  k.arg(3, static_cast<cl_uint>(first));
  k.arg(4, static_cast<cl_uint>(count));
  const std::size_t global = round_up(count / 2, kRange);  // two pixels per work-item
  k.run(1, &global);
}

void solarise_opencl(void* buffers[], void* cl_arg) {
  std::int32_t threshold;
  starpu_codelet_unpack_args(cl_arg, &threshold);
  Launch k(&g_filters_program, "solarise");
  std::size_t width, lines;
  k.arg(0, opencl_image(k, buffers[0], &width, &lines, "solarise"));
  const std::size_t count = width * lines;
  k.arg(1, static_cast<cl_int>(threshold));
  k.arg(2, static_cast<cl_uint>(count));
  const std::size_t global = round_up(count, kRange);
  k.run(1, &global);
}

void mirror_opencl(void* buffers[], void*) {
  Launch k(&g_filters_program, "mirror");
  std::size_t width, lines;
  k.arg(0, opencl_image(k, buffers[0], &width, &lines, "mirror"));
  k.arg(1, static_cast<cl_uint>(width));
  k.arg(2, static_cast<cl_uint>(width * lines));
  const std::size_t global[2] = {width / 2, lines};
  k.run(2, global);
}

// ----- codelets and their performance models -------------------------------------------------

// History-based models: per worker arch and per block size (the footprint of the data sizes),
// the mean of the measured times; dmda forces calibration runs until each has
// STARPU_CALIBRATE_MINIMUM (10) measurements. The symbols are versioned so that a model file left
// by another build of these codelets is never read.
starpu_perfmodel g_saxpy_model, g_noise_model, g_solarise_model, g_mirror_model;
starpu_codelet g_saxpy_cl, g_noise_cl, g_solarise_cl, g_mirror_cl;

void define(starpu_codelet& cl, starpu_perfmodel& model, const char* name, starpu_cpu_func_t cpu,
            starpu_opencl_func_t opencl, std::vector<starpu_data_access_mode> modes) {
  std::memset(&model, 0, sizeof model);
  model.type = STARPU_HISTORY_BASED;
  model.symbol = name;
  starpu_codelet_init(&cl);
  cl.name = name;
  cl.cpu_funcs[0] = cpu;
  cl.opencl_funcs[0] = opencl;
  cl.where = STARPU_CPU | STARPU_OPENCL;  // set now: calibration checks may come before any submission
  cl.nbuffers = static_cast<int>(modes.size());
  for (std::size_t i = 0; i < modes.size(); ++i) cl.modes[i] = modes[i];
  cl.model = &model;
}

void define_codelets() {
  define(g_saxpy_cl, g_saxpy_model, "sinew_bench_saxpy_v1", saxpy_cpu, saxpy_opencl, {STARPU_R, STARPU_RW});
  define(g_noise_cl, g_noise_model, "sinew_bench_gaussian_noise_v1", noise_cpu, noise_opencl, {STARPU_RW});
  define(g_solarise_cl, g_solarise_model, "sinew_bench_solarise_v1", solarise_cpu, solarise_opencl, {STARPU_RW});
  define(g_mirror_cl, g_mirror_model, "sinew_bench_mirror_v1", mirror_cpu, mirror_opencl, {STARPU_RW});
}

// Whether `cl`'s model predicts a time, on every worker arch, for a task on these handles.
// A dummy task, never submitted (starpu_task_expected_length is made for that).
bool predicted(starpu_codelet& cl, const std::vector<starpu_data_handle_t>& handles) {
  starpu_task* task = starpu_task_create();
  task->cl = &cl;
  for (std::size_t i = 0; i < handles.size(); ++i) STARPU_TASK_SET_HANDLE(task, handles[i], i);
  bool ok = true;
  const unsigned n = starpu_worker_get_count();

  for (unsigned w = 0; w < n && ok; ++w) {
    if (!starpu_worker_can_execute_task(w, task, 0)) continue;
    starpu_perfmodel_arch* arch = starpu_worker_get_perf_archtype(static_cast<int>(w), 0);
    const double len = starpu_task_expected_length(task, arch, 0);
    if (std::isnan(len)) ok = false;
  }
  task->destroy = 0;
  starpu_task_destroy(task);
  return ok;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read kernel source " + path + " (set SINEW_SOURCE_DIR to the Sinew source tree)");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void check(int ret, const char* what) {
  if (ret != 0) throw std::runtime_error(std::string("StarPU: ") + what + " failed: " + std::strerror(ret < 0 ? -ret : ret));
}

bool any_bus_model(const std::string& home) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(home) / ".starpu" / "sampling" / "bus";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".bandwidth") return true;
  return false;
}

}  // namespace

std::string memory_name(Memory m) { return m == Memory::starpu_malloc ? "starpu_malloc" : "cl-pinned"; }

std::string build_limits() {
  return "STARPU_MAXCPUS=" + std::to_string(STARPU_MAXCPUS) + ", STARPU_MAXOPENCLDEVS=" +
         std::to_string(STARPU_MAXOPENCLDEVS) + ", STARPU_NMAXWORKERS=" + std::to_string(STARPU_NMAXWORKERS) +
#ifdef STARPU_USE_CUDA
         ", CUDA driver built in"
#else
         ", no CUDA driver (starpu_malloc pins only for CUDA)"
#endif
      ;
}

unsigned max_cpu_workers() { return STARPU_MAXCPUS; }

std::vector<OpenclDevice> opencl_devices() {
  // As StarPU's OpenCL driver enumerates them with STARPU_OPENCL_ON_CPUS=1 (driver_opencl.c,
  // _starpu_opencl_init): platforms in clGetPlatformIDs order, SOCL's skipped, then each
  // platform's GPU, accelerator and CPU devices in clGetDeviceIDs order, at most
  // STARPU_MAXOPENCLDEVS. The index is StarPU's devid.
  std::vector<OpenclDevice> out;
  cl_platform_id platforms[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS) return out;
  for (cl_uint i = 0; i < std::min<cl_uint>(np, 16); ++i) {
    char pname[1024] = {};
    if (clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof pname - 1, pname, nullptr) != CL_SUCCESS) continue;
    if (std::strcmp(pname, "SOCL Platform") == 0) continue;
    cl_device_id devices[STARPU_MAXOPENCLDEVS];
    cl_uint nd = 0;
    const cl_device_type types = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CPU;
    const auto room = static_cast<cl_uint>(STARPU_MAXOPENCLDEVS - out.size());
    if (room == 0 || clGetDeviceIDs(platforms[i], types, room, devices, &nd) != CL_SUCCESS) continue;
    for (cl_uint d = 0; d < std::min(nd, room); ++d) {
      char name[256] = {};
      cl_device_type type = 0;
      clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
      clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof type, &type, nullptr);
      out.push_back({static_cast<int>(out.size()), (type & CL_DEVICE_TYPE_CPU) != 0, name, pname});
    }
  }
  return out;
}

std::string version() {
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

// ----- HostBuffer ----------------------------------------------------------------------------

HostBuffer::HostBuffer(HostBuffer&& o) noexcept { *this = std::move(o); }
HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = std::exchange(o.owner_, nullptr);
    kind_ = o.kind_;
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    cl_buffer_ = std::exchange(o.cl_buffer_, nullptr);
  }
  return *this;
}
HostBuffer::~HostBuffer() { release(); }
void HostBuffer::release() {
  if (owner_ && data_) owner_->free_buffer(*this);
  owner_ = nullptr;
  data_ = nullptr;
}

// ----- Session -------------------------------------------------------------------------------

void Session::set_env(const char* name, const char* value) {
  const bool saved = std::any_of(saved_env_.begin(), saved_env_.end(), [&](const auto& e) { return e.first == name; });
  if (!saved) {
    const char* old = std::getenv(name);
    saved_env_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
  }
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

void Session::restore_env() {
  for (const auto& [name, value] : saved_env_) {
    if (value)
      setenv(name.c_str(), value->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  saved_env_.clear();
}

Session::Session(const SessionConfig& config) : config_(config) {
  try {
    start();
  } catch (...) {
    restore_env();
    throw;
  }
}

void Session::start() {
  // The OpenCL platforms are initialised (PoCL fixes its kernel cache directory from
  // $XDG_CACHE_HOME then) before the environment changes below.
  (void)opencl_devices();
  // StarPU reads these at init and while it runs; they are restored after starpu_shutdown.
  // StarPU 1.3 puts its files under $XDG_CACHE_HOME/.starpu when that is set, before
  // $STARPU_HOME (_starpu_get_home_path): unset it so that STARPU_HOME decides.
  if (!config_.home.empty()) {
    std::filesystem::create_directories(config_.home);
    set_env("STARPU_HOME", config_.home.c_str());
    set_env("XDG_CACHE_HOME", nullptr);
    set_env("STARPU_PERF_MODEL_DIR", nullptr);
  }
  if (!config_.verbose) set_env("STARPU_SILENT", "1");
  // StarPU lists the OpenCL devices once per process, at the first starpu_init, with the
  // STARPU_OPENCL_ON_CPUS of that moment; so CPU devices are always listed and each session picks
  // its devices explicitly (workers_opencl_gpuid).
  set_env("STARPU_OPENCL_ON_CPUS", "1");
  bus_calibrated_ = !any_bus_model(config_.home);

  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.precedence_over_environment_variables = 1;
  conf.sched_policy_name = config_.sched.c_str();
  conf.ncpus = config_.ncpus;
  conf.nopencl = static_cast<int>(config_.opencl.size());
  if (config_.opencl.size() > STARPU_NMAXWORKERS) throw std::runtime_error("too many OpenCL devices for StarPU");
  if (!config_.opencl.empty()) {
    conf.use_explicit_workers_opencl_gpuid = 1;
    for (std::size_t i = 0; i < config_.opencl.size(); ++i)
      conf.workers_opencl_gpuid[i] = static_cast<unsigned>(config_.opencl[i]);
  }
  conf.ncuda = 0;  // Debian's StarPU has no CUDA driver; say so explicitly
  const auto t0 = std::chrono::steady_clock::now();
  const int ret = starpu_init(&conf);
  init_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (ret == -ENODEV) throw std::runtime_error("StarPU found no worker for " + config_.name + " (starpu_init: -ENODEV)");
  check(ret, "starpu_init");

  ncpu_ = starpu_cpu_worker_get_count();
  nopencl_ = starpu_opencl_worker_get_count();
  std::fill(std::begin(g_opencl_is_cpu), std::end(g_opencl_is_cpu), false);
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_OPENCL_WORKER) {
      const int devid = starpu_worker_get_devid(static_cast<int>(w));
      if (device_is_cpu(devid)) {
        ++nopencl_cpu_;
        if (devid >= 0 && devid < STARPU_MAXOPENCLDEVS) g_opencl_is_cpu[devid] = true;
      }
    }
  const starpu_sched_policy* policy = starpu_sched_ctx_get_sched_policy(0);
  scheduler_ = policy && policy->policy_name ? policy->policy_name : "?";

  define_codelets();
  if (nopencl_ > 0) {
    try {
      const std::string saxpy = read_text(config_.kernels_dir + "/saxpy.cl");
      const std::string filters = read_text(config_.kernels_dir + "/filters.cl");
      check(starpu_opencl_load_opencl_from_string(saxpy.c_str(), &g_saxpy_program, ""), "building saxpy.cl");
      check(starpu_opencl_load_opencl_from_string(filters.c_str(), &g_filters_program, ""), "building filters.cl");
    } catch (...) {
      starpu_shutdown();
      throw;
    }
  }
}

Session::~Session() {
  if (nopencl_ > 0) {
    starpu_opencl_unload_opencl(&g_saxpy_program);
    starpu_opencl_unload_opencl(&g_filters_program);
  }
  if (pin_queue_) clReleaseCommandQueue(static_cast<cl_command_queue>(pin_queue_));
  starpu_shutdown();  // writes the performance models under STARPU_HOME
  restore_env();
}

std::string Session::worker_summary() const {
  std::string s = std::to_string(ncpu_) + " cpu";
  if (nopencl_ > nopencl_cpu_) s += " + " + std::to_string(nopencl_ - nopencl_cpu_) + " opencl-gpu";
  if (nopencl_cpu_) s += " + " + std::to_string(nopencl_cpu_) + " opencl-cpu";
  return s;
}

std::vector<std::string> Session::worker_lines() const {
  std::vector<std::string> out;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    char name[256], arch[256];
    starpu_worker_get_name(static_cast<int>(w), name, sizeof name);
    starpu_perfmodel_get_arch_name(starpu_worker_get_perf_archtype(static_cast<int>(w), 0), arch, sizeof arch, 0);
    out.push_back(std::string(name) + " (model arch " + arch + ")");
  }
  return out;
}

HostBuffer Session::allocate(Memory kind, std::size_t bytes) {
  HostBuffer b;
  b.owner_ = this;
  b.kind_ = kind;
  b.bytes_ = bytes;
  if (kind == Memory::starpu_malloc) {
    void* p = nullptr;
    check(starpu_malloc(&p, bytes), "starpu_malloc");
    b.data_ = p;
  } else {
    if (nopencl_ == 0) throw std::runtime_error("cl-pinned memory needs an OpenCL worker");
    // The first OpenCL worker that is not a CPU device owns the memory: it is the one a DMA helps.
    int devid = -1;
    for (unsigned w = 0; w < starpu_worker_get_count() && devid < 0; ++w)
      if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_OPENCL_WORKER) {
        const int d = starpu_worker_get_devid(static_cast<int>(w));
        if (!device_is_cpu(d) || nopencl_ == nopencl_cpu_) devid = d;
      }
    cl_context ctx;
    cl_device_id dev;
    starpu_opencl_get_context(devid, &ctx);
    starpu_opencl_get_device(devid, &dev);
    cl_int err = CL_SUCCESS;
    if (!pin_queue_) {
      pin_queue_ = clCreateCommandQueue(ctx, dev, 0, &err);
      if (err != CL_SUCCESS) throw std::runtime_error("clCreateCommandQueue for pinned memory failed: " + std::to_string(err));
    }
    cl_mem mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, std::max<std::size_t>(bytes, 1), nullptr, &err);
    if (err != CL_SUCCESS) throw std::runtime_error("clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, " + std::to_string(bytes) + ") failed: " + std::to_string(err));
    void* p = clEnqueueMapBuffer(static_cast<cl_command_queue>(pin_queue_), mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                 std::max<std::size_t>(bytes, 1), 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      clReleaseMemObject(mem);
      throw std::runtime_error("clEnqueueMapBuffer of pinned memory failed: " + std::to_string(err));
    }
    b.cl_buffer_ = mem;
    b.data_ = p;
  }
  std::memset(b.data_, 0, bytes);  // touch every page now, not in a timed run
  return b;
}

void Session::free_buffer(HostBuffer& b) {
  if (b.kind_ == Memory::starpu_malloc) {
    starpu_free(b.data_);
  } else {
    auto q = static_cast<cl_command_queue>(pin_queue_);
    clEnqueueUnmapMemObject(q, static_cast<cl_mem>(b.cl_buffer_), b.data_, 0, nullptr, nullptr);
    clFinish(q);
    clReleaseMemObject(static_cast<cl_mem>(b.cl_buffer_));
    b.cl_buffer_ = nullptr;
  }
}

void Session::throw_codelet_error() {
  if (!g_failed) return;
  std::string what;
  {
    std::lock_guard<std::mutex> lock(g_error_mutex);
    what = g_error;
    g_error.clear();
  }
  g_failed = false;
  throw std::runtime_error("StarPU codelet: " + what);
}

std::string Session::last_placement() const {
  std::string s = "tasks: cpu " + std::to_string(g_tasks_cpu.load());
  if (nopencl_ > nopencl_cpu_) s += ", opencl-gpu " + std::to_string(g_tasks_opencl.load());
  if (nopencl_cpu_) s += ", opencl-cpu " + std::to_string(g_tasks_opencl_cpu.load());
  return s;
}

namespace {
void reset_counters() {
  g_tasks_cpu = 0;
  g_tasks_opencl = 0;
  g_tasks_opencl_cpu = 0;
}
}  // namespace

bool Session::saxpy(float a, const float* x, float* y, std::size_t n, unsigned blocks, Pass pass) {
  reset_counters();
  blocks = static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, n));
  starpu_data_handle_t hx, hy;
  starpu_vector_data_register(&hx, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(x), static_cast<uint32_t>(n), sizeof(float));
  starpu_vector_data_register(&hy, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(y), static_cast<uint32_t>(n), sizeof(float));
  starpu_data_filter f;
  std::memset(&f, 0, sizeof f);
  f.filter_func = starpu_vector_filter_block;
  f.nchildren = blocks;
  starpu_data_partition(hx, &f);
  starpu_data_partition(hy, &f);
  int err = 0;
  for (unsigned b = 0; b < blocks && !err && pass != Pass::check_only; ++b)
    err = starpu_task_insert(&g_saxpy_cl, STARPU_R, starpu_data_get_sub_data(hx, 1, b), STARPU_RW,
                             starpu_data_get_sub_data(hy, 1, b), STARPU_VALUE, &a, sizeof(a), 0);
  starpu_task_wait_for_all();
  bool calibrated = true;
  if (pass != Pass::execute)
    for (unsigned b = 0; b < blocks && calibrated; ++b)
      calibrated = predicted(g_saxpy_cl, {starpu_data_get_sub_data(hx, 1, b), starpu_data_get_sub_data(hy, 1, b)});
  starpu_data_unpartition(hx, STARPU_MAIN_RAM);
  starpu_data_unpartition(hy, STARPU_MAIN_RAM);
  starpu_data_unregister(hx);
  starpu_data_unregister(hy);
  check(err, "starpu_task_insert(saxpy)");
  throw_codelet_error();
  return calibrated;
}

bool Session::filters(std::uint8_t* image, std::size_t width, std::size_t lines, const FilterParams& p, unsigned blocks,
                      Pass pass) {
  reset_counters();
  blocks = static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, lines));
  starpu_data_handle_t h;
  starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(image), static_cast<uint32_t>(width),
                              static_cast<uint32_t>(width), static_cast<uint32_t>(lines), 4);
  starpu_data_filter f;
  std::memset(&f, 0, sizeof f);
  f.filter_func = starpu_matrix_filter_vertical_block;  // whole lines: every filter is exact per line
  f.nchildren = blocks;
  starpu_data_partition(h, &f);
  int err = 0;
  std::uint32_t first = 0;  // global index of the block's first pixel
  for (unsigned b = 0; b < blocks && !err && pass != Pass::check_only; ++b) {
    starpu_data_handle_t sub = starpu_data_get_sub_data(h, 1, b);
    err = starpu_task_insert(&g_noise_cl, STARPU_RW, sub, STARPU_VALUE, &p.noise_factor, sizeof(p.noise_factor),
                             STARPU_VALUE, &p.seed, sizeof(p.seed), STARPU_VALUE, &first, sizeof(first), 0);
    if (!err)
      err = starpu_task_insert(&g_solarise_cl, STARPU_RW, sub, STARPU_VALUE, &p.threshold, sizeof(p.threshold), 0);
    if (!err) err = starpu_task_insert(&g_mirror_cl, STARPU_RW, sub, 0);
    first += static_cast<std::uint32_t>(starpu_matrix_get_ny(sub) * width);
  }
  starpu_task_wait_for_all();
  bool calibrated = true;
  if (pass != Pass::execute)
    for (unsigned b = 0; b < blocks && calibrated; ++b) {
      const std::vector<starpu_data_handle_t> hs{starpu_data_get_sub_data(h, 1, b)};
      calibrated = predicted(g_noise_cl, hs) && predicted(g_solarise_cl, hs) && predicted(g_mirror_cl, hs);
    }
  starpu_data_unpartition(h, STARPU_MAIN_RAM);
  starpu_data_unregister(h);
  check(err, "starpu_task_insert(filters)");
  throw_codelet_error();
  return calibrated;
}

}  // namespace sinew_bench::starpu
