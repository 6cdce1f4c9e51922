// A leaf marked whole_range() over the ranks of an MPI job (run by mpirun -np 2 and -np 3, a PoCL
// device per rank): a Cluster does not gather a leaf's vectors from every rank, so such a tree is
// refused on every rank alike, before any device work, naming the leaf and the fix; the same tree
// without the mark, and a Runtime on each rank, still run. Every rank runs every test (SPMD).
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace sinew;

namespace {

Cluster* cluster = nullptr;

const char* kKernels = R"CL(
__kernel void bump(__global int* a) { size_t i = get_global_id(0); a[i] = a[i] * 3 + 1; }
// b = a reversed: element i of a lands outside i's slice of b.
__kernel void reverse(__global const int* a, __global int* b, uint n) {
  size_t i = get_global_id(0); b[n - 1 - i] = a[i];
}
)CL";

Kernel k(const std::string& entry) { return kernel_source(kKernels, entry, "cluster_whole_range_test.cl"); }

struct Reversed {
  Vector<cl_int> a = sinew::vector<cl_int>().name("a"), b = sinew::vector<cl_int>().name("b");
  std::vector<int> ha, hb, want;
  explicit Reversed(std::size_t n) : ha(n), hb(n, 0), want(n) {
    for (std::size_t i = 0; i < n; ++i) ha[i] = static_cast<int>(i % 17) - 8;
    for (std::size_t i = 0; i < n; ++i) want[n - 1 - i] = ha[i] * 3 + 1;
  }
  Node tree(bool whole) {
    auto reverse = k("reverse").args(in(a), out(b), scalar(static_cast<cl_uint>(ha.size())));
    if (whole) reverse.whole_range();
    return pipeline(k("bump").args(inout(a)), reverse);
  }
};

}  // namespace

TEST(ClusterWholeRange, RefusedOnEveryRankBeforeDeviceWork) {
  Reversed r(96);
  const auto before = r.ha;
  try {
    cluster->run(r.tree(true), {Binding(r.a, r.ha), Binding(r.b, r.hb)});
    ADD_FAILURE() << "a whole-range leaf ran over ranks";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_tree)) << e.what();
    EXPECT_NE(e.node().find("reverse"), std::string::npos) << e.what();
    EXPECT_EQ(e.argument(), "whole_range") << e.what();
    EXPECT_NE(std::string(e.what()).find("whole_range()"), std::string::npos) << e.what();
    EXPECT_NE(e.context().fix.find("Runtime"), std::string::npos) << e.context().fix;
  }
  EXPECT_EQ(r.ha, before) << "no device work before the error";
  EXPECT_EQ(r.hb, std::vector<int>(r.hb.size(), 0));
}

// The cluster is usable after the refusal; the same leaf runs whole under a Runtime on one rank.
TEST(ClusterWholeRange, TheClusterAndARuntimeRunAfterwards) {
  Reversed r(96);
  cluster->run(pipeline(k("bump").args(inout(r.a))), {Binding(r.a, r.ha)});
  if (cluster->rank() == 0) {
    std::vector<int> bumped(96);
    for (std::size_t i = 0; i < 96; ++i) bumped[i] = (static_cast<int>(i % 17) - 8) * 3 + 1;
    EXPECT_EQ(r.ha, bumped);
  }
  Reversed local(64);
  Runtime rt;
  rt.execute(local.tree(true), {Binding(local.a, local.ha), Binding(local.b, local.hb)});
  EXPECT_EQ(local.hb, local.want);
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
