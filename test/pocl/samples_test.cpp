// Every sample at its small size on PoCL, through the same descriptor the sample program,
// the benchmarks and training use. On several devices (POCL_DEVICES) the samples also run split
// over all of them and must give the single-device answer.
#include "common/sample.hpp"

#include <gtest/gtest.h>

using namespace sinew;

class Samples : public ::testing::TestWithParam<std::string> {};

TEST_P(Samples, SmallSizeMatchesTheReference) {
  Runtime rt;
  auto s = samples::find(GetParam());
  ASSERT_TRUE(s) << GetParam();
  s->prepare(s->sizes().small);
  samples::Check c;
  for (const auto& dev : rt.devices()) {  // each device alone
    Report r = s->run(rt, RunOptions{.device = dev.index});
    c = s->check();
    EXPECT_TRUE(c.ok) << GetParam() << " on " << dev.id() << ": " << c.message << " (max error " << c.max_error
                      << ", tolerance " << c.tolerance << ")";
    EXPECT_GT(r.wall_ms, 0.0);
  }
  if (rt.devices().size() > 1) {
    Config cfg;
    cfg.shares.assign(rt.devices().size(), 1.0 / rt.devices().size());
    s->run(rt, RunOptions{.config = cfg});
    c = s->check();
    EXPECT_TRUE(c.ok) << GetParam() << " split: " << c.message;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Samples, ::testing::ValuesIn(samples::names()),
                         [](const auto& info) { return info.param; });

TEST(SamplesRegistry, UnknownNameAndBadSize) {
  EXPECT_EQ(samples::find("no_such_sample"), nullptr);
  EXPECT_GE(samples::names().size(), 5u);
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  EXPECT_THROW(s->prepare(63), std::invalid_argument);  // the mirror needs an even side
  EXPECT_FALSE(s->check().ok);                           // nothing ran yet
}
