// sinew::Cluster over the ranks of an MPI job (run by mpirun -np 2 and -np 3, a PoCL device per
// rank). Every rank runs every test, as an SPMD program does; outputs are compared on the root
// with plain C++ references, combined results on every rank. `--die-on-rank R` is no test: rank R
// dies before the run's first collective, for die.sh, which checks that mpirun ends the job.
// `--one-after-another` runs two Clusters in turn, the first destroyed before the second is made.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

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
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((kb + suffix).c_str());
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

TEST(Cluster, RefusesTreesWhosePartitionsMeetBeforeDeviceWork) {
  auto v = sinew::vector<cl_int>().name("v"), part = sinew::vector<cl_int>().name("part");
  auto r = result<cl_int>("r");
  auto body = kernel_source(kCopy, "copy_int").args(sinew::in(v), sinew::out(part));
  auto until = loop(map_reduce(body, reduce::sum(part, r))).until(r, [](cl_int) { return true; }).times(3);
  until.name("converge");
  std::vector<int> data = ints(64);
  expect_error_everywhere([&] { cluster->run(until, {Binding(v, data)}); }, "cannot split this tree over ranks",
                          "loop 'converge'");

  auto blurred = sinew::vector<cl_int>().name("blurred");
  auto stencil = kernel_source(kCopy, "copy_int").args(halo(v, 1, 1, Boundary::clamp), sinew::out(blurred)).name("stencil");
  std::vector<int> out(64);
  expect_error_everywhere([&] { cluster->run(map(stencil), {Binding(v, data), Binding(blurred, out)}); },
                          "read with a halo", "stencil");
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
