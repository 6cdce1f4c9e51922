// Every node kind the public API builds has a runner in the executor's registry (exec/nodes/),
// and a kind without one is a programming error, not a silent no-op.
#include "exec/nodes/runner.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;

namespace {
const char* kSrc = "__kernel void k(__global float* v) { v[get_global_id(0)] += 1; }";

class Unregistered final : public detail::NodeImpl {
 public:
  std::string_view kind() const override { return "unregistered"; }
};
}  // namespace

TEST(Runners, EveryKindTheApiBuildsHasOne) {
  auto v = sinew::vector<cl_float>(64).name("v"), w = sinew::vector<cl_float>(64).name("w");
  auto c = sinew::vector<cl_float2>(64).unit(64).name("c");
  auto r = sinew::result<cl_float>("r");
  auto k = kernel_source(kSrc, "k", "k.cl").args(inout(v));
  Node all = pipeline(map(k), loop(k).times(2), map_reduce(k, reduce::sum(v, r)), blas::axpy(2, v, w),
                      blas::gemm(1, v, w, 0, v, 8, 8), fft(c, FftDirection::forward), copy(v, w),
                      scan(v, scan_op::sum()),
                      divide_and_conquer(v, kernel_source(kSrc, "k", "k.cl"), kernel_source(kSrc, "k", "k.cl")),
                      variants(k, {{DeviceKind::gpu, k}}));
  std::set<std::string_view> kinds;
  detail::visit(*all.impl(), [&](const detail::NodeImpl& n) {
    EXPECT_NO_THROW(detail::runner_of(n)) << n.kind();
    kinds.insert(n.kind());
  });
  // kernel, pipeline, map, loop, map_reduce, blas.axpy, blas.gemm, fft, copy, scan, divide_and_conquer,
  // variants
  EXPECT_EQ(kinds.size(), 12u);
}

TEST(Runners, AKindWithoutOneIsALogicError) {
  Unregistered n;
  EXPECT_THROW(detail::runner_of(n), std::logic_error);
}
