// The cg sample (samples/common/cg.hpp): conjugate gradient as one loop tree whose reductions feed
// the same iteration's kernels (sinew::value, through pointers: a float2 and a float), on every
// PoCL device this process sees (1, 2 or 3: the suite is registered once per count), for several
// splits, zero-copy and with the last device discrete. Each solve stops within two iterations of
// the same iteration in double and its true residual |b - Ax| / |b| is within the accepted bound.
#include "common/cg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace sinew;

namespace {

std::vector<std::vector<double>> share_sets(std::size_t devices) {
  std::vector<std::vector<double>> s{std::vector<double>(devices, 1.0 / static_cast<double>(devices))};
  if (devices == 1) return s;
  std::vector<double> odd(devices);
  double sum = 0;
  for (std::size_t d = 0; d < devices; ++d) sum += odd[d] = 0.137 + 0.31 * static_cast<double>(d);
  for (double& x : odd) x /= sum;
  s.push_back(odd);
  return s;
}

}  // namespace

TEST(ConjugateGradient, SolvesThePoissonMatrixOnEveryPlan) {
  const std::size_t side = 24;
  const float tolerance = 1e-5f;
  const auto a = samples::poisson_2d(side);
  const auto b = samples::cg_right_hand_side(a.rows);
  std::size_t reference_iterations = 0;
  samples::reference_cg(a, b, tolerance, 1000, reference_iterations);
  double bb = 0;
  for (float v : b) bb += static_cast<double>(v) * v;
  const std::size_t count = Runtime().devices().size();
  for (const RuntimeOptions& ro : {RuntimeOptions{}, RuntimeOptions{.discrete = std::to_string(count - 1)}}) {
    Runtime rt(ro);
    samples::ConjugateGradient cg(tolerance, 1000);
    for (const auto& shares : share_sets(count)) {
      Config cfg;
      cfg.shares = shares;
      const std::string what = (ro.discrete ? "discrete " : "zero-copy ") + cfg.str();
      std::vector<cl_float> x;
      const auto s = cg.solve(rt, a, b, x, RunOptions{.config = cfg});
      EXPECT_NEAR(static_cast<double>(s.iterations), static_cast<double>(reference_iterations), 2) << what;
      EXPECT_LE(samples::relative_residual(a, b, x), samples::cg_accepted_residual(tolerance, side)) << what;
      EXPECT_LE(s.residual_norm, 1.01 * tolerance * std::sqrt(bb)) << what;  // the predicate's own stop
    }
  }
}

TEST(ConjugateGradient, StopsAtTheIterationCount) {
  const auto a = samples::poisson_2d(16);
  const auto b = samples::cg_right_hand_side(a.rows);
  Runtime rt;
  samples::ConjugateGradient cg(0.0f, 7);
  std::vector<cl_float> x;
  const auto s = cg.solve(rt, a, b, x);
  EXPECT_EQ(s.iterations, 7u);
  std::size_t reference_iterations = 0;
  const auto want = samples::reference_cg(a, b, 0.0, 7, reference_iterations);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
}
