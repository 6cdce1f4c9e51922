// sinew::Cluster over the ranks of an MPI job (run by mpirun -np 2 and -np 3, a PoCL device per
// rank). Every rank runs every test, as an SPMD program does; outputs are compared on the root
// with plain C++ references, combined results on every rank. `--die-on-rank R` is no test: rank R
// dies before the run's first collective, for die.sh, which checks that mpirun ends the job.
// `--one-after-another` runs two Clusters in turn, the first destroyed before the second is made.
// `--die-mid-loop`, `--hang-on-rank` and `--stop-on-rank`: see main().
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>

#include <unistd.h>

using namespace sinew;

namespace {

Cluster* cluster = nullptr;

// out[i] = in[i] * 3 + the element's index in the whole vector (offset) + the whole size: right
// only when a rank's kernels see where its slice lies.
const char* kIndexed = R"(
__kernel void indexed(__global const int* in, __global int* out, uint first, uint count, uint size) {
  uint i = get_global_id(0);
  if (i < count) out[i] = in[i] * 3 + (int)(first + i) + (int)size;
})";

// part[i] = x[i] * w[0] (w read whole: a copy on every rank).
const char* kScaled = R"(
__kernel void scaled(__global const float* x, __global const float* w, __global float* part, uint count) {
  uint i = get_global_id(0);
  if (i < count) part[i] = x[i] * w[0];
})";

// out[i] = in[i] * a.
const char* kOffsetScaled = R"(
__kernel void offset_scaled(__global const int* in, __global int* out, int a, uint count) {
  uint i = get_global_id(0);
  if (i < count) out[i] = in[i] * a;
})";

// Copies x into part (the body of a map_reduce that reduces x itself).
const char* kCopy = R"(
__kernel void copy_int(__global const int* x, __global int* part) { part[get_global_id(0)] = x[get_global_id(0)]; })";

std::vector<int> ints(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>((i * 7919) % 1000) - 500;
  return v;
}

TEST(Cluster, SplitsAMapOverTheRanksWithWholeVectorOffsets) {
  for (std::size_t n : {1u, 5u, 1003u}) {
    auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
    auto k = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
    std::vector<int> x = ints(n), y(n, -1);
    auto rep = cluster->run(map(k), {Binding(in, x), Binding(out, y)});
    ASSERT_EQ(rep.shares.size(), static_cast<std::size_t>(cluster->ranks()));
    std::size_t covered = 0;
    for (const auto& s : rep.shares) {
      EXPECT_EQ(s.first, covered);
      covered += s.units;
    }
    EXPECT_EQ(covered, n);
    if (!cluster->is_root()) continue;
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], x[i] * 3 + static_cast<int>(i + n)) << "n=" << n << " element " << i;
  }
}

TEST(Cluster, OnlyTheRootNeedsData) {
  const std::size_t n = 999;
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  auto k = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
  // The other ranks bind empty vectors: sizes come from the root, each rank's slice is the Cluster's.
  std::vector<int> x = cluster->is_root() ? ints(n) : std::vector<int>(), y(cluster->is_root() ? n : 0);
  const auto rep = cluster->run(map(k), {Binding(in, x), Binding(out, y)});
  std::size_t units = 0;
  for (const auto& s : rep.shares) units += s.units;
  EXPECT_EQ(units, n);
  if (cluster->is_root())
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 3 + static_cast<int>(i + n)) << i;
}

TEST(Cluster, UnevenRankSharesAndARankWithoutUnits) {
  const int ranks = cluster->ranks();
  std::vector<std::vector<double>> sets;
  std::vector<double> skew(ranks);
  for (int r = 0; r < ranks; ++r) skew[r] = (r + 1.0) / (ranks * (ranks + 1) / 2.0);  // 1:2:3
  sets.push_back(skew);
  std::vector<double> last_only(ranks, 0.0);
  last_only.back() = 1;  // the root runs nothing: its data still goes out and comes back
  sets.push_back(last_only);
  for (const auto& shares : sets) {
    ClusterOptions o;
    o.rank_shares = shares;
    // A second Cluster over the same job (its own communicator), made and run by every rank.
    Cluster uneven(o);
    const std::size_t n = 600;
    auto x = sinew::vector<cl_int>().name("x"), part = sinew::vector<cl_int>().name("part");
    auto total = result<cl_int>("total"), top = result<cl_int>("top");
    auto body = [&] { return kernel_source(kCopy, "copy_int").args(sinew::in(x), sinew::out(part)); };
    auto tree = pipeline(map_reduce(body(), reduce::sum(part, total)), map_reduce(body(), reduce::max(part, top)));
    std::vector<int> data = ints(n);
    int got_total = 0, got_top = 0;
    auto rep = uneven.run(tree, {Binding(x, data), Binding(total, &got_total), Binding(top, &got_top)});
    EXPECT_EQ(rep.shares_from, "given");
    for (int r = 0; r < ranks; ++r) EXPECT_NEAR(rep.shares[r].share, shares[r], 1e-12);
    EXPECT_EQ(rep.shares.front().units, static_cast<std::size_t>(std::llround(shares.front() * n)));
    // Combined on every rank, not only the root.
    EXPECT_EQ(got_total, std::accumulate(data.begin(), data.end(), 0));
    EXPECT_EQ(got_top, *std::max_element(data.begin(), data.end()));
    EXPECT_EQ(rep.value(total), got_total);
  }
}

TEST(Cluster, BroadcastsVectorsReadWholeAndSumsFloats) {
  const std::size_t n = 777;
  auto x = sinew::vector<cl_float>().name("x"), w = sinew::vector<cl_float>().name("w");
  auto part = sinew::vector<cl_float>().name("part");
  auto sum = result<cl_float>("sum");
  auto k = kernel_source(kScaled, "scaled").args(sinew::in(x), whole(w), sinew::out(part), count(x));
  std::vector<float> xs(n), ws = {0.5f, 99.0f}, parts(n);
  for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<float>(i % 13);
  float got = 0;
  // The root's data are what counts: the other ranks bind a different weight, and it is ignored.
  if (!cluster->is_root()) ws[0] = 1000;
  cluster->run(map_reduce(k, reduce::sum(part, sum)), {Binding(x, xs), Binding(w, ws), Binding(part, parts), Binding(sum, &got)});
  double expected = 0;
  for (float v : xs) expected += v * 0.5;
  EXPECT_NEAR(got, expected, 1e-3 * expected);
  if (cluster->is_root())
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(parts[i], xs[i] * 0.5f) << i;
}

TEST(Cluster, LaterRunsTakeTheMeasuredShares) {
  const std::size_t n = 4096;
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  auto k = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
  std::vector<int> x = ints(n), y(n);
  Cluster fresh;
  const auto first = fresh.run(map(k), {Binding(in, x), Binding(out, y)});
  EXPECT_EQ(first.shares_from, "even");
  const auto second = fresh.run(map(k), {Binding(in, x), Binding(out, y)});
  EXPECT_EQ(second.shares_from, "measured");
  double sum = 0;
  for (const auto& s : second.shares) sum += s.share;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  if (cluster->is_root())
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 3 + static_cast<int>(i + n)) << i;
}

TEST(Cluster, RankSharesOutliveTheClusterInTheKnowledgeBase) {
  // Each rank's own file (only the root's holds the cluster's entry; the others' hold their slices').
  const std::string kb = ::testing::TempDir() + "sinew-cluster-kb-" + std::to_string(::getpid()) + ".sqlite";
  const std::size_t n = 3000;
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  auto tree = map(kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in)));
  std::vector<int> x = ints(n), y(n);
  ClusterOptions o;
  o.runtime.kb_path = kb;
  std::vector<double> suggested;
  {
    Cluster first(o);
    EXPECT_EQ(first.run(tree, {Binding(in, x), Binding(out, y)}).shares_from, "even");
  }
  {
    Cluster second(o);
    const auto rep = second.run(tree, {Binding(in, x), Binding(out, y)});
    EXPECT_EQ(rep.shares_from, "stored");
    double sum = 0;
    for (const auto& s : rep.shares) sum += s.share;
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  if (cluster->is_root()) {
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 3 + static_cast<int>(i + n)) << i;
    auto k = KnowledgeBase::open(kb);
    const auto entries = k->entries_for_tree("cluster:" + tree.signature());
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].config.shares.size(), static_cast<std::size_t>(cluster->ranks()));
    EXPECT_EQ(entries[0].provenance, Provenance::balanced);
    EXPECT_EQ(device_count(entries[0].key.devices), static_cast<std::size_t>(cluster->ranks()));
    EXPECT_EQ(k->runs(entries[0].id).size(), 2u);  // both runs, each rank's time a partition's
  }
  {
    // An input this cluster never ran: its rank shares derived from the stored input's.
    std::vector<int> x2 = ints(2 * n), y2(2 * n);
    const auto rep = Cluster(o).run(tree, {Binding(in, x2), Binding(out, y2)});
    EXPECT_EQ(rep.shares_from, "derived");
    double sum = 0;
    for (const auto& s : rep.shares) sum += s.share;
    EXPECT_NEAR(sum, 1.0, 1e-6);
    if (cluster->is_root())
      for (std::size_t i = 0; i < 2 * n; ++i) ASSERT_EQ(y2[i], x2[i] * 3 + static_cast<int>(i + 2 * n)) << i;
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((kb + suffix).c_str());
}

// out[i] = in[i] + 1, each element spinning `heavy` * 4096 steps first: a rank given a larger
// `heavy` (a scalar, which does not change the tree's signature) is uniformly slower per unit, as
// a rank on a slower machine is.
const char* kSpin = R"(
__kernel void spin(__global const int* in, __global int* out, __global int* sink, uint heavy) {
  uint i = get_global_id(0);
  int x = in[i];
  for (uint s = 0; s < heavy * 4096; ++s) x = (x * 1103515245 + 12345) & 0x7fffffff;
  out[i] = in[i] + 1;
  sink[i] = x;  // keeps the loop
})";

// Runs the spin tree up to `most` times on a Cluster of its own, rank `slow` (-1: none) `factor`
// times slower per unit; returns every run's report.
std::vector<ClusterReport> spin_runs(int slow, unsigned factor, int most, bool stop_once_moved) {
  const std::size_t n = 4000;
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  auto sink = sinew::vector<cl_int>().name("sink");
  ClusterOptions o;
  o.runtime.quiet = true;
  Cluster c(o);
  const cl_uint heavy = c.rank() == slow ? factor : 1;
  auto tree = map(kernel_source(kSpin, "spin").args(sinew::in(in), sinew::out(out), sinew::out(sink), scalar(heavy)));
  std::vector<int> x = ints(n), y(n), z(n);
  std::vector<ClusterReport> reports;
  for (int run = 0; run < most; ++run) {
    reports.push_back(c.run(tree, {Binding(in, x), Binding(out, y), Binding(sink, z)}));
    EXPECT_EQ(reports.back().shares_from, run == 0 ? "even" : "measured");
    if (c.is_root())
      for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(y[i], x[i] + 1) << i;
    // Every rank decides alike (the root's shares are every rank's): stop together.
    if (stop_once_moved && run > 0 && reports.back().shares.back().share != reports.front().shares.back().share) break;
  }
  return reports;
}

// The rank split is the device balancer's (schedule/balancer.hpp): a rank 8x slower per unit
// loses work to the others once the balancer has judged a few runs (the first move comes at the
// 7th run with the default settings: the plan's first run, a window of 3, then lbt reaching its
// trigger after 3 unbalanced runs; later where noise, on this shared VM, interrupts a streak).
TEST(Cluster, RankSharesMoveAwayFromASlowRank) {
  const int slow = cluster->ranks() - 1;
  const auto reports = spin_runs(slow, 8, 16, true);
  const double even = 1.0 / cluster->ranks();
  const auto& last = reports.back();
  ASSERT_GT(reports.size(), 1u);
  EXPECT_LT(last.shares[slow].share, even - 0.1) << last.str();
  EXPECT_LT(last.shares[slow].units, 4000u / cluster->ranks()) << last.str();
  // Towards the measured throughput: the slow rank's share is near 1/8 of a fast one's, hedged.
  // (How the others share the rest follows their own times, which differ where 3 ranks share 2
  // cores.)
  double others = 0;
  for (int r = 0; r < slow; ++r) others += last.shares[r].share;
  EXPECT_GT(others, 1.0 - even + 0.1) << last.str();
  EXPECT_LT(last.shares[slow].share, 0.5 * others / slow) << last.str();
  EXPECT_NEAR(std::accumulate(last.next_shares.begin(), last.next_shares.end(), 0.0), 1.0, 1e-9);
}

// Ranks alike: the balancer sees no gain beyond their noise, and the split stays (near) even.
TEST(Cluster, RankSharesStayOnEqualRanks) {
  const auto reports = spin_runs(-1, 1, 9, false);
  const double even = 1.0 / cluster->ranks();
  for (const auto& rep : reports)
    for (const auto& s : rep.shares) EXPECT_NEAR(s.share, even, 0.1) << rep.str();
}

// Every rank gets the same sinew::Error; `fragment` must be in it.
template <class F>
void expect_error_everywhere(F&& f, const std::string& fragment, const std::string& node = {}) {
  try {
    f();
    ADD_FAILURE() << "no error (wanted one about '" << fragment << "')";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    if (!node.empty()) EXPECT_NE(e.node().find(node), std::string::npos) << e.what();
  }
}

// A stencil over rows of `w` ints: next[i] = (v[i-1] + v[i] + v[i+1]) / 3 per column, edges
// clamped; diff[i] = |next[i] - v[i]| (the iteration's largest change, for the predicate).
const char* kSmooth = R"(
__kernel void smooth(__global const int* v, __global int* next, __global int* diff, uint w) {
  uint row = get_global_id(0);
  for (uint c = 0; c < w; ++c) {
    int x = (v[row * w + c] + v[(row + 1) * w + c] + v[(row + 2) * w + c]) / 3;
    next[row * w + c] = x;
    diff[row * w + c] = abs(x - v[(row + 1) * w + c]);
  }
})";

// The heat-like loop over rows of `w` ints: smooth sweeps, each reading a halo of one row, until
// no cell changes by more than `limit` (at most 300); `v`, the grid, is all a run binds.
struct SmoothLoop {
  Vector<cl_int> v;
  Node tree;
};
SmoothLoop smooth_loop(std::size_t w, int limit) {
  auto v = sinew::vector<cl_int>().unit(w).name("v"), next = sinew::vector<cl_int>().unit(w).name("next");
  auto diff = sinew::vector<cl_int>().unit(w).name("diff");
  auto change = result<cl_int>("change");
  auto sweep = kernel_source(kSmooth, "smooth")
                   .args(halo(v, 1, 1, Boundary::clamp), sinew::out(next), sinew::out(diff), scalar(cl_uint(w)))
                   .range_of(next)
                   .elements_per_thread(w);
  return {v, loop(pipeline(map_reduce(sweep, reduce::max(diff, change)), copy(next, v)))
                 .until(change, [=](cl_int x) { return x <= limit; })
                 .times(300)};
}

// A body's new value from every body's (read whole): next[i] = p[i] + (sum of p) % 97 - 48.
const char* kAllPairs = R"(
__kernel void all_pairs(__global const int* p, __global int* next, uint first, uint n) {
  uint i = get_global_id(0);
  int sum = 0;
  for (uint j = 0; j < n; ++j) sum += p[j];
  next[i] = p[first + i] + (sum % 97 + 97) % 97 - 48;
})";

// `most` sweeps, or fewer: until one changes no cell by more than `limit`.
std::vector<int> all_pairs_reference(std::vector<int> p, std::size_t steps) {
  for (std::size_t s = 0; s < steps; ++s) {
    int sum = 0;
    for (int x : p) sum += x;
    for (int& x : p) x += (sum % 97 + 97) % 97 - 48;
  }
  return p;
}

std::vector<int> smooth_reference(std::vector<int> v, std::size_t w, std::size_t most, int limit,
                                  std::size_t& iterations) {
  const std::size_t rows = v.size() / w;
  std::vector<int> next(v.size());
  for (iterations = 0; iterations < most;) {
    int change = 0;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < w; ++c) {
        auto at = [&](std::ptrdiff_t q) { return v[std::clamp<std::ptrdiff_t>(q, 0, rows - 1) * w + c]; };
        const int x = (at(r - 1) + at(r) + at(r + 1)) / 3;
        change = std::max(change, std::abs(x - v[r * w + c]));
        next[r * w + c] = x;
      }
    v = next;
    ++iterations;
    if (change <= limit) break;
  }
  return v;
}

// A heat-like loop: halo rows exchanged between the ranks every iteration, the predicate (no
// change left) combined over the ranks; equal to the single-process reference, on even and
// uneven shares.
TEST(Cluster, LoopsExchangeHalosAndAgreeOnThePredicate) {
  const std::size_t w = 5, rows = 47;
  std::vector<int> start(rows * w);
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = static_cast<int>((i * 7919) % 2000);
  std::size_t iterations = 0;
  const int limit = 40;
  const auto expected = smooth_reference(start, w, 300, limit, iterations);
  ASSERT_LT(iterations, 300u);  // the predicate, not the count, ends it
  std::vector<std::vector<double>> sets = {{}};
  std::vector<double> skew(cluster->ranks());
  for (int r = 0; r < cluster->ranks(); ++r) skew[r] = (r + 1.0) / (cluster->ranks() * (cluster->ranks() + 1) / 2.0);
  sets.push_back(skew);
  for (const auto& shares : sets) {
    ClusterOptions o;
    o.rank_shares = shares;
    Cluster c(o);
    const auto heat = smooth_loop(w, limit);
    std::vector<int> data = start;
    const auto rep = c.run(heat.tree, {Binding(heat.v, data)});
    EXPECT_EQ(rep.local.iterations, iterations);
    if (cluster->is_root())
      for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], expected[i]) << "element " << i;
  }
}

// An N-Body-like loop: each rank writes its slice of a vector that every partition reads whole
// the next iteration (the slices gathered over the ranks each time).
TEST(Cluster, LoopsGatherAVectorReadWholeEveryIteration) {
  const std::size_t n = 301, steps = 7;
  std::vector<int> start(n);
  for (std::size_t i = 0; i < n; ++i) start[i] = static_cast<int>((i * 31) % 1000) - 500;
  const auto expected = all_pairs_reference(start, steps);
  auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
  auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
  auto tree = loop(pipeline(step, copy(next, p))).times(steps);
  std::vector<int> data = start;
  cluster->run(tree, {Binding(p, data)});
  if (cluster->is_root())
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], expected[i]) << "element " << i;
}

// A vector read with a halo and never written: each rank's halo rows come from its neighbours.
TEST(Cluster, ReadsHalosAcrossRanks) {
  const std::size_t w = 3, rows = 40;
  std::vector<int> in(rows * w), out(rows * w, -1), diff(rows * w);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i * i % 301);
  std::size_t one = 0;
  const auto expected = smooth_reference(in, w, 1, 0, one);
  auto v = sinew::vector<cl_int>().unit(w).name("v"), next = sinew::vector<cl_int>().unit(w).name("next");
  auto d = sinew::vector<cl_int>().unit(w).name("d");
  auto stencil = kernel_source(kSmooth, "smooth")
                     .args(halo(v, 1, 1, Boundary::clamp), sinew::out(next), sinew::out(d), scalar(cl_uint(w)))
                     .range_of(next)
                     .elements_per_thread(w);
  cluster->run(map(stencil), {Binding(v, in), Binding(next, out), Binding(d, diff)});
  if (cluster->is_root())
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], expected[i]) << "element " << i;
}

// (Scans and divide and conquer run over ranks: cluster_scan_test.cpp.)
TEST(Cluster, RefusesCustomPredicatesBeforeDeviceWork) {
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<int> data = ints(64);
  auto part = sinew::vector<cl_int>().name("part");
  auto r = result<cl_int>("r");
  auto body = kernel_source(kCopy, "copy_int").args(sinew::in(v), sinew::out(part));
  const Reducer custom = reduce::custom_source(part, r, "int add(int a, int b) { return a + b; }", "add", cl_int(0));
  auto until = loop(map_reduce(body, custom)).until(r, [](cl_int) { return true; }).times(3);
  until.name("converge");
  expect_error_everywhere([&] { cluster->run(until, {Binding(v, data)}); }, "custom reduction", "loop 'converge'");
}

// One rank's failure inside a loop (its predicate throws at the third iteration) while the others
// wait for it in an exchange: every rank fails at once with its error, naming it; nothing is
// stored in the knowledge base for the failed run; the cluster works afterwards.
TEST(Cluster, AFailureInsideALoopFailsEveryRankAtOnce) {
  const std::string kb = ::testing::TempDir() + "sinew-cluster-fail-kb-" + std::to_string(::getpid()) + ".sqlite";
  ClusterOptions o;
  o.runtime.kb_path = kb;
  o.timeout_s = 30;
  Cluster c(o);
  const std::size_t n = 200;
  auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
  const int bad = c.ranks() - 1;
  auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
  auto tree = loop(pipeline(step, copy(next, p))).until([&](const LoopState& s) {
    if (c.rank() == bad && s.iteration == 3) throw std::runtime_error("the predicate gave up on purpose");
    return false;
  }).times(20);
  std::vector<int> data(n, 1);
  const auto t0 = std::chrono::steady_clock::now();
  expect_error_everywhere([&] { c.run(tree, {Binding(p, data)}); },
                          "rank " + std::to_string(bad) + " of " + std::to_string(c.ranks()) +
                              ": the run failed: the predicate gave up on purpose");
  // Well before the timeout: the failing rank told the others.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
  if (c.is_root()) {
    auto k = KnowledgeBase::open(kb);
    EXPECT_TRUE(k->entries_for_tree("cluster:" + tree.signature()).empty());
  }
  // Afterwards every rank goes on (a fresh communicator for the exchanges), and the complete run
  // is stored.
  auto ok = loop(pipeline(step, copy(next, p))).times(4);
  std::vector<int> again(n, 1);
  c.run(ok, {Binding(p, again)});
  if (c.is_root()) {
    const auto expected = all_pairs_reference(std::vector<int>(n, 1), 4);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(again[i], expected[i]) << i;
    auto k = KnowledgeBase::open(kb);
    EXPECT_EQ(k->entries_for_tree("cluster:" + ok.signature()).size(), 1u);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((kb + suffix).c_str());
}

TEST(Cluster, AFailureOnOneRankFailsEveryRankNamingIt) {
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  auto k = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
  std::vector<int> x = ints(100), y(100);
  const int bad = cluster->ranks() - 1;
  RunOptions o;
  if (cluster->rank() == bad) o.device = 42;  // no such device: this rank alone fails, in its own run
  expect_error_everywhere([&] { cluster->run(map(k), {Binding(in, x), Binding(out, y)}, o); },
                          "rank " + std::to_string(bad) + " of " + std::to_string(cluster->ranks()) + ": the run failed");
  // And the cluster still works afterwards: nobody is left inside a collective.
  auto rep = cluster->run(map(k), {Binding(in, x), Binding(out, y)});
  if (cluster->is_root())
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] * 3 + static_cast<int>(i + 100)) << i;
}

// Cluster::run is SPMD: ranks that run different trees or bindings are refused on every rank
// before device work, naming the ranks that differ and what differs; a rank whose scalar values
// differ (saxpy's a=2.5 on one rank, 3.5 on another; or a rank's own tuning) runs, and the root's
// log names it once; the cluster works afterwards.
TEST(Cluster, RefusesRanksThatRunDifferentTrees) {
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  const int odd = cluster->ranks() - 1;
  const bool me = cluster->rank() == odd;
  const std::string who = "rank " + std::to_string(odd) + ": ";
  std::vector<int> x = ints(100), y(100, 0);
  // Another kernel.
  auto indexed = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
  auto same = kernel_source(kOffsetScaled, "offset_scaled").args(sinew::in(in), sinew::out(out), scalar(cl_int(3)), count(in));
  expect_error_everywhere([&] { cluster->run(map(me ? indexed : same), {Binding(in, x), Binding(out, y)}); },
                          who + "the tree's structure or kernels", "cluster");
  // The same tree, its vectors bound the other way round.
  expect_error_everywhere(
      [&] { cluster->run(map(same), me ? std::vector<Binding>{Binding(out, y), Binding(in, x)}
                                       : std::vector<Binding>{Binding(in, x), Binding(out, y)}); },
      who + "the bindings", "cluster");
  // Every rank alike: it runs.
  cluster->run(map(same), {Binding(in, x), Binding(out, y)});
  if (cluster->is_root())
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] * 3) << i;
  // Another scalar on one rank: it runs (each rank its own units with its own value), and the
  // root's log says so, once.
  std::vector<std::string> lines;
  ClusterOptions o;
  o.runtime.log = [&](LogLevel, const std::string& line) {
    if (line.find("other scalar arguments") != std::string::npos) lines.push_back(line);
  };
  Cluster logged(o);
  auto scaled = kernel_source(kOffsetScaled, "offset_scaled")
                    .args(sinew::in(in), sinew::out(out), scalar(cl_int(me ? 4 : 3)), count(in));
  for (int twice = 0; twice < 2; ++twice) logged.run(map(scaled), {Binding(in, x), Binding(out, y)});
  if (logged.is_root()) {
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("rank " + std::to_string(odd) + " run tree"), std::string::npos) << lines[0];
    EXPECT_EQ(y.front(), x.front() * 3);
    EXPECT_EQ(y.back(), x.back() * 4);  // the last units are the odd rank's
  }
}

// A failure carries its category and context to every rank: a kernel that does not build gives
// every rank errc::build_failure with the compiler's log; a loop predicate that throws something
// of its own gives every rank errc::user_code naming the loop, the type thrown and a fix.
TEST(Cluster, FailuresCarryTheirCategoryAndBuildLog) {
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  std::vector<int> x = ints(64), y(64);
  auto broken = kernel_source("__kernel void broken(__global const int* x, __global int* y) { y[0] = x[0] +; }", "broken")
                    .args(sinew::in(in), sinew::out(out));
  try {
    cluster->run(map(broken), {Binding(in, x), Binding(out, y)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::build_failure)) << e.what();
    EXPECT_FALSE(e.build_log().empty()) << e.what();
    EXPECT_NE(e.context().kernel_file, "") << e.what();
    EXPECT_EQ(e.api_call(), "clBuildProgram") << e.what();
  }
  auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
  auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
  const int bad = cluster->ranks() - 1;
  auto tree = loop(pipeline(step, copy(next, p))).until([&](const LoopState& s) {
    if (cluster->rank() == bad && s.iteration == 2) throw std::runtime_error("the predicate gave up on purpose");
    return false;
  }).times(5);
  tree.name("converge");
  std::vector<int> data(100, 1);
  try {
    cluster->run(tree, {Binding(p, data)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::user_code)) << e.what();
    EXPECT_NE(e.node().find("loop 'converge'"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("std::runtime_error"), std::string::npos) << e.what();
    EXPECT_FALSE(e.context().fix.empty()) << e.what();
  }
}

TEST(Cluster, RefusesRankSharesOfTheWrongCount) {
  ClusterOptions o;
  o.rank_shares = std::vector<double>(static_cast<std::size_t>(cluster->ranks()) + 1, 1.0 / (cluster->ranks() + 1));
  expect_error_everywhere([&] { Cluster c(o); }, "ClusterOptions::rank_shares");
}

TEST(Cluster, GathersEveryRanksDevices) {
  const auto all = cluster->devices();
  ASSERT_EQ(all.size(), static_cast<std::size_t>(cluster->ranks()));
  for (int r = 0; r < cluster->ranks(); ++r) {
    EXPECT_EQ(all[r].rank, r);
    EXPECT_FALSE(all[r].host.empty());
    ASSERT_EQ(all[r].devices.size(), r == cluster->rank() ? cluster->runtime().devices().size() : all[r].devices.size());
    ASSERT_FALSE(all[r].devices.empty());
    EXPECT_FALSE(all[r].devices.front().name.empty());
  }
  const auto& own = all[cluster->rank()].devices;
  for (std::size_t d = 0; d < own.size(); ++d) {
    EXPECT_EQ(own[d].name, cluster->runtime().devices()[d].name);
    EXPECT_EQ(own[d].global_memory, cluster->runtime().devices()[d].global_memory);
  }
}

// Distributed data: each rank's own blocks (Binding::distributed), of uneven sizes (rank r's
// weight r + 2, the last taking the rest; `empty_first`: the first rank's block is empty).
std::vector<std::size_t> blocks(std::size_t units, int ranks, bool empty_first = false) {
  std::vector<std::size_t> b(ranks);
  double weights = 0;
  for (int r = empty_first ? 1 : 0; r < ranks; ++r) weights += r + 2;
  std::size_t given = 0;
  for (int r = empty_first ? 1 : 0; r + 1 < ranks; ++r) given += b[r] = static_cast<std::size_t>(units * (r + 2) / weights);
  b.back() = units - given;
  return b;
}
std::size_t first_of(const std::vector<std::size_t>& b, int rank) {
  return std::accumulate(b.begin(), b.begin() + rank, std::size_t{0});
}
template <class T>
std::vector<T> block(const std::vector<T>& whole, std::size_t first, std::size_t count) {
  return {whole.begin() + first, whole.begin() + first + count};
}

TEST(Distributed, AMapRunsOnEachRanksOwnBlock) {
  for (bool empty_first : {false, true}) {
    const std::size_t n = 1003;
    const auto b = blocks(n, cluster->ranks(), empty_first);
    const std::size_t first = first_of(b, cluster->rank()), mine = b[cluster->rank()];
    auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
    auto k = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
    const std::vector<int> global = ints(n);
    std::vector<int> x = block(global, first, mine), y(mine, -1);
    const auto rep = cluster->run(map(k), {distributed(in, x), distributed(out, y)});
    EXPECT_EQ(rep.shares_from, "distributed");
    for (int r = 0; r < cluster->ranks(); ++r) {
      EXPECT_EQ(rep.shares[r].first, first_of(b, r));
      EXPECT_EQ(rep.shares[r].units, b[r]);
    }
    // Every rank's block holds its own output: offset() and size() count in the whole vector.
    for (std::size_t i = 0; i < mine; ++i)
      ASSERT_EQ(y[i], global[first + i] * 3 + static_cast<int>(first + i + n)) << "rank " << cluster->rank() << " " << i;
    EXPECT_EQ(rep.next_shares.size(), static_cast<std::size_t>(cluster->ranks()));
  }
}

TEST(Distributed, PipelinesAndReductionsCombineOverTheRanks) {
  const std::size_t n = 901;
  const auto b = blocks(n, cluster->ranks());
  const std::size_t first = first_of(b, cluster->rank()), mine = b[cluster->rank()];
  auto in = sinew::vector<cl_int>().name("in"), mid = sinew::vector<cl_int>().name("mid");
  auto out = sinew::vector<cl_int>().name("out"), part = sinew::vector<cl_int>().name("part");
  auto total = result<cl_int>("total"), top = result<cl_int>("top");
  auto indexed = [](auto& from, auto& to) {
    return kernel_source(kIndexed, "indexed").args(sinew::in(from), sinew::out(to), offset(from), count(from), size(from));
  };
  auto copy_out = kernel_source(kCopy, "copy_int").args(sinew::in(out), sinew::out(part));
  auto tree = pipeline(indexed(in, mid), indexed(mid, out), map_reduce(copy_out, reduce::sum(part, total)),
                       map_reduce(copy_out, reduce::max(part, top)));
  const std::vector<int> global = ints(n);
  std::vector<int> expected(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int g = static_cast<int>(i + n);
    expected[i] = (global[i] * 3 + g) * 3 + g;
  }
  std::vector<int> x = block(global, first, mine), m(mine), y(mine), p(mine);
  int got_total = 0, got_top = 0;
  const auto rep = cluster->run(tree, {distributed(in, x), distributed(mid, m), distributed(out, y), distributed(part, p),
                                       Binding(total, &got_total), Binding(top, &got_top)});
  for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(y[i], expected[first + i]) << i;
  // The results are every rank's, combined over every block.
  EXPECT_EQ(got_total, std::accumulate(expected.begin(), expected.end(), 0));
  EXPECT_EQ(got_top, *std::max_element(expected.begin(), expected.end()));
  EXPECT_EQ(rep.value(total), got_total);
}

// A distributed vector beside the root's: w is read whole (the root's, broadcast), x and part are
// each rank's blocks, sum is combined.
TEST(Distributed, MixesWithTheRootsVectorsReadWhole) {
  const std::size_t n = 777;
  const auto b = blocks(n, cluster->ranks());
  const std::size_t first = first_of(b, cluster->rank()), mine = b[cluster->rank()];
  auto x = sinew::vector<cl_float>().name("x"), w = sinew::vector<cl_float>().name("w");
  auto part = sinew::vector<cl_float>().name("part");
  auto sum = result<cl_float>("sum");
  auto k = kernel_source(kScaled, "scaled").args(sinew::in(x), whole(w), sinew::out(part), count(x));
  std::vector<float> xs(mine), ws = {cluster->is_root() ? 0.5f : 1000.0f, 99.0f}, parts(mine);
  for (std::size_t i = 0; i < mine; ++i) xs[i] = static_cast<float>((first + i) % 13);
  float got = 0;
  cluster->run(map_reduce(k, reduce::sum(part, sum)), {distributed(x, xs), Binding(w, ws), distributed(part, parts),
                                                       Binding(sum, &got)});
  double expected = 0;
  for (std::size_t i = 0; i < n; ++i) expected += (i % 13) * 0.5;
  EXPECT_NEAR(got, expected, 1e-3 * expected);
  for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(parts[i], xs[i] * 0.5f) << i;
}

// The heat-like loop on blocks of rows: halos between the ranks' blocks every iteration, the
// predicate over every rank; each rank's block ends equal to its rows of the reference.
TEST(Distributed, LoopsExchangeHalosBetweenTheRanksBlocks) {
  const std::size_t w = 5, rows = 47;
  std::vector<int> start(rows * w);
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = static_cast<int>((i * 7919) % 2000);
  std::size_t iterations = 0;
  const auto expected = smooth_reference(start, w, 300, 40, iterations);
  const auto b = blocks(rows, cluster->ranks());
  const std::size_t first = first_of(b, cluster->rank()) * w, mine = b[cluster->rank()] * w;
  const auto heat = smooth_loop(w, 40);
  std::vector<int> data = block(start, first, mine);
  const auto rep = cluster->run(heat.tree, {distributed(heat.v, data)});
  EXPECT_EQ(rep.shares_from, "distributed");
  EXPECT_EQ(rep.local.iterations, iterations);
  for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(data[i], expected[first + i]) << "element " << first + i;
}

// The N-Body-like loop: p read whole and written by slices; the blocks are gathered to every rank
// before the run and after every step; each rank's block ends as the reference's.
TEST(Distributed, LoopsGatherTheBlocksOfAVectorReadWhole) {
  const std::size_t n = 301, steps = 5;
  std::vector<int> start(n);
  for (std::size_t i = 0; i < n; ++i) start[i] = static_cast<int>((i * 31) % 1000) - 500;
  const auto expected = all_pairs_reference(start, steps);
  const auto b = blocks(n, cluster->ranks());
  const std::size_t first = first_of(b, cluster->rank()), mine = b[cluster->rank()];
  auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
  auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
  std::vector<int> data = block(start, first, mine);
  cluster->run(loop(pipeline(step, copy(next, p))).times(steps), {distributed(p, data)});
  for (std::size_t i = 0; i < mine; ++i) ASSERT_EQ(data[i], expected[first + i]) << "element " << first + i;
}

TEST(Distributed, RefusesMismatchesBeforeDeviceWork) {
  const int ranks = cluster->ranks(), rank = cluster->rank();
  auto in = sinew::vector<cl_int>().name("in"), out = sinew::vector<cl_int>().name("out");
  auto k = kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in));
  std::vector<int> x = ints(10), y(10);
  // Distributed on the root alone.
  expect_error_everywhere(
      [&] { cluster->run(map(k), {cluster->is_root() ? distributed(in, x) : Binding(in, x), distributed(out, y)}); },
      "vector 'in' (binding 0) is distributed on rank 0 and bound on the root alone on rank 1", "bindings");
  // Blocks of two vectors that hold different units on the last rank.
  std::vector<int> y_short(rank == ranks - 1 ? 9 : 10);
  expect_error_everywhere([&] { cluster->run(map(k), {distributed(in, x), distributed(out, y_short)}); },
                          "rank " + std::to_string(ranks - 1) + "'s block of vector 'out' holds 9 units and its block "
                                                                "of vector 'in' 10",
                          "bindings");
  // A block that is not whole units.
  auto rows_in = sinew::vector<cl_int>().unit(4).name("rows_in"), rows_out = sinew::vector<cl_int>().unit(4).name("rows_out");
  auto rk = kernel_source(kCopy, "copy_int").args(sinew::in(rows_in), sinew::out(rows_out)).elements_per_thread(1);
  std::vector<int> r_in(rank == 0 ? 6 : 8), r_out(r_in.size());
  expect_error_everywhere([&] { cluster->run(map(rk), {distributed(rows_in, r_in), distributed(rows_out, r_out)}); },
                          "rank 0's block of vector 'rows_in' has 6 elements, not a whole number of its units of 4",
                          "bindings");
  // A vector read only whole has no blocks; a result is every rank's.
  auto xf = sinew::vector<cl_float>().name("x"), w = sinew::vector<cl_float>().name("w");
  auto part = sinew::vector<cl_float>().name("part");
  auto sum = result<cl_float>("sum");
  auto scaled = kernel_source(kScaled, "scaled").args(sinew::in(xf), whole(w), sinew::out(part), count(xf));
  std::vector<float> xs(8, 1), ws(2, 1), ps(8);
  float got = 0;
  expect_error_everywhere([&] { cluster->run(map(scaled), {Binding(xf, xs), distributed(w, ws), Binding(part, ps)}); },
                          "vector 'w' is bound as distributed, and the tree reads it whole", "tree");
  expect_error_everywhere(
      [&] {
        cluster->run(map_reduce(scaled, reduce::sum(part, sum)),
                     {distributed(xf, xs), Binding(w, ws), distributed(part, ps), distributed(Binding(sum, &got))});
      },
      "result 'sum' is bound as distributed", "bindings");
  // The cluster works afterwards.
  std::vector<int> again(10, 0);
  cluster->run(map(k), {distributed(in, x), distributed(out, again)});
  const std::size_t first = 10 * static_cast<std::size_t>(rank), n = 10 * static_cast<std::size_t>(ranks);
  for (std::size_t i = 0; i < 10; ++i) ASSERT_EQ(again[i], x[i] * 3 + static_cast<int>(first + i + n)) << i;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc == 2 && std::strcmp(argv[1], "--one-after-another") == 0) {
    // The first Cluster initialises MPI and is gone before the second is made: MPI must still be
    // there (finalised at exit only).
    int failures = 0;
    for (int round = 0; round < 2; ++round) {
      Cluster one;
      std::vector<int> x = ints(500), y(500);
      auto in = sinew::vector<cl_int>(), out = sinew::vector<cl_int>();
      one.run(map(kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in))),
              {Binding(in, x), Binding(out, y)});
      if (one.is_root())
        for (std::size_t i = 0; i < x.size(); ++i) failures += y[i] != x[i] * 3 + static_cast<int>(i + 500);
    }
    return failures ? 1 : 0;
  }
  // `--die-mid-loop R KB`: a complete loop (stored in KB), then one in which rank R is killed at
  // the third iteration while the others wait for it in an exchange (die_mid_loop.sh checks that
  // the job ends and that KB holds only the complete run). `--hang-on-rank R`: rank R stops for
  // 8 s inside a loop; with a 2 s timeout the others give up with an error saying so.
  if (argc == 4 && std::strcmp(argv[1], "--die-mid-loop") == 0) {
    ClusterOptions o;
    o.runtime.kb_path = argv[3];
    Cluster c(o);
    auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
    auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
    std::vector<int> data(500, 1);
    c.run(loop(pipeline(step, copy(next, p))).times(3), {Binding(p, data)});
    const int victim = std::atoi(argv[2]);
    c.run(loop(pipeline(step, copy(next, p))).times(50).until([&](const LoopState& s) {
      if (c.rank() == victim && s.iteration == 3) std::raise(SIGKILL);
      return false;
    }), {Binding(p, data)});
    return 0;  // not reached
  }
  // `--stop-on-rank R ROOT_S OTHERS_S`: rank R stops (SIGSTOP) inside a loop while the others wait
  // for it in an exchange, the root with a timeout of ROOT_S seconds, the other ranks OTHERS_S.
  // Each other rank prints how long its run took once it failed ("rank N: ended after S s"); as
  // the samples do, only the root prints the error ("error: ..."): stopped.sh checks both.
  if (argc == 5 && std::strcmp(argv[1], "--stop-on-rank") == 0) {
    // The rank before the Cluster is made (its timeout is an option): Open MPI's mpirun says it.
    const char* world_rank = std::getenv("OMPI_COMM_WORLD_RANK");
    const bool root = world_rank && std::atoi(world_rank) == 0;
    ClusterOptions o;
    o.timeout_s = std::atof(argv[root ? 3 : 4]);
    Cluster c(o);
    auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
    auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
    std::vector<int> data(500, 1);
    c.run(loop(pipeline(step, copy(next, p))).times(2), {Binding(p, data)});  // built and warm everywhere
    const int stopper = std::atoi(argv[2]);
    const auto start = std::chrono::steady_clock::now();
    try {
      c.run(loop(pipeline(step, copy(next, p))).times(50).until([&](const LoopState& s) {
        if (c.rank() == stopper && s.iteration == 3) std::raise(SIGSTOP);
        return false;
      }), {Binding(p, data)});
    } catch (const Error& e) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "rank %d: ended after %.2f s\n", c.rank(), s);
      if (c.is_root()) std::fprintf(stderr, "error: %s\n", e.what());
      return 3;
    }
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--hang-on-rank") == 0) {
    ClusterOptions o;
    o.timeout_s = 2;
    Cluster c(o);
    auto p = sinew::vector<cl_int>().name("p"), next = sinew::vector<cl_int>().name("next");
    auto step = kernel_source(kAllPairs, "all_pairs").args(whole(p), sinew::out(next), offset(next), size(p));
    std::vector<int> data(500, 1);
    const int sleeper = std::atoi(argv[2]);
    try {
      c.run(loop(pipeline(step, copy(next, p))).times(50).until([&](const LoopState& s) {
        if (c.rank() == sleeper && s.iteration == 2) std::this_thread::sleep_for(std::chrono::seconds(8));
        return false;
      }), {Binding(p, data)});
    } catch (const Error& e) {
      std::fprintf(stderr, "rank %d: %s\n", c.rank(), e.what());
      return 3;
    }
    return 0;
  }
  Cluster c;
  cluster = &c;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--die-on-rank") == 0) {
      if (c.rank() == std::atoi(argv[i + 1])) std::raise(SIGKILL);
      std::vector<int> x = ints(1000), y(1000);
      auto in = sinew::vector<cl_int>(), out = sinew::vector<cl_int>();
      c.run(map(kernel_source(kIndexed, "indexed").args(sinew::in(in), sinew::out(out), offset(in), count(in), size(in))),
            {Binding(in, x), Binding(out, y)});
      return 0;  // not reached: mpirun ends the job when a rank dies
    }
  // Only the root reports; the others' failures still set the job's exit code.
  if (c.rank() != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  return RUN_ALL_TESTS();
}
