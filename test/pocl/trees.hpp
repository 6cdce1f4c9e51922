// Test trees shared by the single- and multi-device suites: every node type alone and nested,
// each with host data and a plain C++ reference. Integer trees must match bitwise; float trees
// within the tolerance each case states.
#pragma once

#include <sinew/sinew.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace sinew::testing {

inline const char* kTestKernels = R"CL(
__kernel void add_scalar(__global int* v, int s) { v[get_global_id(0)] += s; }
__kernel void mul2(__global const int* a, __global int* b) { b[get_global_id(0)] = a[get_global_id(0)] * 2; }
__kernel void step3(__global int* v, uint it) { v[get_global_id(0)] = v[get_global_id(0)] * 3 + (int)it; }
__kernel void halve(__global float* x, __global float* r) {
  size_t i = get_global_id(0); x[i] *= 0.5f; r[i] = fabs(x[i]);
}
__kernel void neighbours(__global const int* all, __global int* mine, uint off, uint n) {
  uint i = off + get_global_id(0);
  mine[get_global_id(0)] = all[(i + 1) % n] - all[i];
}
__kernel void rows(__global int* img, uint width) {
  size_t x = get_global_id(0), y = get_global_id(1);
  img[y * width + x] = img[y * width + x] * 7 + (int)x;
}
__kernel void tagged(__global int* v, uint off) { v[get_global_id(0)] = (int)(off + get_global_id(0)); }
// Rows of `width` ints read with a halo of `before` and `after` rows: the slice's row y is at
// row y + before of the halo buffer.
__kernel void stencil_rows(__global const int* in, __global int* out, uint width, uint before, uint after) {
  size_t x = get_global_id(0), y = get_global_id(1);
  const __global int* c = in + (y + before) * width + x;
  int s = 0;
  for (int k = -(int)before; k <= (int)after; ++k) s += (k + 3) * c[k * (int)width];
  out[y * width + x] = s;
}
// Boundary::none: the kernel tests the vector's edges itself.
__kernel void stencil_edges(__global const int* in, __global int* out, uint width, uint off, uint total) {
  size_t x = get_global_id(0), y = get_global_id(1);
  uint row = off / width + (uint)y, rows = total / width;
  const __global int* c = in + (y + 1) * width + x;
  int s = 2 * c[0];
  if (row > 0) s += c[-(int)width];
  if (row + 1 < rows) s += 3 * c[width];
  out[y * width + x] = s;
}
// The same stencil written with in(): the mistake of reading the rows beyond the slice. Right
// where the slice is the host memory itself (zero-copy CPU devices), wrong on a GPU.
__kernel void stencil_past_slice(__global const int* in, __global int* out, uint width, uint off, uint total) {
  size_t x = get_global_id(0), y = get_global_id(1);
  uint row = off / width + (uint)y, rows = total / width;
  const __global int* c = in + y * width + x;
  int s = 2 * c[0];
  if (row > 0) s += c[-(int)width];
  if (row + 1 < rows) s += 3 * c[width];
  out[y * width + x] = s;
}
)CL";

// What stencil_rows computes over `rows` rows of `width` ints, beyond the edges as `boundary`
// says (`fill` for Boundary::constant).
inline std::vector<int> stencil_reference(const std::vector<int>& in, std::size_t width, std::size_t before,
                                          std::size_t after, Boundary boundary, int fill = 0) {
  const auto rows = static_cast<std::ptrdiff_t>(in.size() / width);
  std::vector<int> out(in.size());
  for (std::ptrdiff_t y = 0; y < rows; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      int s = 0;
      for (std::ptrdiff_t k = -static_cast<std::ptrdiff_t>(before); k <= static_cast<std::ptrdiff_t>(after); ++k) {
        std::ptrdiff_t r = y + k;
        int v = fill;
        if (r >= 0 && r < rows) v = in[static_cast<std::size_t>(r) * width + x];
        else if (boundary == Boundary::clamp) v = in[static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(r, 0, rows - 1)) * width + x];
        else if (boundary == Boundary::zero) v = 0;
        s += static_cast<int>(k + 3) * v;
      }
      out[static_cast<std::size_t>(y) * width + x] = s;
    }
  return out;
}

// loop(pipeline(stencil_rows(halo(img, 1, 1, constant 5) -> out), copy(out -> img))) over
// `rows` rows of `width` ints, `iterations` times: a heat-like loop whose partitions exchange a
// halo row each way every step. `img` holds the start grid, then the grid after a run.
struct HeatLike {
  std::vector<int> img, result;
  Vector<cl_int> I, O;
  Node tree;
  HeatLike(std::size_t rows, std::size_t width, std::size_t iterations)
      : img(rows * width), result(rows * width, 0), I(sinew::vector<cl_int>().unit(width).name("img")),
        O(sinew::vector<cl_int>().unit(width).name("out")) {
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<int>((i * 31) % 17) - 8;
    auto sweep = kernel_source(kTestKernels, "stencil_rows", "t.cl")
                     .args(halo(I, 1, 1, cl_int(5)), out(O), scalar(cl_uint(width)), scalar(cl_uint(1)),
                           scalar(cl_uint(1)))
                     .dims(2);
    tree = loop(pipeline(sweep, copy(O, I))).times(iterations);
  }
  Report run(Runtime& rt, const Config& config) {
    return rt.run(tree, {{I, img}, {O, result}}, RunOptions{.config = config}).get();
  }
};

struct Case {
  std::string name;
  Node tree;
  std::vector<Binding> bindings;
  std::function<std::string()> check;  // "" when the result is right
  Report report;
};

inline std::string compare_int(const std::vector<int>& got, const std::vector<int>& want) {
  if (got.size() != want.size()) return "size differs";
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  return "";
}

// Builds the named case over n units. Host data lives in the returned holder.
struct Holder {
  std::vector<int> a, b, c;
  std::vector<float> f, g;
  cl_int ri = 0;
  cl_float rf = 0;
};

inline std::vector<std::string> case_names() {
  return {"kernel", "pipeline_channel", "map", "loop_times_iteration", "loop_until_map_reduce",
          "map_reduce_min_max_custom", "replicated_sync_loop", "dims2_rows", "offset", "nested_three_deep",
          "scan_between_kernels", "halo_clamp", "halo_none", "halo_pipeline_zero", "halo_loop_constant"};
}

inline Case make_case(const std::string& name, std::size_t n, Holder& h) {
  Case c;
  c.name = name;
  h.a.resize(n);
  for (std::size_t i = 0; i < n; ++i) h.a[i] = static_cast<int>((i * 7919) % 1000) - 500;
  auto A = sinew::vector<cl_int>().name("a");
  auto B = sinew::vector<cl_int>().name("b");
  auto add = [&](const VectorRef& v, int s) { return kernel_source(kTestKernels, "add_scalar", "t.cl").args(inout(v), scalar(cl_int(s))); };
  const std::vector<int> a0 = h.a;

  if (name == "kernel") {
    c.tree = add(A, 5);
    c.bindings = {{A, h.a}};
    c.check = [&h, a0] { auto w = a0; for (auto& x : w) x += 5; return compare_int(h.a, w); };
  } else if (name == "pipeline_channel") {
    auto T = sinew::vector<cl_int>().name("t");  // channel: never leaves the device
    h.b.assign(n, 0);
    c.tree = pipeline(add(A, 1), kernel_source(kTestKernels, "mul2", "t.cl").args(in(A), out(T)),
                      kernel_source(kTestKernels, "mul2", "t.cl").args(in(T), out(B)));
    c.bindings = {{A, h.a}, {B, h.b}};
    c.check = [&h, a0] {
      std::vector<int> wa = a0, wb(a0.size());
      for (std::size_t i = 0; i < wa.size(); ++i) { wa[i] += 1; wb[i] = wa[i] * 4; }
      auto e = compare_int(h.a, wa);
      return e.empty() ? compare_int(h.b, wb) : e;
    };
  } else if (name == "map") {
    c.tree = map(pipeline(add(A, 2), add(A, -7)));
    c.bindings = {{A, h.a}};
    c.check = [&h, a0] { auto w = a0; for (auto& x : w) x -= 5; return compare_int(h.a, w); };
  } else if (name == "loop_times_iteration") {
    c.tree = loop(kernel_source(kTestKernels, "step3", "t.cl").args(inout(A), iteration())).times(4);
    c.bindings = {{A, h.a}};
    c.check = [&h, a0] {
      auto w = a0;
      for (int it = 0; it < 4; ++it) for (auto& x : w) x = x * 3 + it;
      return compare_int(h.a, w);
    };
  } else if (name == "loop_until_map_reduce") {
    h.f.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) h.f[i] = 1.0f + static_cast<float>(i % 3);
    auto X = sinew::vector<cl_float>().name("x");
    auto R = sinew::vector<cl_float>().name("r");
    auto res = result<cl_float>("residual");
    const std::vector<float> f0 = h.f;
    c.tree = loop(map_reduce(kernel_source(kTestKernels, "halve", "t.cl").args(inout(X), out(R)), reduce::sum(R, res)))
                 .until(res, [n](float r) { return r < 0.01f * static_cast<float>(n); })
                 .times(100);
    c.bindings = {{X, h.f}, {res, &h.rf}};
    c.check = [&h, &c, f0, n] {
      // Sum starts at 2n and halves: the first residual under n/100 comes after 8 halvings.
      auto w = f0;
      std::size_t it = 0;
      double r = 0;
      do {
        r = 0;
        for (auto& x : w) { x *= 0.5f; r += std::fabs(x); }
        ++it;
      } while (!(r < 0.01 * n) && it < 100);
      if (c.report.iterations != it) return "iterations " + std::to_string(c.report.iterations) + " want " + std::to_string(it);
      for (std::size_t i = 0; i < w.size(); ++i)
        if (h.f[i] != w[i]) return "x[" + std::to_string(i) + "] differs";  // halving is exact
      if (std::fabs(h.rf - r) > 1e-5 * r) return "residual " + std::to_string(h.rf) + " want " + std::to_string(r);
      return std::string();
    };
  } else if (name == "map_reduce_min_max_custom") {
    auto rmin = result<cl_int>("min"), rmax = result<cl_int>("max"), rcus = result<cl_int>("custom");
    auto C = sinew::vector<cl_int>().name("copy");
    h.c.assign(n, 0);
    c.tree = pipeline(map_reduce(add(A, 3), reduce::min(A, rmin)), map_reduce(copy(A, C), reduce::max(C, rmax)),
                      map_reduce(add(C, -1), reduce::custom<cl_int>(C, rcus, SINEW_TEST_DATA_DIR "/reducers.cl",
                                                                    "pick_max", cl_int(-2147483647 - 1))));
    c.bindings = {{A, h.a}, {C, h.c}, {rmin, &h.ri}};
    c.check = [&h, &c, a0, rmax, rcus] {
      auto w = a0;
      for (auto& x : w) x += 3;
      int mn = *std::min_element(w.begin(), w.end()), mx = *std::max_element(w.begin(), w.end());
      if (h.ri != mn) return "min " + std::to_string(h.ri) + " want " + std::to_string(mn);
      if (c.report.value(rmax) != mx) return "max " + std::to_string(c.report.value(rmax)) + " want " + std::to_string(mx);
      if (c.report.value(rcus) != mx - 1) return "custom " + std::to_string(c.report.value(rcus)) + " want " + std::to_string(mx - 1);
      for (auto& x : w) x -= 1;
      return compare_int(h.c, w);
    };
  } else if (name == "replicated_sync_loop") {
    // Each step reads the whole vector (every device needs all of it) and writes its own slice:
    // the slices are gathered and redistributed between iterations.
    auto N = sinew::vector<cl_int>().name("next");
    h.b.assign(n, 0);
    auto body = pipeline(kernel_source(kTestKernels, "neighbours", "t.cl").args(whole(A), out(N), offset(A), size(A)),
                         copy(N, A));
    c.tree = loop(body).times(3);
    c.bindings = {{A, h.a}, {N, h.b}};
    c.check = [&h, a0, n] {
      auto w = a0;
      for (int it = 0; it < 3; ++it) {
        std::vector<int> nx(n);
        for (std::size_t i = 0; i < n; ++i) nx[i] = w[(i + 1) % n] - w[i];
        w = nx;
      }
      return compare_int(h.a, w);
    };
  } else if (name == "dims2_rows") {
    const std::size_t width = 8;
    h.a.resize(n * width);
    for (std::size_t i = 0; i < h.a.size(); ++i) h.a[i] = static_cast<int>(i % 97);
    auto I = sinew::vector<cl_int>().unit(width).name("img");
    c.tree = kernel_source(kTestKernels, "rows", "t.cl").args(inout(I), scalar(cl_uint(width))).dims(2);
    c.bindings = {{I, h.a}};
    const std::vector<int> i0 = h.a;
    c.check = [&h, i0, width] {
      auto w = i0;
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = w[i] * 7 + static_cast<int>(i % width);
      return compare_int(h.a, w);
    };
  } else if (name == "offset") {
    c.tree = kernel_source(kTestKernels, "tagged", "t.cl").args(out(A), offset(A));
    c.bindings = {{A, h.a}};
    c.check = [&h] { std::vector<int> w(h.a.size()); std::iota(w.begin(), w.end(), 0); return compare_int(h.a, w); };
  } else if (name == "scan_between_kernels") {
    // The partitions meet mid-pipeline: each one's prefix needs the totals of those before it.
    h.b.assign(n, 0);
    c.tree = pipeline(add(A, 3), scan(A, scan_op::sum(), ScanKind::exclusive),
                      kernel_source(kTestKernels, "mul2", "t.cl").args(in(A), out(B)));
    c.bindings = {{A, h.a}, {B, h.b}};
    c.check = [&h, a0] {
      auto w = a0;
      for (auto& x : w) x += 3;
      std::exclusive_scan(w.begin(), w.end(), w.begin(), 0);
      std::vector<int> b(w.size());
      for (std::size_t i = 0; i < w.size(); ++i) b[i] = w[i] * 2;
      auto e = compare_int(h.a, w);
      return e.empty() ? compare_int(h.b, b) : e;
    };
  } else if (name == "nested_three_deep") {
    auto rsum = result<cl_int>("sum");
    c.tree = pipeline(map(add(A, 1)),
                      loop(map_reduce(pipeline(add(A, 2), kernel_source(kTestKernels, "mul2", "t.cl").args(in(A), out(B))),
                                      reduce::sum(B, rsum)))
                          .times(2));
    h.b.assign(n, 0);
    c.bindings = {{A, h.a}, {B, h.b}, {rsum, &h.ri}};
    c.check = [&h, a0] {
      auto w = a0;
      std::vector<int> b(w.size());
      for (auto& x : w) x += 1;
      for (int it = 0; it < 2; ++it)
        for (std::size_t i = 0; i < w.size(); ++i) { w[i] += 2; b[i] = w[i] * 2; }
      int sum = std::accumulate(b.begin(), b.end(), 0);
      if (h.ri != sum) return "sum " + std::to_string(h.ri) + " want " + std::to_string(sum);
      auto e = compare_int(h.a, w);
      return e.empty() ? compare_int(h.b, b) : e;
    };
  } else if (name.rfind("halo_", 0) == 0) {
    // Stencils over n rows of 4 ints: read from the host with a halo (clamp, none), a halo of a
    // channel an earlier stage wrote (zero), a loop that writes back what it reads with a halo
    // (constant): the last two exchange halo rows between partitions.
    const std::size_t width = 4;
    h.a.resize(n * width);
    for (std::size_t i = 0; i < h.a.size(); ++i) h.a[i] = static_cast<int>((i * 7919) % 1000) - 500;
    h.b.assign(n * width, 0);
    auto I = sinew::vector<cl_int>().unit(width).name("img");
    auto O = sinew::vector<cl_int>().unit(width).name("out");
    auto stencil = [&](Arg in, const VectorRef& out, std::size_t before, std::size_t after) {
      return kernel_source(kTestKernels, "stencil_rows", "t.cl")
          .args(std::move(in), sinew::out(out), scalar(cl_uint(width)), scalar(cl_uint(before)), scalar(cl_uint(after)))
          .dims(2);
    };
    const std::vector<int> i0 = h.a;
    c.bindings = {{I, h.a}, {O, h.b}};
    if (name == "halo_clamp") {
      c.tree = stencil(halo(I, 1, 1, Boundary::clamp), O, 1, 1);
      c.check = [&h, i0, width] { return compare_int(h.b, stencil_reference(i0, width, 1, 1, Boundary::clamp)); };
    } else if (name == "halo_none") {
      c.tree = kernel_source(kTestKernels, "stencil_edges", "t.cl")
                   .args(halo(I, 1, 1), out(O), scalar(cl_uint(width)), offset(O), size(O))
                   .dims(2);
      c.check = [&h, i0, width] {
        const std::size_t rows = i0.size() / width;
        std::vector<int> w(i0.size());
        for (std::size_t y = 0; y < rows; ++y)
          for (std::size_t x = 0; x < width; ++x) {
            int s = 2 * i0[y * width + x];
            if (y > 0) s += i0[(y - 1) * width + x];
            if (y + 1 < rows) s += 3 * i0[(y + 1) * width + x];
            w[y * width + x] = s;
          }
        return compare_int(h.b, w);
      };
    } else if (name == "halo_pipeline_zero") {
      const std::size_t before = std::min<std::size_t>(2, n);
      auto T = sinew::vector<cl_int>().unit(width).name("twice");
      c.tree = pipeline(kernel_source(kTestKernels, "mul2", "t.cl").args(in(I), out(T)),
                        stencil(halo(T, static_cast<std::ptrdiff_t>(before), 1, Boundary::zero), O, before, 1));
      c.check = [&h, i0, width, before] {
        auto t = i0;
        for (auto& x : t) x *= 2;
        return compare_int(h.b, stencil_reference(t, width, before, 1, Boundary::zero));
      };
    } else {
      c.tree = loop(pipeline(stencil(halo(I, 1, 1, cl_int(5)), O, 1, 1), copy(O, I))).times(3);
      c.check = [&h, i0, width] {
        auto w = i0;
        for (int it = 0; it < 3; ++it) w = stencil_reference(w, width, 1, 1, Boundary::constant, 5);
        auto e = compare_int(h.a, w);
        return e.empty() ? compare_int(h.b, w) : e;
      };
    }
  }
  return c;
}

}  // namespace sinew::testing
