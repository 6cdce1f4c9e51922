// The timestep sample (samples/common/timestep.hpp): two trees with different units alternating
// over resident arrays, a host decision and host writes between steps; on every PoCL device this
// process sees (1, 2 or 3), for several splits, zero-copy and with the last device discrete: the
// arrays equal the C++ reference exactly, and after the first step only what the host wrote moves
// between the host and discrete devices.
#include "common/timestep.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace sinew;

TEST(TimeStep, EqualsTheReferenceAndMovesOnlyHostWrites) {
  samples::TimeStepSettings s;
  s.oscillators = 64 * 97;
  s.steps = 40;
  s.write_every = 8;
  s.write_count = 700;
  const auto want = samples::reference_timestep(s);
  ASSERT_GT(want.short_steps, 0u);
  ASSERT_LT(want.short_steps, s.steps);  // the host's decision goes both ways
  const std::size_t count = Runtime().devices().size();
  std::vector<std::vector<double>> share_sets;
  for (std::size_t d = 0; d < count; ++d) {
    std::vector<double> alone(count, 0.0);
    alone[d] = 1.0;
    share_sets.push_back(alone);
  }
  if (count > 1) {
    std::vector<double> uneven(count, 0.3 / static_cast<double>(count - 1));
    uneven[count - 1] = 0.7;
    share_sets.push_back(uneven);
  }
  for (const RuntimeOptions& ro : {RuntimeOptions{}, RuntimeOptions{.discrete = std::to_string(count - 1)}}) {
    Runtime rt(ro);
    samples::TimeStep timestep;
    for (const auto& shares : share_sets) {
      Config cfg;
      cfg.shares = shares;
      const std::string what = (ro.discrete ? "discrete " : "zero-copy ") + cfg.str();
      const auto got = timestep.run(rt, s, RunOptions{.config = cfg});
      EXPECT_EQ(got.x, want.x) << what;
      EXPECT_EQ(got.v, want.v) << what;
      EXPECT_EQ(got.short_steps, want.short_steps) << what;
      // The only partition on the discrete device keeps its slices: the host's writes go back, and
      // nothing else moves (the kick's and drift's partitions hold the same units).
      // (The poison check, $SINEW_POISON_CHECK, runs each request on host copies first.)
      if (*rt.options().poison_check) continue;
      if (ro.discrete && shares.back() == 1.0) EXPECT_EQ(got.moved_bytes, want.written_bytes) << what;
      if (!ro.discrete) EXPECT_EQ(got.moved_bytes, 0u) << what;
    }
  }
}
