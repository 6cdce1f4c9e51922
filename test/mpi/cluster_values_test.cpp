// Results as arguments over the ranks of an MPI job (run by mpirun -np 2 and -np 3, a PoCL device
// per rank): a kernel that takes a map_reduce's value sees every rank's partitions combined, in a
// pipeline and in each iteration of a loop; a custom reduction's value is refused before device
// work. Every rank runs every test (SPMD); outputs are compared on the root with plain C++
// references.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

using namespace sinew;

namespace {

Cluster* cluster = nullptr;

const char* kKernels = R"CL(
__kernel void copy_int(__global const int* x, __global int* part) {
  size_t i = get_global_id(0); part[i] = x[i];
}
__kernel void add_pointer(__global const int* x, __global int* y, __global const int* total) {
  size_t i = get_global_id(0); y[i] = x[i] + total[0];
}
__kernel void flip(__global int* x, int largest) {
  size_t i = get_global_id(0); x[i] = largest - x[i] + 1;
}
)CL";

Kernel k(const std::string& entry) { return kernel_source(kKernels, entry, "cluster_values_test.cl"); }

std::vector<int> ints(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>((i * 7919) % 1000) - 500;
  return v;
}

}  // namespace

TEST(ClusterValues, APipelinesValueCombinesEveryRank) {
  const std::size_t n = 1001;
  const auto x = ints(n);
  const int total = std::accumulate(x.begin(), x.end(), 0);
  auto xv = sinew::vector<cl_int>().name("x"), part = sinew::vector<cl_int>().name("part");
  auto y = sinew::vector<cl_int>().name("y");
  auto s = result<cl_int>("s");
  auto tree = pipeline(map_reduce(k("copy_int").args(sinew::in(xv), sinew::out(part)), reduce::sum(part, s)),
                       k("add_pointer").args(sinew::in(xv), sinew::out(y), value(s)));
  std::vector<int> got(n, -1);
  cluster->run(tree, {Binding(xv, x), Binding(y, got)});
  if (cluster->is_root())
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] + total) << "element " << i;
}

TEST(ClusterValues, EachIterationsValueCombinesEveryRank) {
  const std::size_t n = 503;
  const auto x0 = ints(n);
  std::vector<int> want = x0;
  for (int it = 0; it < 4; ++it) {
    const int m = *std::max_element(want.begin(), want.end());
    for (auto& v : want) v = m - v + 1;
  }
  auto xv = sinew::vector<cl_int>().name("x"), part = sinew::vector<cl_int>().name("part");
  auto m = result<cl_int>("m");
  auto tree = loop(pipeline(map_reduce(k("copy_int").args(sinew::in(xv), sinew::out(part)), reduce::max(part, m)),
                            k("flip").args(sinew::inout(xv), value(m))))
                  .times(4);
  std::vector<int> got = x0;
  cluster->run(tree, {Binding(xv, got)});
  if (cluster->is_root())
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

// Every rank takes part in each combination, so a rank without units is refused before device
// work, as for any tree whose partitions meet.
TEST(ClusterValues, RefusesARankWithoutUnits) {
  std::vector<double> last_only(static_cast<std::size_t>(cluster->ranks()), 0.0);
  last_only.back() = 1;
  ClusterOptions o;
  o.rank_shares = last_only;
  Cluster uneven(o);
  auto xv = sinew::vector<cl_int>().name("x"), part = sinew::vector<cl_int>().name("part");
  auto m = result<cl_int>("m");
  auto tree = pipeline(map_reduce(k("copy_int").args(sinew::in(xv), sinew::out(part)), reduce::max(part, m)),
                       k("flip").args(sinew::inout(xv), value(m)));
  std::vector<int> x = ints(64);
  try {
    uneven.run(tree, {Binding(xv, x)});
    ADD_FAILURE() << "a rank without units ran a tree that passes a value";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every rank runs at least one unit"), std::string::npos) << e.what();
  }
}

TEST(ClusterValues, RefusesACustomReductionsValueBeforeDeviceWork) {
  auto xv = sinew::vector<cl_int>().name("x"), part = sinew::vector<cl_int>().name("part");
  auto y = sinew::vector<cl_int>().name("y");
  auto s = result<cl_int>("s");
  const Reducer custom = reduce::custom_source(part, s, "int add(int a, int b) { return a + b; }", "add", cl_int(0));
  auto tree = pipeline(map_reduce(k("copy_int").args(sinew::in(xv), sinew::out(part)), custom),
                       k("add_pointer").args(sinew::in(xv), sinew::out(y), value(s)));
  std::vector<int> x = ints(64), got(64);
  try {
    cluster->run(tree, {Binding(xv, x), Binding(y, got)});
    ADD_FAILURE() << "a custom reduction's value ran over ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("custom reduction as a value"), std::string::npos) << e.what();
  }
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Cluster c;
  cluster = &c;
  // Only the root reports; the others' failures still set the job's exit code.
  if (c.rank() != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  return RUN_ALL_TESTS();
}
