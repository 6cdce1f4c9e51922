// What a loop copies per iteration (Report::loop_copies, the executor's own accounting) on however
// many PoCL devices the suite is given (1, 2 or 3), zero-copy and with the last device driven like
// a GPU: a Jacobi loop that reads its grid whole (samples/kernels/jacobi.cl, with a map_reduce max
// read by the loop's predicate), an N-Body loop (nbody.cl) and a stencil loop reading its vector
// with a halo (stencil_rows, test/pocl/trees.hpp). On one device nothing goes through the host per
// iteration but the convergence value; split, each iteration moves the replicated vector's written
// slices and nothing else. Results against the C++ reference either way.
#include "common/kernels.hpp"
#include "common/reference.hpp"
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

using namespace sinew;
using namespace sinew::testing;

namespace {

struct Outcome {
  Report report;
  std::string error;  // "" when the result matches the reference
};

// loop(pipeline(map_reduce(jacobi_sweep, max), copy(unew, u))), `iterations` sweeps of an n x n grid
// (the loop's predicate reads the max change after each, never below the tolerance 0).
Outcome jacobi(Runtime& rt, std::size_t n, std::size_t iterations, const RunOptions& o) {
  const float alpha = 0.2f, wall = 5.0f;
  auto u = sinew::vector<cl_float>().unit(n).name("u");
  auto unew = sinew::vector<cl_float>().unit(n).name("unew");
  auto rowdiff = sinew::vector<cl_float>().name("rowdiff");
  auto residual = sinew::result<cl_float>("residual");
  std::size_t group = 1;
  while (group < 16 && n % (2 * group) == 0) group *= 2;
  auto sweep = samples::kernel("jacobi.cl", "jacobi_sweep")
                   .args(whole(u), out(unew), out(rowdiff), local<cl_float>(group), offset(unew),
                         scalar(static_cast<cl_uint>(n)), scalar(alpha), scalar(wall))
                   .range_of(unew)
                   .dims(2)
                   .elements_per_thread(n / group)
                   .local_size({group, 1});
  auto tree = loop(pipeline(map_reduce(sweep, reduce::max(rowdiff, residual)), copy(unew, u)))
                  .times(iterations)
                  .until(residual, [](cl_float r) { return r < 0.0f; });
  std::vector<float> grid(n * n);
  samples::reference::Random rng(7);
  for (auto& x : grid) x = rng.uniform(0, 100);
  std::vector<double> want(grid.begin(), grid.end()), residuals;
  samples::reference::heat(want, n, iterations, alpha, wall, residuals);
  float last = -1;
  Outcome r;
  r.report = rt.run(tree, {{u, grid}, {residual, &last}}, o).get();
  const double tol = 8 * FLT_EPSILON * static_cast<double>(iterations + 1) * 100;
  for (std::size_t i = 0; i < grid.size() && r.error.empty(); ++i)
    if (!(std::fabs(grid[i] - want[i]) <= tol))
      r.error = "cell " + std::to_string(i) + ": " + std::to_string(grid[i]) + ", expected " + std::to_string(want[i]);
  if (r.error.empty() && !(std::fabs(last - residuals.back()) <= tol))
    r.error = "residual " + std::to_string(last) + ", expected " + std::to_string(residuals.back());
  return r;
}

// loop(pipeline(nbody_step, copy(newpos, pos))).times(steps) over `bodies` bodies.
Outcome nbody(Runtime& rt, std::size_t bodies, std::size_t steps, const RunOptions& o) {
  const float dt = 0.01f, eps2 = 0.01f;
  auto pos = sinew::vector<cl_float4>().name("pos");
  auto vel = sinew::vector<cl_float4>().name("vel");
  auto newpos = sinew::vector<cl_float4>().name("newpos");
  auto step = samples::kernel("nbody.cl", "nbody_step")
                  .args(whole(pos), inout(vel), out(newpos), offset(vel), count(vel), size(pos), scalar(dt),
                        scalar(eps2));
  auto tree = loop(pipeline(step, copy(newpos, pos))).times(steps);
  std::vector<cl_float4> p(bodies), v(bodies, cl_float4{{0, 0, 0, 0}});
  samples::reference::Random rng(3);
  for (auto& b : p) b = cl_float4{{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), 1.0f / bodies}};
  // The reference: the same float steps on the host (semi-implicit Euler, softened gravity).
  std::vector<cl_float4> wp = p, wv = v;
  for (std::size_t s = 0; s < steps; ++s) {
    std::vector<cl_float4> next = wp;
    for (std::size_t i = 0; i < bodies; ++i) {
      double a[3] = {0, 0, 0};
      for (std::size_t j = 0; j < bodies; ++j) {
        double d[3];
        for (int k = 0; k < 3; ++k) d[k] = double(wp[j].s[k]) - wp[i].s[k];
        const double inv = 1 / std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2);
        for (int k = 0; k < 3; ++k) a[k] += wp[j].s[3] * inv * inv * inv * d[k];
      }
      for (int k = 0; k < 3; ++k) {
        wv[i].s[k] = static_cast<float>(wv[i].s[k] + a[k] * dt);
        next[i].s[k] = static_cast<float>(wp[i].s[k] + double(wv[i].s[k]) * dt);
      }
    }
    wp = next;
  }
  Outcome r;
  r.report = rt.run(tree, {{pos, p}, {vel, v}}, o).get();
  for (std::size_t i = 0; i < bodies && r.error.empty(); ++i)
    for (int k = 0; k < 3; ++k)
      if (!(std::fabs(p[i].s[k] - wp[i].s[k]) <= 1e-4f))
        r.error = "body " + std::to_string(i) + ": " + std::to_string(p[i].s[k]) + ", expected " +
                  std::to_string(wp[i].s[k]);
  return r;
}

Config even(const Runtime& rt) {
  Config c;
  c.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  return c;
}

std::string describe(const Copies& c) {
  auto one = [](const char* name, const CopyCount& n) {
    return std::string(name) + " " + std::to_string(n.count) + " (" + std::to_string(n.bytes) + " B) ";
  };
  return one("to_device", c.to_device) + one("to_host", c.to_host) + one("host", c.host) + one("device", c.device) +
         one("values", c.values);
}

class LoopCopies : public ::testing::TestWithParam<bool> {};

}  // namespace

// Each device alone: per iteration no copy through or within host memory and no replica refreshed
// on the device (the grid's one slice is its replica), one small read of the convergence value.
TEST_P(LoopCopies, OneDeviceCopiesNothingPerIteration) {
  Runtime& rt = runtime(GetParam());
  const std::size_t n = 32, iterations = 6, bodies = 256, steps = 3;
  for (std::size_t d = 0; d < rt.devices().size(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d) + (rt.devices()[d].discrete ? " (discrete)" : " (zero copy)"));
    // The device alone in one partition (Config::single): a run pinned by RunOptions::device takes
    // the device's fastest level, which on a CPU may be a fission into sub-devices, each with a
    // partition of its own that refreshes the replica.
    const RunOptions alone{.config = Config::single(d, rt.devices().size())};
    const Outcome j = jacobi(rt, n, iterations, alone);
    EXPECT_EQ(j.error, "");
    ASSERT_EQ(j.report.iterations, iterations);
    const Copies& c = j.report.loop_copies;
    EXPECT_EQ(c.host_copies(), 0u) << describe(c);
    EXPECT_EQ(c.host_bytes(), 0u) << describe(c);
    EXPECT_EQ(c.device.count, 0u) << describe(c);
    EXPECT_EQ(c.values.count, iterations) << describe(c);  // one 4-byte read per iteration
    EXPECT_EQ(c.values.bytes, iterations * sizeof(cl_float));
    // Outside the loop: the grid in and out, nothing on a zero-copy device.
    const Copies& all = j.report.copies;
    if (!rt.devices()[d].discrete) EXPECT_EQ(all.host_copies(), 0u) << describe(all);

    const Outcome b = nbody(rt, bodies, steps, alone);
    EXPECT_EQ(b.error, "");
    EXPECT_EQ(b.report.loop_copies.host_copies(), 0u) << describe(b.report.loop_copies);
    EXPECT_EQ(b.report.loop_copies.device.count, 0u) << describe(b.report.loop_copies);
    EXPECT_EQ(b.report.loop_copies.values.count, 0u);
  }
}

// A loop on each device alone that writes back what it reads with a halo beyond the vector's
// edges (clamp, zero, a constant): nothing goes to or from the host per iteration. Each iteration
// refreshes the vector's halo buffer from its slice on the device (with a clamp, each edge row
// too; a zero or constant boundary is written once): on a zero-copy CPU, whose slice is the
// user's memory, those are copies within the host memory, what a CPU device's copies are (the
// README says so).
TEST_P(LoopCopies, OneDeviceRefreshesAHaloOnTheDevice) {
  Runtime& rt = runtime(GetParam());
  const std::size_t width = 4, rows = 64, steps = 5, row_bytes = width * sizeof(cl_int);
  for (const Boundary boundary : {Boundary::clamp, Boundary::zero, Boundary::constant})
    for (std::size_t d = 0; d < rt.devices().size(); ++d) {
      const bool discrete = rt.devices()[d].discrete;
      SCOPED_TRACE("boundary " + std::to_string(static_cast<int>(boundary)) + ", device " + std::to_string(d) +
                   (discrete ? " (discrete)" : " (zero copy)"));
      auto img = sinew::vector<cl_int>().unit(width).name("img");
      auto out = sinew::vector<cl_int>().unit(width).name("out");
      const Arg read = boundary == Boundary::constant ? halo(img, 1, 1, cl_int(5)) : halo(img, 1, 1, boundary);
      auto step = kernel_source(kTestKernels, "stencil_rows", "t.cl")
                      .args(read, sinew::out(out), scalar(cl_uint(width)), scalar(cl_uint(1)), scalar(cl_uint(1)))
                      .dims(2);
      auto tree = loop(pipeline(step, copy(out, img))).times(steps);
      std::vector<int> a(width * rows), b(width * rows, 0);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>((i * 7919) % 1000) - 500;
      std::vector<int> want = a;
      for (std::size_t s = 0; s < steps; ++s) want = stencil_reference(want, width, 1, 1, boundary, 5);
      const Report r =
          rt.run(tree, {{img, a}, {out, b}}, RunOptions{.config = Config::single(d, rt.devices().size())}).get();
      EXPECT_EQ(compare_int(a, want), "");
      const Copies& c = r.loop_copies;
      EXPECT_EQ(c.to_device.count + c.to_host.count, 0u) << describe(c);
      const std::size_t edges = boundary == Boundary::clamp ? 2 : 0;
      const CopyCount& refreshes = discrete ? c.device : c.host;
      EXPECT_EQ(refreshes.count, (steps - 1) * (1 + edges)) << describe(c);
      EXPECT_EQ(refreshes.bytes, (steps - 1) * (rows + edges) * row_bytes) << describe(c);
      EXPECT_EQ((discrete ? c.host : c.device).count, 0u) << describe(c);
    }
}

// Split evenly: each iteration moves the replicated vector's written slices, nothing of the
// vectors that stay partitioned (unew, vel, rowdiff). With one zero-copy device beside discrete
// ones, the user's memory is its replica: the discrete slices come down once, the zero-copy one
// goes up once to each discrete device, each discrete device copies its own into its replica.
// With several zero-copy devices every slice goes through the host into every context's replica.
std::string expect_split(const Report& r, const Runtime& rt, std::uint64_t unit_bytes, std::size_t iterations) {
  std::uint64_t zero_copy = 0, discrete = 0, total = 0;
  std::size_t zero_copy_devices = 0, discrete_devices = 0;
  for (const auto& p : r.partitions) {
    const bool d = rt.devices().at(p.device).discrete;
    (d ? discrete : zero_copy) += p.units * unit_bytes;
    total += p.units * unit_bytes;
  }
  for (const auto& d : rt.devices()) (d.discrete ? discrete_devices : zero_copy_devices) += 1;
  const Copies& c = r.loop_copies;
  std::uint64_t to_host = 0, to_device = 0, host = 0, device = 0;
  if (zero_copy_devices == 1 && discrete_devices > 0) {
    to_host = discrete;
    to_device = zero_copy * discrete_devices + discrete * (discrete_devices - 1);
    device = discrete;
  } else {  // through a staging vector: every slice down once, into each other context and its own replica
    to_host = discrete;
    to_device = total * discrete_devices - discrete;
    host = zero_copy + zero_copy + (total * zero_copy_devices - zero_copy);
    device = discrete;
  }
  // A refresh precedes each read after the first: iterations - 1 of them (none after the last).
  const std::uint64_t refreshes = iterations - 1;
  auto check = [&](const char* what, std::uint64_t got, std::uint64_t want) {
    return got == want * refreshes ? std::string()
                                   : std::string(what) + " " + std::to_string(got) + " B, expected " +
                                         std::to_string(want * refreshes) + "; ";
  };
  return check("to_device", c.to_device.bytes, to_device) + check("to_host", c.to_host.bytes, to_host) +
         check("host", c.host.bytes, host) + check("device", c.device.bytes, device);
}

TEST_P(LoopCopies, SplitMovesOnlyTheWrittenSlices) {
  Runtime& rt = runtime(GetParam());
  if (rt.devices().size() < 2) GTEST_SKIP() << "one device";
  const std::size_t n = 32, iterations = 5;
  const Outcome j = jacobi(rt, n, iterations, RunOptions{.config = even(rt)});
  EXPECT_EQ(j.error, "");
  std::size_t working = 0;
  for (const auto& p : j.report.partitions) working += p.units > 0;
  ASSERT_EQ(working, rt.devices().size());
  EXPECT_EQ(expect_split(j.report, rt, n * sizeof(cl_float), iterations), "") << describe(j.report.loop_copies);
  EXPECT_EQ(j.report.loop_copies.values.count, iterations * rt.devices().size());

  const Outcome b = nbody(rt, 192, 3, RunOptions{.config = even(rt)});
  EXPECT_EQ(b.error, "");
  EXPECT_EQ(expect_split(b.report, rt, sizeof(cl_float4), 3), "") << describe(b.report.loop_copies);
}

// A read-only vector that one kernel reads partitioned and a later one reads whole is held once
// by a device running all of it in one partition (its slice is what the kernels read whole): a
// discrete device takes its bytes in one upload. Split, each device takes its slice and a replica.
TEST_P(LoopCopies, OnePartitionHoldsAVectorReadPartitionedAndWholeOnce) {
  Runtime& rt = runtime(GetParam());
  const char* source = R"CL(
__kernel void twice(__global const float* w, __global float* a) {
  size_t i = get_global_id(0); a[i] = 2.0f * w[i];
}
__kernel void mirror(__global const float* w, __global float* b, uint first, uint n) {
  size_t i = get_global_id(0); b[i] = w[n - 1 - (first + i)];
}
)CL";
  const std::size_t n = 4096;
  auto w = sinew::vector<cl_float>().name("w");
  auto a = sinew::vector<cl_float>().name("a");
  auto b = sinew::vector<cl_float>().name("b");
  auto tree = pipeline(kernel_source(source, "twice").args(in(w), out(a)),
                       kernel_source(source, "mirror").args(whole(w), out(b), offset(b), size(w)));
  std::vector<cl_float> wv(n), av, bv;
  for (std::size_t i = 0; i < n; ++i) wv[i] = static_cast<cl_float>(i % 97);
  const auto check = [&](const std::string& what) {
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(av[i], 2.0f * wv[i]) << what << " a at " << i;
      ASSERT_EQ(bv[i], wv[n - 1 - i]) << what << " b at " << i;
    }
  };
  for (std::size_t d = 0; d < rt.devices().size(); ++d) {
    const std::string what = "device " + std::to_string(d);
    av.assign(n, -1.0f), bv.assign(n, -1.0f);
    const Report r =
        rt.run(tree, {{w, wv}, {a, av}, {b, bv}}, RunOptions{.config = Config::single(d, rt.devices().size())}).get();
    check(what);
    if (rt.devices()[d].discrete) {
      EXPECT_EQ(r.copies.to_device.count, 1u) << what << " " << describe(r.copies);
      EXPECT_EQ(r.copies.to_device.bytes, n * sizeof(cl_float)) << what << " " << describe(r.copies);
    }
  }
  if (rt.devices().size() < 2) return;
  av.assign(n, -1.0f), bv.assign(n, -1.0f);
  rt.run(tree, {{w, wv}, {a, av}, {b, bv}}, RunOptions{.config = even(rt)}).get();
  check("split");
}

INSTANTIATE_TEST_SUITE_P(Modes, LoopCopies, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });
