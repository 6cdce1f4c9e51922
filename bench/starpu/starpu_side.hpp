// bench/starpu/starpu_side.hpp — StarPU as a peer for bench_starpu: one StarPU session (init to
// shutdown) with a given set of workers and the dmda scheduler, the saxpy and filter-pipeline
// codelets (plain C++ loops on CPU workers, the project's kernels/*.cl on OpenCL workers), host
// memory for the data, and one run of each problem split into blocks with StarPU's data filters.
//
// Nothing here includes Sinew or OpenCL headers: StarPU's headers pick their own OpenCL target
// version, so StarPU lives in its own translation unit and this interface speaks plain C++.
//
// Threads: one Session at a time per process (StarPU is a process-wide singleton), used from the
// thread that created it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinew_bench::starpu {

// An OpenCL device as StarPU numbers it (its devid), CPU devices included.
struct OpenclDevice {
  int devid = 0;
  bool cpu = false;
  std::string name, platform;
};
// Every OpenCL device StarPU can drive, in StarPU's numbering (STARPU_OPENCL_ON_CPUS=1 order).
std::vector<OpenclDevice> opencl_devices();

// Which workers a session starts. StarPU reads STARPU_* environment variables at init; the
// fields here take precedence over them (starpu_conf::precedence_over_environment_variables).
struct SessionConfig {
  std::string name;                // row label: "dmda", "dmda-cpu", "dmda-gpu", "dmda-opencl-all"
  int ncpus = -1;                  // native CPU workers (-1: StarPU's default, 0: none)
  std::vector<int> opencl;         // OpenCL workers: these devids (opencl_devices()); empty: none
  std::string sched = "dmda";      // scheduling policy
  std::string home;                // STARPU_HOME: bus and performance-model files go under home/.starpu
  std::string kernels_dir;         // where saxpy.cl and filters.cl are read from
  bool verbose = false;            // keep StarPU's own messages (else STARPU_SILENT=1)
};

// Where the host data of a run lives.
enum class Memory {
  starpu_malloc,  // starpu_malloc(): pinned only when StarPU has CUDA workers (see bench_starpu.md)
  cl_pinned,      // CL_MEM_ALLOC_HOST_PTR memory of the first OpenCL worker's context, mapped
};
std::string memory_name(Memory m);

class Session;

// Host memory owned by a session (freed before it shuts down).
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&&) noexcept;
  HostBuffer& operator=(HostBuffer&&) noexcept;
  ~HostBuffer();
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  friend class Session;
  void release();
  Session* owner_ = nullptr;
  Memory kind_ = Memory::starpu_malloc;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  void* cl_buffer_ = nullptr;  // cl_mem of a cl_pinned block
};

struct FilterParams {
  std::int32_t noise_factor = 16;
  std::int32_t threshold = 192;
  std::uint32_t seed = 2024;
};

class Session {
 public:
  // starpu_init with `config`; loads the OpenCL programs on every OpenCL worker. Throws
  // std::runtime_error (StarPU's error code, or a kernel build failure) — no session then.
  explicit Session(const SessionConfig& config);
  ~Session();  // frees nothing the caller still holds: HostBuffers must be gone first
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionConfig& config() const { return config_; }
  unsigned cpu_workers() const { return ncpu_; }
  unsigned opencl_workers() const { return nopencl_; }
  unsigned workers() const { return ncpu_ + nopencl_; }
  // OpenCL workers whose device is a CPU (PoCL through STARPU_OPENCL_ON_CPUS).
  unsigned opencl_cpu_workers() const { return nopencl_cpu_; }
  // "2 cpu + 1 opencl", for tables.
  std::string worker_summary() const;
  // One line per worker: StarPU's name and its performance-model arch.
  std::vector<std::string> worker_lines() const;
  // The scheduling policy StarPU actually runs (STARPU_SCHED could not override it).
  std::string scheduler() const { return scheduler_; }
  // Seconds starpu_init took (bus calibration on the first init of a STARPU_HOME included),
  // and whether it found no bus model and calibrated the bus.
  double init_seconds() const { return init_s_; }
  bool bus_calibrated() const { return bus_calibrated_; }

  // Host memory of `bytes` bytes, or an exception (cl_pinned needs an OpenCL worker).
  HostBuffer allocate(Memory kind, std::size_t bytes);

  // What saxpy() and filters() do: execute; execute and then answer whether every performance
  // model used is calibrated for every block size on every worker arch (checked before the data
  // is unregistered; not to be timed); or only answer that (register, partition, check,
  // unregister: no task runs).
  enum class Pass { execute, execute_and_check, check_only };

  // One execution of y = a*x + y over n floats in `blocks` blocks (starpu_vector_filter_block):
  // register x and y, partition, one task per block, wait, unpartition, unregister — the data in
  // host memory before and after. Returns whether the models are calibrated (Pass), else true.
  bool saxpy(float a, const float* x, float* y, std::size_t n, unsigned blocks, Pass pass = Pass::execute);
  // One execution of the filter pipeline (gaussian_noise -> solarise -> mirror, in place) on an
  // RGBA image of `width` x `lines` pixels, 4 bytes each, partitioned in whole lines
  // (starpu_matrix_filter_vertical_block): three tasks per block, chained by StarPU's implicit
  // data dependencies.
  bool filters(std::uint8_t* image, std::size_t width, std::size_t lines, const FilterParams& p, unsigned blocks,
               Pass pass = Pass::execute);

  // Which workers ran the tasks of the last execution: "cpu 12, opencl 28" (tasks per kind).
  std::string last_placement() const;

 private:
  friend class HostBuffer;
  void start();
  void set_env(const char* name, const char* value);  // value null: unset
  void restore_env();
  void free_buffer(HostBuffer& b);
  void throw_codelet_error();

  SessionConfig config_;
  unsigned ncpu_ = 0, nopencl_ = 0, nopencl_cpu_ = 0;
  std::string scheduler_;
  double init_s_ = 0;
  bool bus_calibrated_ = false;
  void* pin_queue_ = nullptr;   // cl_command_queue on the first OpenCL worker's context (cl_pinned maps)
  // Environment variables changed for StarPU, with their values before (nullopt: unset).
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_env_;
};

// StarPU's version, "1.3.10".
std::string version();
// The limits StarPU was compiled with (STARPU_MAXCPUS, ...), and whether it has a CUDA driver.
std::string build_limits();
unsigned max_cpu_workers();


}  // namespace sinew_bench::starpu
