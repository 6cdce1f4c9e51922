// sinew::Cluster with trees whose partitions need those before them or gather on one device:
// scans (each rank's partitions take the totals of the ranks before) and divide and conquer (the
// levels below the crossover on every rank, the rest on the root). Run by mpirun -np 2 and -np 3,
// a PoCL device per rank (and two, one driven like a GPU, in mpi.cluster_scan.np2_two_devices).
// Every rank runs every test (SPMD); outputs are compared on the root with plain C++ references.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <unistd.h>

using namespace sinew;

namespace {

Cluster* cluster = nullptr;

std::vector<int> ints(std::size_t n, int seed = 1) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<int>((i * 7919 + static_cast<std::size_t>(seed) * 104729) % 1000) - 500;
  return v;
}

// Skewed shares 1 : 2 : ... : ranks, so no rank's units start where an even split's would.
std::vector<double> skewed(int ranks) {
  std::vector<double> s(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) s[r] = (r + 1.0) / (ranks * (ranks + 1) / 2.0);
  return s;
}

std::vector<int> scan_reference(const std::vector<int>& x, int (*op)(int, int), int identity, bool exclusive) {
  std::vector<int> y(x.size());
  int acc = identity;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (exclusive) y[i] = acc;
    acc = op(acc, x[i]);
    if (!exclusive) y[i] = acc;
  }
  return y;
}

// The first element where `got` differs from `expected` (an EXPECT, not an ASSERT: a test that
// returned early on the root would leave the other ranks waiting in its next run), or -1.
long first_difference(const std::vector<int>& got, const std::vector<int>& expected) {
  if (got.size() != expected.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i]) return static_cast<long>(i);
  return -1;
}

int add(int a, int b) { return a + b; }
int smaller(int a, int b) { return std::min(a, b); }
int larger(int a, int b) { return std::max(a, b); }

TEST(ClusterScan, BuiltInScansOverTheRanks) {
  struct Case {
    ScanOp op;
    int (*host)(int, int);
    int identity;
  };
  const std::vector<Case> cases = {{scan_op::sum(), add, 0},
                                   {scan_op::min(), smaller, std::numeric_limits<int>::max()},
                                   {scan_op::max(), larger, std::numeric_limits<int>::min()}};
  for (std::size_t n : {7u, 1003u, 20000u})
    for (const auto& c : cases)
      for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
        auto x = sinew::vector<cl_int>().name("x"), y = sinew::vector<cl_int>().name("y");
        std::vector<int> in = ints(n), out(n, -7);
        cluster->run(scan(x, y, c.op, kind), {Binding(x, in), Binding(y, out)});
        if (!cluster->is_root()) continue;
        const auto expected = scan_reference(in, c.host, c.identity, kind == ScanKind::exclusive);
        EXPECT_EQ(first_difference(out, expected), -1)
            << "n=" << n << " " << (kind == ScanKind::exclusive ? "exclusive" : "inclusive");
      }
}

TEST(ClusterScan, InPlaceWithUnevenRankShares) {
  ClusterOptions o;
  o.rank_shares = skewed(cluster->ranks());
  Cluster uneven(o);
  const std::size_t n = 9001;
  auto v = sinew::vector<cl_int>().name("v");
  const std::vector<int> in = ints(n, 3);
  std::vector<int> data = in;
  const auto rep = uneven.run(scan(v, scan_op::sum()), {Binding(v, data)});
  EXPECT_EQ(rep.shares_from, "given");
  for (int r = 0; r < uneven.ranks(); ++r) EXPECT_NEAR(rep.shares[r].share, o.rank_shares[r], 1e-12);
  if (!uneven.is_root()) return;
  const auto expected = scan_reference(in, add, 0, false);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(data[i], expected[i]) << "element " << i;
}

// Shares the Cluster found itself (here: stored, as a balancer that found one rank alone fastest
// leaves them) give every rank of a joined tree the units it must run; results stay right.
TEST(ClusterScan, StoredSharesWithAnIdleRankStillGiveItItsUnits) {
  const std::string kb = ::testing::TempDir() + "sinew-cluster-scan-kb-" + std::to_string(::getpid()) + ".sqlite";
  const std::size_t n = 5000;
  auto v = sinew::vector<cl_int>().name("v"), w = sinew::vector<cl_int>().name("w");
  const auto tree = scan(v, w, scan_op::sum());
  const std::vector<int> in = ints(n, 5);
  std::vector<int> out(n, -1);
  ClusterOptions o;
  o.runtime.kb_path = kb;
  { Cluster(o).run(tree, {Binding(v, in), Binding(w, out)}); }
  if (cluster->is_root()) {  // the stored entry: every unit on the last rank
    auto k = KnowledgeBase::open(kb);
    auto entries = k->entries_for_tree("cluster:" + tree.signature());
    ASSERT_EQ(entries.size(), 1u);
    entries[0].config.shares.assign(static_cast<std::size_t>(cluster->ranks()), 0.0);
    entries[0].config.shares.back() = 1.0;
    k->store_entry(entries[0]);
  }
  std::fill(out.begin(), out.end(), -1);
  Cluster again(o);
  const auto rep = again.run(tree, {Binding(v, in), Binding(w, out)});
  EXPECT_EQ(rep.shares_from, "stored");
  for (const auto& s : rep.shares) EXPECT_GE(s.units, 1u) << rep.str();
  if (cluster->is_root()) {
    EXPECT_EQ(first_difference(out, scan_reference(in, add, 0, false)), -1);
    std::remove(kb.c_str());
  }
}

// A custom operator that does not commute — the last non-zero value so far — so the ranks' totals
// must be folded in rank order (on the device: the carries of every partition before).
TEST(ClusterScan, ACustomOperatorFoldsTheRanksTotalsInOrder) {
  const std::size_t n = 5000;
  auto x = sinew::vector<cl_int>().name("x"), y = sinew::vector<cl_int>().name("y");
  const ScanOp last = scan_op::custom_source("int last_nonzero(int a, int b) { return b != 0 ? b : a; }",
                                             "last_nonzero", cl_int(0));
  // Mostly zeros, a non-zero value now and then: a partition's carry comes from far before it.
  std::vector<int> in(n, 0), out(n, -1);
  for (std::size_t i = 0; i < n; i += 1237) in[i] = static_cast<int>(i) + 1;
  cluster->run(scan(x, y, last), {Binding(x, in), Binding(y, out)});
  if (!cluster->is_root()) return;
  const auto expected = scan_reference(in, [](int a, int b) { return b != 0 ? b : a; }, 0, false);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], expected[i]) << "element " << i;
}

const char* kTwice = R"(
__kernel void twice(__global const int* x, __global int* y) { y[get_global_id(0)] = 2 * x[get_global_id(0)]; }
__kernel void plus_index(__global const int* y, __global int* z, uint first) {
  uint i = get_global_id(0);
  z[i] = y[i] + (int)(first + i);
})";

// A scan between two kernels in a pipeline: each rank's slices go from kernel to scan to kernel.
TEST(ClusterScan, AScanInsideAPipeline) {
  const std::size_t n = 4099;
  auto x = sinew::vector<cl_int>().name("x"), y = sinew::vector<cl_int>().name("y");
  auto z = sinew::vector<cl_int>().name("z");
  auto tree = pipeline(kernel_source(kTwice, "twice").args(sinew::in(x), sinew::out(y)), scan(y, scan_op::sum()),
                       kernel_source(kTwice, "plus_index").args(sinew::in(y), sinew::out(z), offset(y)));
  std::vector<int> in = ints(n, 5), mid(n), out(n);
  cluster->run(tree, {Binding(x, in), Binding(y, mid), Binding(z, out)});
  if (!cluster->is_root()) return;
  std::vector<int> doubled(n);
  for (std::size_t i = 0; i < n; ++i) doubled[i] = 2 * in[i];
  const auto sums = scan_reference(doubled, add, 0, false);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(mid[i], sums[i]) << "y, element " << i;
    ASSERT_EQ(out[i], sums[i] + static_cast<int>(i)) << "z, element " << i;
  }
}

// Divide and conquer: a mergesort whose leaves are sorted by one work-item each (insertion sort)
// and whose combine merges `fanout` runs sequentially from each group's first element.
const char* kSort = R"(
__kernel void sort_leaf(__global int* data, uint n, uint leaf) {
  if (get_local_id(0) != 0) return;
  uint lo = get_group_id(0) * leaf, hi = min(lo + leaf, n);
  for (uint i = lo + 1; i < hi; ++i) {
    int x = data[i];
    uint j = i;
    while (j > lo && data[j - 1] > x) { data[j] = data[j - 1]; --j; }
    data[j] = x;
  }
}
__kernel void merge_runs(__global const int* src, __global int* dst, uint n, uint run, uint fanout) {
  uint i = get_global_id(0);
  uint span = run * fanout;
  if (i >= n || i % span != 0) return;
  uint end = min(i + span, n);
  uint heads[8];
  for (uint r = 0; r < fanout; ++r) heads[r] = min(i + r * run, end);
  for (uint o = i; o < end; ++o) {
    uint best = fanout;
    int v = 0;
    for (uint r = 0; r < fanout; ++r) {
      uint stop = min(i + (r + 1) * run, end);
      if (heads[r] < stop && (best == fanout || src[heads[r]] < v)) { best = r; v = src[heads[r]]; }
    }
    dst[o] = v;
    heads[best]++;
  }
}
// Counts the combine levels each element went through: exactly the tree's levels above the
// leaves, whichever rank or device ran each.
__kernel void zero_leaf(__global int* data, uint n, uint leaf) {
  uint lo = get_group_id(0) * leaf;
  for (uint i = lo + get_local_id(0); i < min(lo + leaf, n); i += get_local_size(0)) data[i] = 0;
}
__kernel void count_level(__global const int* src, __global int* dst, uint n, uint run, uint fanout) {
  uint i = get_global_id(0);
  if (i < n) dst[i] = src[i] + 1;
})";

TEST(ClusterDivideAndConquer, SortsOverTheRanks) {
  for (std::size_t fanout : {2u, 3u})
    for (std::size_t n : {100u, 4000u, 20011u}) {
      auto v = sinew::vector<cl_int>().name("keys");
      auto tree = divide_and_conquer(v, kernel_source(kSort, "sort_leaf"), kernel_source(kSort, "merge_runs"),
                                     {.fanout = fanout, .leaf_size = 16});
      std::vector<int> keys = ints(n, static_cast<int>(fanout));
      std::vector<int> expected = keys;
      std::sort(expected.begin(), expected.end());
      cluster->run(tree, {Binding(v, keys)});
      if (cluster->is_root()) EXPECT_EQ(first_difference(keys, expected), -1) << "fanout " << fanout << " n=" << n;
    }
}

TEST(ClusterDivideAndConquer, EveryLevelRunsOnceWithUnevenRankSharesAndAGivenCrossover) {
  ClusterOptions o;
  o.rank_shares = skewed(cluster->ranks());
  Cluster uneven(o);
  const std::size_t n = 3000, leaf = 8, fanout = 2;
  std::size_t levels = 1;
  for (std::size_t s = leaf; s < n; s *= fanout) ++levels;
  const std::size_t devices = uneven.runtime().devices().size();
  // The Cluster's crossover; crossover 3 in a Config; crossover 2 in a plan text.
  for (int variant = 0; variant < 3; ++variant) {
    auto v = sinew::vector<cl_int>().name("count");
    auto tree = divide_and_conquer(v, kernel_source(kSort, "zero_leaf"), kernel_source(kSort, "count_level"),
                                   {.fanout = fanout, .leaf_size = leaf});
    std::vector<int> data(n, -1);
    RunOptions ro;
    std::size_t granule = 0;  // the rank split's, when the crossover is given
    if (variant == 1) {
      Config c{std::vector<double>(devices, 1.0 / static_cast<double>(devices))};
      c.set("crossover", "3");
      ro.config = c;
      granule = leaf * fanout * fanout;  // whole subproblems of level 2
    } else if (variant == 2) {
      ro.plan = "cpu=1,crossover=2";
      granule = leaf * fanout;
    }
    const auto rep = uneven.run(tree, {Binding(v, data)}, ro);
    if (granule)
      for (const auto& s : rep.shares)
        if (s.first + s.units < n) EXPECT_EQ((s.first + s.units) % granule, 0u) << rep.str();
    if (uneven.is_root())
      EXPECT_EQ(first_difference(data, std::vector<int>(n, static_cast<int>(levels - 1))), -1) << "variant " << variant;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Cluster c;
  cluster = &c;
  // Only the root reports; the others' failures still set the job's exit code.
  if (c.rank() != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  return RUN_ALL_TESTS();
}
