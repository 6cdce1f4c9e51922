// test/unit/designated_init_test.cpp — the public option structs take designated initialisers as
// the README writes them (`{.device = i}`) without a warning: this file is compiled with
// -Wextra -Werror=missing-field-initializers (test/CMakeLists.txt), so a member without a default
// member initialiser fails the build.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;

namespace {
RunOptions on_device(std::size_t i) { return {.device = i}; }
RunOptions with_plan(std::string plan) { return {.plan = std::move(plan)}; }
RunOptions with_config(Config c) { return {.config = std::move(c), .profile = true}; }
RunOptions balanced() { return {.balance = true}; }
DivideAndConquerSettings sort_settings() { return {.fanout = 4, .leaf_size = 1024}; }
}  // namespace

TEST(DesignatedInitialisers, RunOptionsKeepTheirDefaults) {
  const RunOptions d = on_device(1);
  EXPECT_EQ(d.device, 1u);
  EXPECT_FALSE(d.config);
  EXPECT_TRUE(d.plan.empty());
  EXPECT_FALSE(d.train);
  EXPECT_FALSE(d.balance);
  EXPECT_FALSE(d.profile);
  EXPECT_EQ(with_plan("cpu=1").plan, "cpu=1");
  EXPECT_TRUE(with_config(Config::single(0, 1)).profile.value_or(false));
  EXPECT_TRUE(balanced().balance.value_or(false));
  EXPECT_EQ(sort_settings().fanout, 4u);
}
