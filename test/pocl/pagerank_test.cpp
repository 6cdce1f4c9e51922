// The pagerank sample (samples/common/pagerank.hpp): the dangling nodes' rank mass, a reduction,
// feeding the same iteration's update through sinew::value, the ranks read whole and copied back
// each iteration, until the L1 change is below the tolerance; on every PoCL device this process
// sees (1, 2 or 3), for several splits, zero-copy and with the last device discrete: the ranks
// within the accepted L1 difference of the double reference, the iterations within one of its.
#include "common/pagerank.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace sinew;

TEST(PageRank, EqualsTheReferenceOnEveryPlan) {
  const float damping = 0.85f, tolerance = 1e-5f;
  const auto g = samples::power_law_graph(3001, 5);
  std::size_t reference_iterations = 0;
  const auto want = samples::reference_pagerank(g, damping, tolerance, 200, reference_iterations);
  ASSERT_LT(reference_iterations, 200u);
  const std::size_t count = Runtime().devices().size();
  std::vector<std::vector<double>> share_sets{std::vector<double>(count, 1.0 / static_cast<double>(count))};
  if (count > 1) {
    std::vector<double> uneven(count, 0.3 / static_cast<double>(count - 1));
    uneven[count - 1] = 0.7;
    share_sets.push_back(uneven);
  }
  for (const RuntimeOptions& ro : {RuntimeOptions{}, RuntimeOptions{.discrete = std::to_string(count - 1)}}) {
    Runtime rt(ro);
    samples::PageRank pagerank(damping, tolerance, 200);
    for (const auto& shares : share_sets) {
      Config cfg;
      cfg.shares = shares;
      const std::string what = (ro.discrete ? "discrete " : "zero-copy ") + cfg.str();
      std::vector<cl_float> ranks;
      const auto o = pagerank.run(rt, g, ranks, RunOptions{.config = cfg});
      EXPECT_NEAR(static_cast<double>(o.iterations), static_cast<double>(reference_iterations), 1) << what;
      double difference = 0;
      for (std::size_t i = 0; i < g.nodes; ++i) difference += std::fabs(ranks[i] - want[i]);
      EXPECT_LE(difference, samples::pagerank_accepted_difference(tolerance, o.iterations)) << what;
      EXPECT_LT(o.change, tolerance) << what;
    }
  }
}
