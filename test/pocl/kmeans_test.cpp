// The kmeans sample (samples/common/kmeans.hpp): a struct reduced by a user function feeding the
// same iteration's assignment through sinew::value (by pointer), a loop until no point changes,
// on every PoCL device this process sees (1, 2 or 3), for several splits, zero-copy and with the
// last device discrete: every point's cluster and the iteration count equal the C++ reference's.
#include "common/kmeans.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace sinew;

TEST(KMeans, EqualsTheReferenceOnEveryPlan) {
  const std::size_t per_unit = 16, n = per_unit * 203;
  const auto points = samples::kmeans_points(n, 3);
  std::size_t reference_iterations = 0;
  const auto want = samples::reference_kmeans(points, samples::kmeans_first_labels(n), 100, reference_iterations);
  ASSERT_LT(reference_iterations, 100u);  // the predicate, not the count, ends it
  const std::size_t count = Runtime().devices().size();
  std::vector<std::vector<double>> share_sets{std::vector<double>(count, 1.0 / static_cast<double>(count))};
  if (count > 1) {
    std::vector<double> uneven(count, 0.2 / static_cast<double>(count - 1));
    uneven[0] = 0.8;
    share_sets.push_back(uneven);
  }
  for (const RuntimeOptions& ro : {RuntimeOptions{}, RuntimeOptions{.discrete = std::to_string(count - 1)}}) {
    Runtime rt(ro);
    samples::KMeans kmeans(per_unit, 100);
    for (const auto& shares : share_sets) {
      Config cfg;
      cfg.shares = shares;
      const std::string what = (ro.discrete ? "discrete " : "zero-copy ") + cfg.str();
      auto labels = samples::kmeans_first_labels(n);
      const auto o = kmeans.run(rt, points, labels, RunOptions{.config = cfg});
      EXPECT_EQ(o.iterations, reference_iterations) << what;
      EXPECT_EQ(labels, want) << what;
    }
  }
}
