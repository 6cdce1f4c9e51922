// Property test: random trees from a small grammar, run with random plans, equal a host
// interpretation of the same tree. Unsigned arithmetic wraps identically on host and device, so
// every comparison is bitwise.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <random>

using namespace sinew;

namespace {

const char* kSrc = R"CL(
__kernel void addu(__global uint* v, uint s) { v[get_global_id(0)] += s; }
__kernel void twice(__global const uint* a, __global uint* b) { b[get_global_id(0)] = a[get_global_id(0)] * 2u; }
__kernel void step3(__global uint* v, uint it) { v[get_global_id(0)] = v[get_global_id(0)] * 3u + it; }
__kernel void diff(__global const uint* all, __global uint* mine, uint off, uint n) {
  uint i = off + get_global_id(0);
  mine[get_global_id(0)] = all[(i + 1) % n] - all[i];
}
)CL";

struct Host {
  std::vector<cl_uint> a, b;
  std::map<std::string, cl_uint> results;
};
using Effect = std::function<void(Host&, cl_uint iteration)>;

struct Gen {
  std::mt19937 rng;
  Vector<cl_uint> A = sinew::vector<cl_uint>().name("A");
  Vector<cl_uint> B = sinew::vector<cl_uint>().name("B");
  std::vector<Result<cl_uint>> results;
  int next_result = 0;

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

  std::pair<Node, Effect> leaf() {
    switch (pick(6)) {
      case 0: {
        cl_uint s = static_cast<cl_uint>(pick(100));
        bool on_a = pick(2);
        auto& v = on_a ? A : B;
        return {kernel_source(kSrc, "addu", "p.cl").args(inout(v), scalar(s)),
                [s, on_a](Host& h, cl_uint) { for (auto& x : on_a ? h.a : h.b) x += s; }};
      }
      case 1:
        return {kernel_source(kSrc, "twice", "p.cl").args(in(A), out(B)),
                [](Host& h, cl_uint) { for (std::size_t i = 0; i < h.a.size(); ++i) h.b[i] = h.a[i] * 2u; }};
      case 2:
        return {kernel_source(kSrc, "twice", "p.cl").args(in(B), out(A)),
                [](Host& h, cl_uint) { for (std::size_t i = 0; i < h.a.size(); ++i) h.a[i] = h.b[i] * 2u; }};
      case 3:
        return {kernel_source(kSrc, "step3", "p.cl").args(inout(A), iteration()),
                [](Host& h, cl_uint it) { for (auto& x : h.a) x = x * 3u + it; }};
      case 4:
        return {kernel_source(kSrc, "diff", "p.cl").args(whole(A), out(B), offset(A), size(A)),
                [](Host& h, cl_uint) {
                  const std::size_t n = h.a.size();
                  for (std::size_t i = 0; i < n; ++i) h.b[i] = h.a[(i + 1) % n] - h.a[i];
                }};
      default:
        return {copy(B, A), [](Host& h, cl_uint) { h.a = h.b; }};
    }
  }

  std::pair<Node, Effect> node(int depth) {
    if (depth >= 3 || pick(3) == 0) return leaf();
    switch (pick(4)) {
      case 0: {
        std::vector<Node> stages;
        std::vector<Effect> effects;
        for (int i = 0, n = 1 + pick(3); i < n; ++i) {
          auto [s, e] = node(depth + 1);
          stages.push_back(s);
          effects.push_back(e);
        }
        return {pipeline(stages), [effects](Host& h, cl_uint it) { for (auto& e : effects) e(h, it); }};
      }
      case 1: {
        auto [s, e] = node(depth + 1);
        return {map(s), e};
      }
      case 2: {
        auto [s, e] = node(depth + 1);
        std::size_t times = 1 + pick(3);
        return {loop(s).times(times), [e, times](Host& h, cl_uint) {
                  for (cl_uint i = 0; i < times; ++i) e(h, i);
                }};
      }
      default: {
        auto [s, e] = node(depth + 1);
        // The body must write B for the reduction to read it: end the body with a write of B.
        auto pre = kernel_source(kSrc, "twice", "p.cl").args(in(A), out(B));
        std::string name = "r" + std::to_string(next_result++);
        results.push_back(result<cl_uint>(name));
        auto body = pipeline(s, pre);
        return {map_reduce(body, reduce::sum(B, results.back())), [e, name](Host& h, cl_uint it) {
                  e(h, it);
                  cl_uint sum = 0;
                  for (std::size_t i = 0; i < h.a.size(); ++i) {
                    h.b[i] = h.a[i] * 2u;
                    sum += h.b[i];
                  }
                  h.results[name] = sum;
                }};
      }
    }
  }
};

Config random_config(std::mt19937& rng, const std::vector<DeviceInfo>& devices) {
  Config c;
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < devices.size(); ++i) c.shares.push_back(u(rng) < 0.2 ? 0.0 : u(rng));
  if (std::all_of(c.shares.begin(), c.shares.end(), [](double s) { return s == 0; })) c.shares[0] = 1;
  const double sum = std::accumulate(c.shares.begin(), c.shares.end(), 0.0);
  for (double& s : c.shares) s /= sum;  // a plan's shares add up to 1
  const auto& fissions = devices[0].fission_configs;
  if (!fissions.empty()) c.fission = fissions[std::uniform_int_distribution<std::size_t>(0, fissions.size() - 1)(rng)].name;
  c.overlap = std::uniform_int_distribution<unsigned>(1, 4)(rng);
  return c;
}

}  // namespace

TEST(Property, RandomTreesAndPlansEqualTheHostInterpretation) {
  // The last device is driven as a discrete GPU: transfers and overlap queues get exercised too.
  Runtime rt(RuntimeOptions{.discrete = std::to_string(Runtime().devices().size() - 1)});
  std::mt19937 rng(20261122);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    Gen gen{std::mt19937(rng())};
    auto [tree, effect] = gen.node(0);
    const std::size_t n = 1 + std::uniform_int_distribution<std::size_t>(0, 700)(rng);
    Host want;
    want.a.resize(n);
    want.b.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      want.a[i] = static_cast<cl_uint>(rng());
      want.b[i] = static_cast<cl_uint>(rng());
    }
    Host got = want;
    effect(want, 0);
    const Config cfg = random_config(rng, rt.devices());
    Report r;
    try {
      std::vector<Binding> bindings;  // bind the vectors the tree uses
      const std::string dump = tree.dump();
      if (dump.find("'A'") != std::string::npos) bindings.emplace_back(gen.A, got.a);
      if (dump.find("'B'") != std::string::npos) bindings.emplace_back(gen.B, got.b);
      r = rt.run(tree, bindings, {.config = cfg}).get();
    } catch (const Error& e) {
      // A tree may read B before anything wrote it: the only error the grammar can produce.
      EXPECT_NE(std::string(e.what()).find("nothing gives it data"), std::string::npos) << e.what();
      continue;
    }
    ASSERT_EQ(got.a, want.a) << "trial " << trial << " n=" << n << " " << cfg.str() << "\n" << tree.dump();
    ASSERT_EQ(got.b, want.b) << "trial " << trial << " n=" << n << " " << cfg.str() << "\n" << tree.dump();
    for (const auto& res : gen.results) {
      if (!want.results.count(res.name())) continue;  // inside a loop that ran zero times
      ASSERT_EQ(r.value(res), want.results[res.name()]) << "trial " << trial << " " << res.name() << "\n" << tree.dump();
    }
    ++compared;
  }
  EXPECT_GE(compared, 40);  // most random trees are valid and were compared
}
