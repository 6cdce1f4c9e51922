// Schedule policies as plug-ins (decompose/schedule_policy.hpp): the registry (the built-in
// policies by name, an unknown name, a second registration of a name), what each built-in policy
// answers for its plans, and the schedules' tuned values (ScheduleTuning), whose defaults are the
// values the schedules were measured with (docs/decisions/021-026). The suite every registered
// policy must pass runs on PoCL devices: test/pocl/schedule_suite_test.cpp.
#include "decompose/schedule_policy.hpp"
#include "decompose/schedules/dynamic/chunks.hpp"
#include "platform/plan_items.hpp"
#include "schedule/prepared.hpp"
#include "tree/analysis.hpp"
#include "unit/device_infos.hpp"
#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

using namespace sinew;
using namespace sinew::detail;
using sinew::testing::expect_error;

namespace {

DeviceInfo cpu(std::size_t index) {
  DeviceInfo d;
  d.index = index;
  d.kind = DeviceKind::cpu;
  d.name = "cpu";
  d.fission_configs.push_back({"none", {}, "", {}});
  return d;
}
DeviceInfo gpu(std::size_t index) { return sinew::testing::synthetic_gpu(index); }

// A policy that only has a name: enough for the registry's checks.
class Named final : public SchedulePolicy {
 public:
  explicit Named(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  Decomposition decompose(std::size_t, std::size_t, const Config&, const std::vector<DeviceInfo>&,
                          const Streaming&) const override {
    return {};
  }

 private:
  std::string name_;
};

TEST(SchedulePolicyRegistry, TheBuiltInPoliciesByName) {
  const auto policies = schedule_policies();
  ASSERT_GE(policies.size(), 2u);
  EXPECT_EQ(policies[0]->name(), "static");
  EXPECT_EQ(policies[1]->name(), "dynamic");
  EXPECT_EQ(&schedule_policy("static"), policies[0]);
  EXPECT_EQ(find_schedule_policy("dynamic"), policies[1]);
  EXPECT_EQ(find_schedule_policy("guided"), nullptr);
  // Plans name them, and only them.
  for (const SchedulePolicy* p : policies) EXPECT_TRUE(is_schedule_name(p->name())) << p->name();
  EXPECT_EQ(&schedule_policy_of(Config{}), policies[0]);  // a plan's default schedule
}

TEST(SchedulePolicyRegistry, AnUnknownNameIsAnErrorListingTheRegisteredOnes) {
  expect_error([] { schedule_policy("guided"); }, {"", "schedule", "schedule takes 'static', 'dynamic' or 'steal'"});
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  expect_error([&] { Config::parse("schedule=guided", devices); },
               {"", "schedule=guided", "schedule takes 'static', 'dynamic' or 'steal'"});
}

TEST(SchedulePolicyRegistry, ANameRegisteredTwiceIsAProgrammingError) {
  EXPECT_THROW(register_schedule_policy(std::make_unique<Named>("static")), std::logic_error);
  EXPECT_THROW(register_schedule_policy(std::make_unique<Named>("dynamic")), std::logic_error);
  EXPECT_THROW(register_schedule_policy(std::make_unique<Named>("steal")), std::logic_error);
  EXPECT_THROW(register_schedule_policy(nullptr), std::logic_error);
  // Nothing was registered by the attempts.
  EXPECT_EQ(schedule_policies().size(), 3u);
}

// What each built-in policy answers for its plans, without devices.
TEST(SchedulePolicies, WhatTheBuiltInPoliciesAnswer) {
  const SchedulePolicy& fixed = schedule_policy("static");
  const SchedulePolicy& dynamic = schedule_policy("dynamic");
  // The static schedule's shares are where its units run; the dynamic schedule's weigh its chunks.
  EXPECT_TRUE(fixed.places_shares());
  EXPECT_FALSE(dynamic.places_shares());
  // Training measures the dynamic schedule beside the static plans; runs of a dynamic plan
  // remember what they measured, a static plan's have nothing to remember.
  EXPECT_FALSE(fixed.trains());
  EXPECT_TRUE(dynamic.trains());
  EXPECT_EQ(fixed.new_memory(), nullptr);
  EXPECT_NE(dynamic_cast<DynamicMemory*>(dynamic.new_memory().get()), nullptr);
  // A tree whose partitions meet mid-run (a scan) is refused by the dynamic schedule, naming it.
  auto v = sinew::vector<cl_int>(64).name("v");
  std::vector<cl_int> host(64, 1);
  const Node scanned = scan(v, scan_op::sum());
  const Analysis an = analyze(*scanned.impl(), {{v, host}});
  EXPECT_TRUE(fixed.accepts(an));
  EXPECT_FALSE(dynamic.accepts(an));
  const std::vector<DeviceInfo> devices = {cpu(0)};
  const Config plan = Config::parse("schedule=dynamic", devices);
  EXPECT_NO_THROW(fixed.check_tree(an, plan));
  expect_error([&] { dynamic.check_tree(an, plan); }, {"scan", "scan", "dynamic schedule"});
}

// The decompositions name their policy; a static one places every unit, a dynamic one none.
TEST(SchedulePolicies, ADecompositionIsItsPolicys) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  const Decomposition placed = decompose(1000, 1, Config::parse("cpu=0.5", devices), devices);
  EXPECT_EQ(placed.policy, &schedule_policy("static"));
  std::size_t units = 0;
  for (const auto& p : placed.parts) units += p.units;
  EXPECT_EQ(units, 1000u);
  const Decomposition dealt = decompose(1000, 1, Config::parse("cpu=0.5,schedule=dynamic", devices), devices);
  EXPECT_EQ(dealt.policy, &schedule_policy("dynamic"));
  EXPECT_TRUE(dealt.parts.empty());
  EXPECT_EQ(dynamic_chunks(dealt).slots.size(), 2u);
  EXPECT_THROW(dynamic_chunks(placed), std::logic_error);
  // A run of the static plan: its partitions' queues, nothing cut while it goes.
  const auto run = placed.policy->start_run(placed, nullptr);
  EXPECT_FALSE(run->takes_chunks());
  EXPECT_EQ(run->queues().size(), 2u);
  EXPECT_TRUE(run->chunks_before_run().empty());
}

// The tuned values are the ones the schedules were measured with (docs/decisions/021-026):
// changing a default is a decision, recorded there.
TEST(ScheduleTuning, DefaultsAreTheMeasuredValues) {
  const ScheduleTuning t;
  EXPECT_EQ(t.dynamic.divisor, 2.0);
  EXPECT_EQ(t.dynamic.least_chunk_parts, 64u);
  EXPECT_EQ(t.dynamic.negligible, 1.0 / 16);
  EXPECT_EQ(t.dynamic.slow_share, 8.0);
  EXPECT_EQ(t.dynamic.slow_margin, 4.0);
  EXPECT_EQ(t.dynamic.probe_interval, 32u);
  EXPECT_EQ(t.dynamic.slowdown, 1.5);
  EXPECT_EQ(t.streaming.min_chunk_bytes, std::size_t{16} << 20);
  EXPECT_EQ(t.streaming.max_chunk_bytes, std::size_t{64} << 20);
  EXPECT_EQ(t.streaming.shrinking_chunks, 3u);
  // A decomposition takes them from its Streaming (RuntimeOptions::schedule_tuning).
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  Streaming streaming;
  streaming.tuning.dynamic.least_chunk_parts = 8;
  const Decomposition dec =
      decompose(1u << 16, 1, Config::parse("cpu=0.5,schedule=dynamic", devices), devices, streaming);
  EXPECT_EQ(dynamic_chunks(dec).min_units, (1u << 16) / (8 * 2));
  EXPECT_EQ(dynamic_chunks(dec).tuning.least_chunk_parts, 8u);
}

TEST(ScheduleTuning, AValueOutOfItsRangeIsAnErrorNamingIt) {
  EXPECT_NO_THROW(checked_tuning(ScheduleTuning{}));
  ScheduleTuning t;
  t.dynamic.divisor = 0.5;
  expect_error([&] { checked_tuning(t); }, {"", "schedule_tuning.dynamic.divisor", "at least 1"});
  t = {};
  t.dynamic.negligible = 1;
  expect_error([&] { checked_tuning(t); }, {"", "schedule_tuning.dynamic.negligible", "[0, 1)"});
  t = {};
  t.dynamic.slowdown = 1;
  expect_error([&] { checked_tuning(t); }, {"", "schedule_tuning.dynamic.slowdown", "above 1"});
  t = {};
  t.streaming.max_chunk_bytes = t.streaming.min_chunk_bytes - 1;
  expect_error([&] { checked_tuning(t); }, {"", "schedule_tuning.streaming.max_chunk_bytes", "min_chunk_bytes"});
  // A tree prepared with such a value (RuntimeOptions::schedule_tuning) is refused, naming it.
  auto v = sinew::vector<cl_int>(8).name("v");
  std::vector<cl_int> host(8, 1);
  const Node tree = kernel_source("__kernel void k(__global int* v) { v[get_global_id(0)] += 1; }", "k", "k.cl")
                        .args(inout(v));
  expect_error([&] { prepare_tree(tree, {{v, host}}, {cpu(0)}, std::nullopt, 0, t); },
               {"", "schedule_tuning.streaming.max_chunk_bytes", "min_chunk_bytes"});
}

}  // namespace
