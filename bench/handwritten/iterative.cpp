// bench/handwritten/iterative.cpp — the hand-written baselines of iterative applications (see
// iterative.hpp).
#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include "iterative.hpp"

#include "common/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace bench::hw {

namespace detail {
const std::map<std::string, const char*>& library_kernels();  // bench/CMakeLists.txt embeds reduce.cl
}  // namespace detail

namespace {

// The first GPU, else the first device, in a context of its own with one in-order queue.
struct Device {
  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
  std::string description;

  Device() {
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    std::vector<cl::Device> gpus, others;
    for (auto& p : platforms) try {
        std::vector<cl::Device> ds;
        p.getDevices(CL_DEVICE_TYPE_ALL, &ds);
        for (auto& d : ds) ((d.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) ? gpus : others).push_back(d);
      } catch (const cl::Error&) {}
    if (gpus.empty() && others.empty()) throw std::runtime_error("no OpenCL device (check clinfo -l)");
    device = gpus.empty() ? others.front() : gpus.front();
    context = cl::Context(device);
    queue = cl::CommandQueue(context, device);
    description = device.getInfo<CL_DEVICE_NAME>() + " | driver " + device.getInfo<CL_DRIVER_VERSION>();
  }
  cl::Program build(const std::string& source) const {
    cl::Program p(context, source);
    try {
      p.build({device}, "");
    } catch (const cl::Error&) {
      throw std::runtime_error("build failed:\n" + p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device));
    }
    return p;
  }
};

std::size_t floor_pow2(std::size_t x) {
  std::size_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

// Sinew's reduction (kernels/reduce.cl) of `n` elements of `type` by sum, with the work-group size
// and group count lib/exec/nodes/map_reduce.cpp picks: one pass of one group for a small input,
// else up to 64 groups and a second pass of one group over their values.
struct Sum {
  cl::Kernel kernel;
  cl::Buffer partials, identity;
  std::size_t local = 1, groups = 1, element = 0;

  // `function`: a user's operator defined in `prelude` (empty: the built-in sum).
  Sum(const Device& d, const std::string& type, std::size_t element_bytes, std::size_t n,
      const std::string& prelude = "", const std::string& function = "")
      : element(element_bytes) {
    const std::string op = function.empty() ? "((a) + (b))" : function + "((a), (b))";
    const std::string source = prelude + "\n#define SINEW_OP(a, b) " + op + "\n#define SINEW_T " + type + "\n" +
                               detail::library_kernels().at("reduce.cl");
    kernel = cl::Kernel(d.build(source), "sinew_reduce");
    const std::size_t limit = std::min<std::size_t>(
        {256, d.device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>(),
         kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d.device),
         static_cast<std::size_t>(d.device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>() / element),
         std::max<std::size_t>(1, (512u << 10) / element)});
    local = floor_pow2(limit);
    groups = n <= local * 32 ? 1 : std::max<std::size_t>(1, std::min<std::size_t>(64, (n + local - 1) / local));
    partials = cl::Buffer(d.context, CL_MEM_READ_WRITE, groups * element);
    const std::vector<unsigned char> zero(element, 0);
    identity = cl::Buffer(d.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, element,
                          const_cast<unsigned char*>(zero.data()));
  }
  void pass(cl::CommandQueue& q, const cl::Buffer& in, std::size_t count, const cl::Buffer& out, std::size_t g) {
    kernel.setArg(0, in);
    kernel.setArg(1, static_cast<cl_uint>(count));
    kernel.setArg(2, out);
    kernel.setArg(3, cl::Local(local * element));
    kernel.setArg(4, identity);
    q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(g * local), cl::NDRange(local));
  }
  void enqueue(cl::CommandQueue& q, const cl::Buffer& in, std::size_t n, const cl::Buffer& result) {
    if (groups == 1) {
      pass(q, in, n, result, 1);
    } else {
      pass(q, in, n, partials, groups);
      pass(q, partials, groups, result, 1);
    }
  }
};

template <class T>
cl::Buffer buffer_of(const Device& d, const std::vector<T>& host) {
  return cl::Buffer(d.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(T),
                    const_cast<T*>(host.data()));
}

}  // namespace

const std::vector<double>& References::cg(const sinew::samples::CsrMatrix& a, const std::vector<cl_float>& b,
                                          std::size_t iterations) {
  auto [it, fresh] = doubles_.try_emplace({&a, iterations});
  std::size_t ran = 0;
  if (fresh) it->second = sinew::samples::reference_cg(a, b, 0.0, iterations, ran);
  return it->second;
}

const std::vector<double>& References::pagerank(const sinew::samples::Graph& g, float damping, std::size_t iterations) {
  auto [it, fresh] = doubles_.try_emplace({&g, iterations});
  std::size_t ran = 0;
  if (fresh) it->second = sinew::samples::reference_pagerank(g, damping, 0.0, iterations, ran);
  return it->second;
}

const std::vector<cl_uint>& References::kmeans(const std::vector<cl_int2>& points, std::size_t iterations) {
  auto [it, fresh] = labels_.try_emplace({&points, iterations});
  std::size_t ran = 0;
  if (fresh) {
    it->second = sinew::samples::reference_kmeans(points, sinew::samples::kmeans_first_labels(points.size()),
                                                  iterations, ran);
    if (ran < iterations) it->second.clear();
  }
  return it->second;
}

// ----- conjugate gradient ---------------------------------------------------------------------

struct ConjugateGradientLoop::Impl {
  Device d;
  const sinew::samples::CsrMatrix& a;
  const std::vector<cl_float>& b;
  References& references;
  std::size_t n;
  cl::Buffer row_start, columns, values, x, r, p, ap, terms, squares, dots, rr;
  cl::Kernel spmv, dot_terms, update_xr, update_p;
  Sum dots_sum, rr_sum;
  std::vector<cl_float> x_host;
  std::size_t ran = 0;

  Impl(const sinew::samples::CsrMatrix& matrix, const std::vector<cl_float>& rhs, References& refs)
      : a(matrix), b(rhs), references(refs), n(matrix.rows), dots_sum(d, "float2", sizeof(cl_float2), matrix.rows),
        rr_sum(d, "float", sizeof(cl_float), matrix.rows) {
    row_start = buffer_of(d, a.row_start);
    columns = buffer_of(d, a.columns);
    values = buffer_of(d, a.values);
    for (cl::Buffer* v : {&x, &r, &p, &ap, &squares}) *v = cl::Buffer(d.context, CL_MEM_READ_WRITE, n * sizeof(cl_float));
    terms = cl::Buffer(d.context, CL_MEM_READ_WRITE, n * sizeof(cl_float2));
    dots = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(cl_float2));
    rr = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(cl_float));
    cl::Program program = d.build(sinew::samples::kernel_text("cg.cl"));
    spmv = cl::Kernel(program, "cg_spmv");
    dot_terms = cl::Kernel(program, "cg_dots");
    update_xr = cl::Kernel(program, "cg_update_xr");
    update_p = cl::Kernel(program, "cg_update_p");
    spmv.setArg(0, row_start), spmv.setArg(1, columns), spmv.setArg(2, values), spmv.setArg(3, p);
    spmv.setArg(4, ap), spmv.setArg(5, cl_uint(0)), spmv.setArg(6, static_cast<cl_uint>(n));
    dot_terms.setArg(0, p), dot_terms.setArg(1, ap), dot_terms.setArg(2, r), dot_terms.setArg(3, terms);
    update_xr.setArg(0, x), update_xr.setArg(1, r), update_xr.setArg(2, p), update_xr.setArg(3, ap);
    update_xr.setArg(4, squares), update_xr.setArg(5, dots);
    update_p.setArg(0, p), update_p.setArg(1, r), update_p.setArg(2, rr), update_p.setArg(3, dots);
  }

  void run(std::size_t iterations) {
    cl::CommandQueue& q = d.queue;
    const cl_float zero = 0;
    q.enqueueFillBuffer(x, zero, 0, n * sizeof(cl_float));
    q.enqueueWriteBuffer(r, CL_FALSE, 0, n * sizeof(cl_float), b.data());
    q.enqueueWriteBuffer(p, CL_FALSE, 0, n * sizeof(cl_float), b.data());
    cl_float rr_host = 0;
    for (std::size_t i = 0; i < iterations; ++i) {
      q.enqueueNDRangeKernel(spmv, cl::NullRange, cl::NDRange(n));
      q.enqueueNDRangeKernel(dot_terms, cl::NullRange, cl::NDRange(n));
      dots_sum.enqueue(q, terms, n, dots);
      q.enqueueNDRangeKernel(update_xr, cl::NullRange, cl::NDRange(n));
      rr_sum.enqueue(q, squares, n, rr);
      cl::Event read;
      q.enqueueReadBuffer(rr, CL_FALSE, 0, sizeof(cl_float), &rr_host, nullptr, &read);
      q.enqueueNDRangeKernel(update_p, cl::NullRange, cl::NDRange(n));
      read.wait();  // the solver's test of r.r (tolerance 0 here: every iteration runs)
    }
    x_host.resize(n);
    q.enqueueReadBuffer(x, CL_TRUE, 0, n * sizeof(cl_float), x_host.data());
    ran = iterations;
  }

  std::string check() const {
    const auto& want = references.cg(a, b, ran);
    double worst = 0, scale = 1e-30;
    for (std::size_t i = 0; i < n; ++i) {
      worst = std::max(worst, std::fabs(x_host[i] - want[i]));
      scale = std::max(scale, std::fabs(want[i]));
    }
    // The same float iteration as Sinew's single device; against double, float's drift.
    if (!(worst / scale <= 1e-2)) return "x differs from the double reference by " + std::to_string(worst / scale);
    return "OK";
  }
};

ConjugateGradientLoop::ConjugateGradientLoop(const sinew::samples::CsrMatrix& a, const std::vector<cl_float>& b,
                                             References& references)
    : impl_(std::make_shared<Impl>(a, b, references)) {}
ConjugateGradientLoop::~ConjugateGradientLoop() = default;
std::string ConjugateGradientLoop::device() const { return impl_->d.description; }

Job ConjugateGradientLoop::job(std::size_t iterations) {
  auto m = impl_;
  return {[] {},
          [m, iterations] {
            m->run(iterations);
            return kNaN;
          },
          [m] { return m->check(); }};
}

// ----- pagerank ----------------------------------------------------------------------------------

struct PageRankLoop::Impl {
  Device d;
  const sinew::samples::Graph& g;
  float damping;
  References& references;
  std::size_t n;
  cl::Buffer in_start, sources, out_degree, rank, next, mass, change, dangling, total;
  cl::Kernel dangling_kernel, update;
  Sum mass_sum, change_sum;
  std::vector<cl_float> ranks;
  std::size_t ran = 0;

  Impl(const sinew::samples::Graph& graph, float d_factor, References& refs)
      : g(graph), damping(d_factor), references(refs), n(graph.nodes), mass_sum(d, "float", sizeof(cl_float), graph.nodes),
        change_sum(d, "float", sizeof(cl_float), graph.nodes) {
    in_start = buffer_of(d, g.in_start);
    sources = buffer_of(d, g.sources);
    out_degree = buffer_of(d, g.out_degree);
    for (cl::Buffer* v : {&rank, &next, &mass, &change}) *v = cl::Buffer(d.context, CL_MEM_READ_WRITE, n * sizeof(cl_float));
    dangling = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(cl_float));
    total = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(cl_float));
    cl::Program program = d.build(sinew::samples::kernel_text("pagerank.cl"));
    dangling_kernel = cl::Kernel(program, "pagerank_dangling");
    update = cl::Kernel(program, "pagerank_update");
    dangling_kernel.setArg(1, out_degree), dangling_kernel.setArg(2, mass);
    update.setArg(0, in_start), update.setArg(1, sources), update.setArg(3, out_degree), update.setArg(5, change);
    update.setArg(6, dangling), update.setArg(7, cl_uint(0)), update.setArg(8, static_cast<cl_uint>(n));
    update.setArg(9, static_cast<cl_uint>(n)), update.setArg(10, damping);
  }

  void run(std::size_t iterations) {
    cl::CommandQueue& q = d.queue;
    q.enqueueFillBuffer(rank, 1.0f / static_cast<float>(n), 0, n * sizeof(cl_float));
    cl::Buffer current = rank, following = next;
    cl_float change_host = 0;
    for (std::size_t i = 0; i < iterations; ++i) {
      dangling_kernel.setArg(0, current);
      update.setArg(2, current), update.setArg(4, following);
      q.enqueueNDRangeKernel(dangling_kernel, cl::NullRange, cl::NDRange(n));
      mass_sum.enqueue(q, mass, n, dangling);
      q.enqueueNDRangeKernel(update, cl::NullRange, cl::NDRange(n));
      change_sum.enqueue(q, change, n, total);
      cl::Event read;
      q.enqueueReadBuffer(total, CL_FALSE, 0, sizeof(cl_float), &change_host, nullptr, &read);
      std::swap(current, following);  // the new ranks become the ranks: no copy
      read.wait();  // the test of the change (tolerance 0 here: every iteration runs)
    }
    ranks.resize(n);
    q.enqueueReadBuffer(current, CL_TRUE, 0, n * sizeof(cl_float), ranks.data());
    ran = iterations;
  }

  std::string check() const {
    const auto& want = references.pagerank(g, damping, ran);
    double difference = 0;
    for (std::size_t i = 0; i < n; ++i) difference += std::fabs(ranks[i] - want[i]);
    if (!(difference <= sinew::samples::pagerank_accepted_difference(0.0, ran)))
      return "the ranks differ from the double reference by " + std::to_string(difference) + " in L1";
    return "OK";
  }
};

PageRankLoop::PageRankLoop(const sinew::samples::Graph& g, float damping, References& references)
    : impl_(std::make_shared<Impl>(g, damping, references)) {}
PageRankLoop::~PageRankLoop() = default;

Job PageRankLoop::job(std::size_t iterations) {
  auto m = impl_;
  return {[] {},
          [m, iterations] {
            m->run(iterations);
            return kNaN;
          },
          [m] { return m->check(); }};
}

// ----- kmeans -------------------------------------------------------------------------------------

struct KMeansLoop::Impl {
  Device d;
  const std::vector<cl_int2>& points;
  References& references;
  std::size_t per_unit, units;
  cl::Buffer points_buffer, labels, stats_part, stats, changed, changes;
  cl::Kernel accumulate, assign;
  Sum stats_sum, changes_sum;
  std::vector<cl_uint> labels_host;
  std::size_t ran = 0;

  Impl(const std::vector<cl_int2>& p, std::size_t per, References& refs)
      : points(p), references(refs), per_unit(per), units(p.size() / per),
        stats_sum(d, "kmeans_stats", sizeof(sinew::samples::KMeansStats), p.size() / per,
                  sinew::samples::kernel_text("kmeans.cl"), "add_stats"),
        changes_sum(d, "uint", sizeof(cl_uint), p.size() / per) {
    points_buffer = buffer_of(d, points);
    labels = cl::Buffer(d.context, CL_MEM_READ_WRITE, points.size() * sizeof(cl_uint));
    stats_part = cl::Buffer(d.context, CL_MEM_READ_WRITE, units * sizeof(sinew::samples::KMeansStats));
    stats = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(sinew::samples::KMeansStats));
    changed = cl::Buffer(d.context, CL_MEM_READ_WRITE, units * sizeof(cl_uint));
    changes = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(cl_uint));
    cl::Program program = d.build(sinew::samples::kernel_text("kmeans.cl"));
    accumulate = cl::Kernel(program, "kmeans_accumulate");
    assign = cl::Kernel(program, "kmeans_assign");
    const auto per_arg = static_cast<cl_uint>(per_unit);
    accumulate.setArg(0, points_buffer), accumulate.setArg(1, labels), accumulate.setArg(2, stats_part);
    accumulate.setArg(3, per_arg);
    assign.setArg(0, points_buffer), assign.setArg(1, labels), assign.setArg(2, changed), assign.setArg(3, stats);
    assign.setArg(4, per_arg);
  }

  void run(std::size_t iterations) {
    cl::CommandQueue& q = d.queue;
    const auto first = sinew::samples::kmeans_first_labels(points.size());
    q.enqueueWriteBuffer(labels, CL_FALSE, 0, first.size() * sizeof(cl_uint), first.data());
    cl_uint changes_host = 0;
    for (std::size_t i = 0; i < iterations; ++i) {
      q.enqueueNDRangeKernel(accumulate, cl::NullRange, cl::NDRange(units));
      stats_sum.enqueue(q, stats_part, units, stats);
      q.enqueueNDRangeKernel(assign, cl::NullRange, cl::NDRange(units));
      changes_sum.enqueue(q, changed, units, changes);
      cl::Event read;
      q.enqueueReadBuffer(changes, CL_FALSE, 0, sizeof(cl_uint), &changes_host, nullptr, &read);
      read.wait();  // the test of the changes
      if (changes_host == 0) break;
    }
    labels_host.resize(points.size());
    q.enqueueReadBuffer(labels, CL_TRUE, 0, labels_host.size() * sizeof(cl_uint), labels_host.data());
    ran = iterations;
  }

  std::string check() const {
    const auto& want = references.kmeans(points, ran);
    if (want.empty()) return "k-means converges before " + std::to_string(ran) + " iterations: time fewer";
    return labels_host == want ? std::string("OK") : std::string("the clusters differ from the reference's");
  }
};

KMeansLoop::KMeansLoop(const std::vector<cl_int2>& points, std::size_t per_unit, References& references)
    : impl_(std::make_shared<Impl>(points, per_unit, references)) {}
KMeansLoop::~KMeansLoop() = default;

Job KMeansLoop::job(std::size_t iterations) {
  auto m = impl_;
  return {[] {},
          [m, iterations] {
            m->run(iterations);
            return kNaN;
          },
          [m] { return m->check(); }};
}

// ----- a value feeding the next kernel --------------------------------------------------------

const std::string& value_loop_source() {
  static const std::string source = R"CL(
__kernel void value_copy(__global const float* x, __global float* part) {
  const size_t i = get_global_id(0);
  part[i] = x[i];
}
__kernel void value_add(__global const float* x, __global float* y, __global const float* sum) {
  const size_t i = get_global_id(0);
  y[i] = x[i] + sum[0];
}
__kernel void value_add_by_value(__global const float* x, __global float* y, float sum) {
  const size_t i = get_global_id(0);
  y[i] = x[i] + sum;
}
)CL";
  return source;
}

struct ValueLoop::Impl {
  Device d;
  std::size_t n;
  cl::Buffer x, part, y, sum;
  cl::Kernel copy, add;
  Sum reduce;
  std::vector<cl_float> x_host, y_host;
  cl_float sum_host = 0;

  explicit Impl(std::size_t count) : n(count), reduce(d, "float", sizeof(cl_float), count) {
    x_host.resize(n);
    for (std::size_t i = 0; i < n; ++i) x_host[i] = static_cast<cl_float>(i % 7);
    x = buffer_of(d, x_host);
    part = cl::Buffer(d.context, CL_MEM_READ_WRITE, n * sizeof(cl_float));
    y = cl::Buffer(d.context, CL_MEM_READ_WRITE, n * sizeof(cl_float));
    sum = cl::Buffer(d.context, CL_MEM_READ_WRITE, sizeof(cl_float));
    cl::Program program = d.build(value_loop_source());
    copy = cl::Kernel(program, "value_copy");
    add = cl::Kernel(program, "value_add");
    copy.setArg(0, x), copy.setArg(1, part);
    add.setArg(0, x), add.setArg(1, y), add.setArg(2, sum);
  }

  void run(std::size_t iterations) {
    cl::CommandQueue& q = d.queue;
    for (std::size_t i = 0; i < iterations; ++i) {
      q.enqueueNDRangeKernel(copy, cl::NullRange, cl::NDRange(n));
      reduce.enqueue(q, part, n, sum);
      q.enqueueNDRangeKernel(add, cl::NullRange, cl::NDRange(n));
    }
    y_host.resize(n);
    q.enqueueReadBuffer(sum, CL_FALSE, 0, sizeof(cl_float), &sum_host);
    q.enqueueReadBuffer(y, CL_TRUE, 0, n * sizeof(cl_float), y_host.data());
  }

  std::string check() const {
    double total = 0;
    for (float v : x_host) total += v;
    for (std::size_t i = 0; i < n; ++i)
      if (std::fabs(y_host[i] - (x_host[i] + total)) > 1e-5 * total)
        return "y[" + std::to_string(i) + "] = " + std::to_string(y_host[i]) + ", expected " +
               std::to_string(x_host[i] + total);
    return "OK";
  }
};

ValueLoop::ValueLoop(std::size_t n) : impl_(std::make_shared<Impl>(n)) {}
ValueLoop::~ValueLoop() = default;

Job ValueLoop::job(std::size_t iterations) {
  auto m = impl_;
  return {[] {},
          [m, iterations] {
            m->run(iterations);
            return kNaN;
          },
          [m] { return m->check(); }};
}

// ----- saxpy on a resident buffer ---------------------------------------------------------------

struct ResidentSaxpyLoop::Impl {
  Device d;
  std::size_t n;
  cl::Buffer x, y;
  cl::Kernel saxpy;
  std::size_t launches = 0;

  explicit Impl(std::size_t count) : n(count) {
    std::vector<cl_float> x_host(n), y_host(n);
    for (std::size_t i = 0; i < n; ++i) {
      x_host[i] = static_cast<cl_float>(i % 3);
      y_host[i] = static_cast<cl_float>(i % 7);
    }
    x = buffer_of(d, x_host);
    y = cl::Buffer(d.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_float), y_host.data());
    saxpy = cl::Kernel(d.build(sinew::samples::kernel_text("saxpy.cl")), "saxpy");
    saxpy.setArg(0, x), saxpy.setArg(1, y), saxpy.setArg(2, cl_float(1)), saxpy.setArg(3, static_cast<cl_uint>(n));
    d.queue.finish();
  }
  void run(std::size_t runs, bool wait_each) {
    for (std::size_t r = 0; r < runs; ++r) {
      d.queue.enqueueNDRangeKernel(saxpy, cl::NullRange, cl::NDRange(n));
      if (wait_each) d.queue.finish();
    }
    d.queue.finish();
    launches += runs;
  }
  std::string check() {
    std::vector<cl_float> got(n);
    d.queue.enqueueReadBuffer(y, CL_TRUE, 0, n * sizeof(cl_float), got.data());
    for (std::size_t i = 0; i < n; ++i)
      if (got[i] != static_cast<cl_float>(i % 7 + launches * (i % 3))) return "y differs at " + std::to_string(i);
    return "OK";
  }
};

ResidentSaxpyLoop::ResidentSaxpyLoop(std::size_t n) : impl_(std::make_shared<Impl>(n)) {}
ResidentSaxpyLoop::~ResidentSaxpyLoop() = default;
std::string ResidentSaxpyLoop::device() const { return impl_->d.description; }

Job ResidentSaxpyLoop::job(std::size_t runs, bool wait_each) {
  auto m = impl_;
  return {[] {},
          [m, runs, wait_each] {
            m->run(runs, wait_each);
            return kNaN;
          },
          [m] { return m->check(); }};
}

}  // namespace bench::hw
