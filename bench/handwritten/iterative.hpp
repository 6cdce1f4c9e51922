// bench/handwritten/iterative.hpp — hand-written OpenCL baselines for iterative applications
// (issue 41): the cg sample's solve and a reduction whose value the next kernel reads, each on one
// device with its data resident there, as a careful programmer writes them with the same kernels
// (samples/kernels/cg.cl, Sinew's own kernels/reduce.cl for the reductions, with the work-group
// and group counts lib/exec/nodes/map_reduce.cpp chooses).
//
// The device: the first GPU, else the first device of any platform (a CPU stand-in), in its own
// context with one in-order queue. Set-up (context, programs, buffers, the matrix uploaded) is done
// when an object is made and never timed; a timed run uploads the vectors a solve starts from,
// runs the iterations and reads the result back.
//
// Lifetime and threads: one thread at a time per object.
#pragma once

#include "harness.hpp"

#include "common/cg.hpp"
#include "common/kmeans.hpp"
#include "common/pagerank.hpp"

#include <map>
#include <memory>
#include <utility>
#include <vector>
#include <string>

namespace bench::hw {

// The samples' references at a fixed iteration count, computed once per problem and count and
// shared by both sides' checks (hundreds of iterations on millions of rows take seconds in C++).
// The problems must outlive it.
class References {
 public:
  const std::vector<double>& cg(const sinew::samples::CsrMatrix& a, const std::vector<cl_float>& b,
                                std::size_t iterations);
  const std::vector<double>& pagerank(const sinew::samples::Graph& g, float damping, std::size_t iterations);
  // Empty when k-means converges before `iterations`.
  const std::vector<cl_uint>& kmeans(const std::vector<cl_int2>& points, std::size_t iterations);

 private:
  std::map<std::pair<const void*, std::size_t>, std::vector<double>> doubles_;
  std::map<std::pair<const void*, std::size_t>, std::vector<cl_uint>> labels_;
};

// The cg sample's iteration (cg_spmv, cg_dots and a float2 sum, cg_update_xr and a float sum,
// cg_update_p), `iterations` times from x = 0, r = p = b; after each iteration one blocking read of
// the 4-byte r.r (the test a solver makes). Checked against samples::reference_cg.
class ConjugateGradientLoop {
 public:
  ConjugateGradientLoop(const sinew::samples::CsrMatrix& a, const std::vector<cl_float>& b, References& references);
  ~ConjugateGradientLoop();
  std::string device() const;
  Job job(std::size_t iterations);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The pagerank sample's iteration (pagerank_dangling and a float sum, pagerank_update and a float
// sum of the changes, the ranks' buffers swapped), `iterations` times from 1/n; after each
// iteration one blocking read of the 4-byte change. Checked against samples::reference_pagerank.
class PageRankLoop {
 public:
  PageRankLoop(const sinew::samples::Graph& g, float damping, References& references);
  ~PageRankLoop();
  Job job(std::size_t iterations);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The kmeans sample's iteration (kmeans_accumulate and the struct's sum by add_stats,
// kmeans_assign and a uint sum of the changes), `iterations` times from the first labels; after
// each iteration one blocking read of the 4-byte change count. Checked against
// samples::reference_kmeans (which must not converge earlier).
class KMeansLoop {
 public:
  KMeansLoop(const std::vector<cl_int2>& points, std::size_t per_unit, References& references);
  ~KMeansLoop();
  Job job(std::size_t iterations);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The value loop's kernels (both sides run them): value_copy(x, part), value_add(x, y, sum).
const std::string& value_loop_source();

// A value feeding the next kernel: per iteration a copy of x into part, its float sum in two
// passes into a one-element buffer, and a kernel y = x + sum reading that buffer; nothing read
// back until the end (y and the last sum). `n` floats.
class ValueLoop {
 public:
  explicit ValueLoop(std::size_t n);
  ~ValueLoop();
  Job job(std::size_t iterations);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Saxpy (samples/kernels/saxpy.cl) run again and again on `n` floats resident on the device, as a
// hand-written time-stepping loop does: x = i % 3, y = i % 7 uploaded once when the object is made,
// a timed run enqueues `runs` launches of y = a*x + y (a = 1) and waits for the queue once at the end
// or, `wait_each`, after every launch (what a loop whose host looks at each step does). The check
// reads y back (untimed): y = i % 7 + (launches so far) * (i % 3), exact in float.
class ResidentSaxpyLoop {
 public:
  explicit ResidentSaxpyLoop(std::size_t n);
  ~ResidentSaxpyLoop();
  std::string device() const;
  Job job(std::size_t runs, bool wait_each);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bench::hw
