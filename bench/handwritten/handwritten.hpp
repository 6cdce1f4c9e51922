// bench/handwritten/handwritten.hpp — hand-written OpenCL baselines: what a careful programmer
// writes by hand for the work of Sinew's samples (samples/kernels/saxpy.cl, the filters.cl pipeline, three
// tiny kernels of concepts.cl), so that the benchmarks can say how far Sinew is from it.
//
// Plain OpenCL 1.2 through the C++ bindings; no Sinew call on the device path. The baselines run
// over a prepared sample's own arrays, so both sides see the same input, and the sample's C++
// reference checks them.
//
// What a program does once per problem and keeps is set-up, done when a Job is made and never
// timed: contexts, queues, programs, kernels, device buffers, pinned staging. What depends on the
// user's data is timed: zero-copy buffers over the user's arrays, every transfer, every memcpy
// between the user's pageable memory and pinned staging, the kernels, map/unmap.
//
// Lifetime and threads: an Env owns every OpenCL object and must outlive its Jobs; one thread at
// a time per Env.
#pragma once

#include "harness.hpp"

#include "common/descriptors.hpp"

#include <memory>

namespace bench::hw {

// The first CPU and the first GPU device of any platform, each in its own context. Without a
// GPU a second CPU device stands in (POCL_DEVICES="pthread pthread"), or the same CPU device in a
// second context; without a CPU device, jobs that need one throw.
class Env {
 public:
  Env();
  ~Env();
  std::string cpu_description() const;  // "platform | device | driver | CUs"
  std::string gpu_description() const;
  bool has_cpu() const;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct Options {
  std::size_t chunk_bytes = 8u << 20;  // GPU pipeline: bytes of each array per chunk
  unsigned queues = 3;                 // GPU pipeline: in-order queues (chunks in flight)
};

// One workload on the hand-written side, over a prepared sample's arrays.
class Workload {
 public:
  virtual ~Workload() = default;
  // The GPU alone, naive: enqueueWriteBuffer of everything from pageable memory, the kernels,
  // enqueueReadBuffer.
  virtual Job naive_gpu() = 0;
  // The first `cpu_share` of the work on the CPU device, zero-copy (CL_MEM_USE_HOST_PTR) over the
  // user's arrays, the rest on the GPU in chunks over `queues` in-order queues (upload of one
  // chunk, the kernels of another and the download of a third overlap), both at once. Share 1 is
  // the CPU alone, 0 the GPU alone. The user's data pageable: each chunk goes through pinned
  // staging (CL_MEM_ALLOC_HOST_PTR, mapped once; the memcpys are timed). `user_pinned`: the
  // user's data already lives in pinned memory of the GPU's context (allocated once per size and
  // kept by the Env; filling it is untimed) and chunks move straight from and to it.
  virtual Job split(double cpu_share, bool user_pinned) = 0;
};
std::unique_ptr<Workload> saxpy(Env& env, sinew::samples::Saxpy& s, const Options& o);
std::unique_ptr<Workload> filters(Env& env, sinew::samples::FilterPipeline& s, const Options& o);

// The heat sample's loop (heat.cl's heat_sweep) on one device, as a careful programmer writes it:
// the grid uploaded once into a buffer with a wall row above and below (the sample's
// Boundary::constant), then per iteration one sweep, one row-max kernel (one work-group), one
// blocking read of the 4-byte convergence value and the test against the tolerance, and either a
// device copy unew -> u (as Sinew's copy(unew, u) does) or a pointer swap between two such
// buffers (the sweep writing into the other's rows; needs a row of floats to be a multiple of the
// device's base address alignment, see can_swap); the grid read back at the end. Checked against
// the sample's double-precision reference (computed once), with the sample's tolerance.
class HeatLoop {
 public:
  HeatLoop(Env& env, sinew::samples::Heat& s);
  ~HeatLoop();
  bool can_swap(bool gpu);
  Job job(bool gpu, bool swap);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The prefix_sum sample's inclusive (or exclusive) sum on one device with Sinew's own scan kernels
// (kernels/scan.cl, the same block size rule as lib/exec/nodes/scan.cpp: 8 elements per work-item,
// at most 256 work-items), as a careful programmer writes it for one device: the blocks scanned,
// the blocks' totals scanned the same way level by level, added back down. The GPU reads and
// writes the user's pageable arrays with one enqueueWriteBuffer and one enqueueReadBuffer; the CPU
// works on them in place (CL_MEM_USE_HOST_PTR buffers made per run, the result mapped). Checked by
// the sample's own reference.
class Scan {
 public:
  Scan(Env& env, sinew::samples::PrefixSum& s);
  ~Scan();
  Job job(bool gpu);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Loops whose step reads a vector whole and writes the units of its own slice into a second copy
// of it (bench_loop), as a careful programmer writes them with the same kernels: the vector
// replicated on each device in two buffers (this iteration's and the next one's), the pointers
// swapped after every step. On one device: the GPU uploads it once and reads it back at the end;
// the CPU works in the user's memory and a host buffer of the same size (CL_MEM_USE_HOST_PTR,
// PoCL reads them in place), the last values copied into the user's memory if they ended in the
// other. Split, units [0, cpu_units) on the CPU and the rest on the GPU, both at once; after
// each step the GPU's new units are read into the CPU's next buffer and the CPU's written to the
// GPU's (the written slices, nothing else), and the next step starts once both arrived. Set-up
// (contexts, programs, buffers) happens once per split and is untimed.

// jacobi.cl's jacobi_sweep over the n x n grid (rows partitioned), `iterations` sweeps, each
// followed by a one-work-group max over the per-row changes on each device and one blocking 4-byte
// read per device, tested against `tolerance` (0: every sweep runs). Checked against
// samples::reference::heat (the same physics), computed once per problem.
class JacobiLoop {
 public:
  JacobiLoop(Env& env, std::size_t n, std::size_t iterations, float alpha, float wall, float tolerance);
  ~JacobiLoop();
  // `grid` is the user's grid (n * n floats), reset to `initial` before each run (untimed).
  Job job(std::size_t cpu_rows, float* grid, const std::vector<float>& initial);
  // The same check for Sinew's runs: `grid` after `ran` sweeps, the last max change `residual`.
  std::string check(const float* grid, std::size_t ran, float residual);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The nbody sample's step (nbody.cl's nbody_step: positions read whole, velocities partitioned)
// `steps` times over the sample's arrays; checked by the sample.
class NbodyLoop {
 public:
  NbodyLoop(Env& env, sinew::samples::Nbody& s);
  ~NbodyLoop();
  Job job(std::size_t cpu_bodies);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Every OpenCL device of every platform, in discovery order.
struct DeviceDesc {
  std::string platform, name;
};
std::vector<DeviceDesc> list_devices();

// u = (x*x + b) * f through concepts.cl's square, add_scalar and scale over n floats on one device
// (an index into list_devices()). The constructor is the set-up; run() what a program does per
// execution: write x, three NDRanges, read u, finish.
class TinyPipeline {
 public:
  TinyPipeline(std::size_t device, std::size_t n, float b, float f);
  ~TinyPipeline();
  void run(const float* x, float* u);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bench::hw
