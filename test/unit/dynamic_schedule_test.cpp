// The dynamic schedule's plan side: Config items (schedule, min_chunk) and their checks, the
// slots and weights of a dynamic decomposition, and the guided chunk sizes (DynamicChunks::next).
#include "decompose/decompose.hpp"
#include "unit/expect_error.hpp"

#include <sinew/config.hpp>
#include <sinew/error.hpp>
#include <sinew/kb.hpp>

#include <gtest/gtest.h>

#include <numeric>

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
  d.fission_configs.push_back({"L2", {6, 2}, "by_counts", {}});
  return d;
}
DeviceInfo gpu(std::size_t index) {
  DeviceInfo d;
  d.index = index;
  d.kind = DeviceKind::gpu;
  d.discrete = true;
  d.name = "gpu";
  d.overlap_levels = {1, 2, 3, 4};
  return d;
}

TEST(DynamicSchedule, ParsesPrintsAndChecksItsItems) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  const Config c = Config::parse("cpu=0.25,schedule=dynamic,min_chunk=4096", devices);
  EXPECT_EQ(c.schedule, Schedule::dynamic);
  EXPECT_EQ(c.min_chunk, 4096u);
  EXPECT_DOUBLE_EQ(c.shares[1], 0.75);
  EXPECT_NE(c.str().find("schedule=dynamic, min_chunk=4096"), std::string::npos) << c.str();
  EXPECT_EQ(Config::parse("schedule=static", devices).schedule, Schedule::static_);
  // A static plan prints as it always did.
  EXPECT_EQ(Config::parse("cpu=1", devices).str().find("schedule"), std::string::npos);
  EXPECT_EQ(schedule_from_string(to_string(Schedule::dynamic)), Schedule::dynamic);
  EXPECT_FALSE(schedule_from_string("guided"));
  expect_error([&] { Config::parse("schedule=guided", devices); }, {"", "schedule=guided", "schedule takes 'static' or 'dynamic'"});
  expect_error([&] { Config::parse("schedule=dynamic,min_chunk=-3", devices); }, {"", "min_chunk=-3", "min_chunk takes a whole number"});
  expect_error([&] { Config::parse("min_chunk=64", devices); }, {"", "plan 'min_chunk=64'", "static schedule"});
  Config stat = Config::single(0, 2);
  stat.min_chunk = 10;
  expect_error([&] { stat.check(devices); }, {"", "config", "add schedule=dynamic"});
}

TEST(DynamicSchedule, OneSlotPerQueueWeightedByShares) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  Config c = Config::parse("cpu=0.4,gpu=0.6,fission=L2,overlap=3,schedule=dynamic,min_chunk=10", devices);
  const Decomposition dec = decompose(100000, 8, c, devices);
  EXPECT_TRUE(dec.parts.empty());
  ASSERT_EQ(dec.dynamic.slots.size(), 5u);  // two CPU sub-devices, three GPU queues
  EXPECT_EQ(dec.dynamic.min_units, 16u);    // rounded up to whole granules
  EXPECT_DOUBLE_EQ(dec.dynamic.weights[0], 0.4 * 6 / 8);  // sub-devices by their compute units
  EXPECT_DOUBLE_EQ(dec.dynamic.weights[1], 0.4 * 2 / 8);
  for (std::size_t q = 2; q < 5; ++q) {
    EXPECT_EQ(dec.dynamic.slots[q].device, 1u);
    EXPECT_EQ(dec.dynamic.slots[q].queue, q - 2);
    EXPECT_DOUBLE_EQ(dec.dynamic.weights[q], 0.2);
  }
  EXPECT_NE(dec.explain(devices).find("dynamic: 5 slot(s)"), std::string::npos) << dec.explain(devices);
  // A device with no share takes no chunks.
  c = Config::parse("cpu=0,schedule=dynamic", devices);
  EXPECT_EQ(decompose(100, 1, c, devices).dynamic.slots.size(), 1u);
}

TEST(DynamicSchedule, GuidedChunksShrinkAndCoverEveryUnitOnce) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  for (const char* plan : {"schedule=dynamic", "cpu=0.1,schedule=dynamic,min_chunk=100", "gpu=0.97,schedule=dynamic,overlap=2",
                           "schedule=dynamic,min_chunk=1000000000"})
    for (std::size_t total : {1u, 5u, 63u, 64u, 100003u, 1u << 20})
      for (std::size_t granule : {1u, 32u}) {
        SCOPED_TRACE(std::string(plan) + " " + std::to_string(total) + " units, granule " + std::to_string(granule));
        const Decomposition dec = decompose(total, granule, Config::parse(plan, devices), devices);
        const DynamicChunks& d = dec.dynamic;
        std::vector<std::size_t> last(d.slots.size(), SIZE_MAX);
        std::size_t taken = 0, chunks = 0;
        for (std::size_t s = 0; taken < total; s = (s + 1) % d.slots.size(), ++chunks) {  // takers in turn
          const std::size_t units = d.next(s, total - taken, dec.granule);
          ASSERT_GT(units, 0u);
          ASSERT_LE(units, total - taken);
          if (units != total - taken) {  // all but the last: whole granules, at least min_units
            EXPECT_EQ(units % dec.granule, 0u);
            EXPECT_GE(units, d.min_units);
            EXPECT_GE(total - taken - units, d.min_units);  // no sliver left behind
          }
          EXPECT_LE(units, last[s] == SIZE_MAX ? units : std::max(last[s], d.min_units) * 2);
          last[s] = units;
          taken += units;
        }
        EXPECT_EQ(taken, total);
        if (total <= d.min_units) EXPECT_EQ(chunks, 1u);
        EXPECT_LT(chunks, 80 * d.slots.size()) << chunks;  // guided: shrinking chunks, not one per unit
      }
}

TEST(DynamicSchedule, StoredAndExportedWithItsItems) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  auto kb = KnowledgeBase::memory();
  KbEntry e;
  e.key = {"tree", "cpu; gpu", "lib"};
  e.features = {{"n", 4096}};
  e.config = Config::parse("cpu=0.3,schedule=dynamic,min_chunk=512", devices);
  e.time_ms = 2;
  const auto id = kb->store_entry(e);
  EXPECT_EQ(kb->entry(id)->config, e.config);
  KbRun run;
  run.key = e.key;
  run.features = e.features;
  run.config = e.config;
  run.time_ms = 2;
  kb->record_run(run);
  EXPECT_EQ(kb->runs(id).at(0).config, e.config);
  // Through an export into another knowledge base.
  const std::string json = kb->export_json();
  EXPECT_NE(json.find("\"schedule\": \"dynamic\""), std::string::npos) << json;
  auto other = KnowledgeBase::memory();
  other->import_json(json);
  EXPECT_EQ(other->find(e.key, e.features)->config, e.config);
}

}  // namespace
