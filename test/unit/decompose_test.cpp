// Splitting units over devices, sub-devices and queues.
#include "decompose/decompose.hpp"
#include "decompose/schedules/dynamic/chunks.hpp"
#include "platform/plan_items.hpp"
#include "tree/nodes/divide_and_conquer.hpp"
#include "unit/device_infos.hpp"
#include "unit/expect_error.hpp"

#include <sinew/error.hpp>

#include <gtest/gtest.h>

#include <numeric>

using namespace sinew;
using namespace sinew::detail;
using sinew::testing::expect_error;

namespace {
DeviceInfo cpu(std::size_t index, std::vector<unsigned> groups = {}) {
  DeviceInfo d;
  d.index = index;
  d.kind = DeviceKind::cpu;
  d.name = "cpu";
  d.fission_configs.push_back({"none", {}, "", {}});
  if (!groups.empty()) d.fission_configs.push_back({"L2", groups, "by_counts", {}});
  return d;
}
DeviceInfo gpu(std::size_t index) { return sinew::testing::synthetic_gpu(index); }

// Every unit is covered exactly once, in order.
void expect_cover(const Decomposition& dec, std::size_t total) {
  std::size_t next = 0;
  for (const auto& p : dec.parts) {
    EXPECT_EQ(p.first, next);
    EXPECT_GT(p.units, 0u);
    next += p.units;
  }
  EXPECT_EQ(next, total);
}
}  // namespace

TEST(Decompose, SharesAreHonouredToWithinOneGranule) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  Config c;
  c.shares = {0.6, 0.4};
  for (std::size_t total : {1000u, 1001u, 7u, 64u * 1024u + 3u}) {
    for (std::size_t granule : {1u, 8u, 32u}) {
      auto dec = decompose(total, granule, c, devs);
      expect_cover(dec, total);
      std::size_t cpu_units = 0;
      for (auto& p : dec.parts)
        if (p.device == 0) cpu_units += p.units;
      EXPECT_LE(std::abs(static_cast<double>(cpu_units) - 0.6 * total), static_cast<double>(granule) + 1)
          << total << " / " << granule;
    }
  }
}

TEST(Decompose, ZeroShareLeavesDeviceIdleAndOverlapMakesQueues) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  Config c;
  c.shares = {0.0, 1.0};
  c.overlap = 3;
  auto dec = decompose(100, 1, c, devs);
  expect_cover(dec, 100);
  ASSERT_EQ(dec.parts.size(), 3u);
  for (unsigned q = 0; q < 3; ++q) {
    EXPECT_EQ(dec.parts[q].device, 1u);
    EXPECT_EQ(dec.parts[q].queue, q);
  }
}

TEST(Decompose, FissionSplitsByComputeUnits) {
  std::vector<DeviceInfo> devs{cpu(0, {2, 6})};
  Config c;
  c.shares = {1.0};
  c.fission = "L2";
  auto dec = decompose(800, 1, c, devs);
  expect_cover(dec, 800);
  ASSERT_EQ(dec.parts.size(), 2u);
  EXPECT_EQ(dec.parts[0].units, 200u);
  EXPECT_EQ(dec.parts[1].units, 600u);
  EXPECT_EQ(dec.parts[1].sub_device, 1u);
}

TEST(Decompose, FewerUnitsThanGranulesStillCoverEverything) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1), gpu(2)};
  Config c;
  c.shares = {0.3, 0.3, 0.4};
  c.overlap = 4;
  auto dec = decompose(5, 32, c, devs);
  expect_cover(dec, 5);
}

TEST(Decompose, BadConfigsAreRejectedWithTheirReason) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  Config c;
  c.shares = {1.0};
  EXPECT_THROW(decompose(10, 1, c, devs), sinew::Error);
  c.shares = {0.0, 0.0};
  EXPECT_THROW(decompose(10, 1, c, devs), sinew::Error);
  c.shares = {-1.0, 2.0};
  EXPECT_THROW(decompose(10, 1, c, devs), sinew::Error);
  c.shares = {0.5, 0.5};
  c.fission = "L7";
  try {
    decompose(10, 1, c, devs);
    FAIL();
  } catch (const sinew::Error& e) {
    EXPECT_NE(std::string(e.what()).find("L7"), std::string::npos);
  }
}

TEST(ConfigParse, DivideAndConquerCrossoverAndUpperDevice) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  auto c = Config::parse("gpu=1,crossover=5,upper=0", devs);
  EXPECT_EQ(c.item("crossover"), "5");
  EXPECT_EQ(c.item("upper"), "0");
  EXPECT_NE(c.str().find("crossover=5, upper=0"), std::string::npos) << c.str();
  EXPECT_FALSE(Config::parse("gpu=1", devs).item("crossover").has_value());  // unset: neither printed nor stored
  EXPECT_EQ(Config::parse("gpu=1", devs).str().find("crossover"), std::string::npos);
  for (const char* bad : {"crossover=41", "crossover=-1", "crossover=x", "upper=gpu", "upper=2"}) {
    try {
      Config::parse(bad, devs);
      FAIL() << bad;
    } catch (const sinew::Error& e) {
      EXPECT_TRUE(e.argument().find("config item") != std::string::npos || e.argument().find("plan") != std::string::npos)
          << bad << ": " << e.what();
    }
  }
  c.items["upper"] = "2";
  EXPECT_THROW(c.check(devs), sinew::Error);
}

TEST(ConfigParse, KindsDevicesAndPlatformSettings) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1), gpu(2)};
  devs[2].kind_index = 1;
  auto c = Config::parse("cpu=0.6, overlap=3", devs);
  EXPECT_EQ(c.shares, (std::vector<double>{0.6, 0.2, 0.2}));
  EXPECT_EQ(c.overlap, 3u);
  c = Config::parse("gpu:1=0.5,cpu:0=0.1,fission=L2", devs);
  EXPECT_NEAR(c.shares[0], 0.1, 1e-12);
  EXPECT_NEAR(c.shares[1], 0.4, 1e-12);
  EXPECT_NEAR(c.shares[2], 0.5, 1e-12);
  EXPECT_EQ(c.fission, "L2");
  EXPECT_EQ(c.kind_shares(devs).at("gpu"), 0.9);
  c = Config::parse("0=3,1=1,2=0", devs);  // ratios are fine when every device is named: the plan holds their fractions
  EXPECT_EQ(c.shares, (std::vector<double>{0.75, 0.25, 0}));
  for (const char* bad : {"cpu", "cpu=x", "cpu=-1", "gpu:7=0.5", "cpu=0.8,gpu:0=0.5", "overlap=two", "fpga=1"}) {
    try {
      Config::parse(bad, devs);
      FAIL() << bad;
    } catch (const sinew::Error& e) {
      EXPECT_NE(e.argument().find("config item"), std::string::npos) << bad;
    }
  }
}

// Plan items belong to their owners: each registered once (a node kind's, a schedule policy's),
// read, checked and printed through the registry; the schedule names the registered policies.
TEST(ConfigParse, PlanItemsAreRegisteredByTheirOwners) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  std::vector<std::string> names;
  for (const auto& item : plan_items()) names.emplace_back(item.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"crossover", "least_range", "min_chunk", "most_range", "upper", "whole"}));
  EXPECT_EQ(schedule_names(), (std::vector<std::string>{"static", "dynamic", "steal"}));
  EXPECT_EQ(schedule_spellings(), "'static', 'dynamic' or 'steal'");
  EXPECT_THROW(register_plan_item(PlanItem{.name = "crossover", .owner = "a second owner"}), std::logic_error);
  EXPECT_THROW(register_schedule_name("dynamic"), std::logic_error);
  Config c = Config::single(1, 2);
  c.set("crossover", "3").set("upper", "1");
  EXPECT_EQ(crossover_item(c), 3u);
  EXPECT_EQ(c.str(), "{fission=none, overlap=1, shares=[0, 1], crossover=3, upper=1}");
  EXPECT_NO_THROW(c.check(devs));
  expect_error([&] { c.set("crossover", "x"); }, {"", "crossover=x", "crossover takes a level from 0 to 40"});
  expect_error([&] { c.set("crosover", "3"); }, {"", "crosover=3", "no plan item"});
  Config dynamic = Config::parse("cpu=0.5,schedule=dynamic,min_chunk=64", devs);
  EXPECT_EQ(min_chunk_item(dynamic), 64u);
  EXPECT_EQ(dynamic.str(), "{fission=none, overlap=1, shares=[0.5, 0.5], schedule=dynamic, min_chunk=64}");
  // A whole-range leaf's device: a runtime index, checked against the devices.
  Config whole = Config::parse("cpu=0.5,whole=1", devs);
  EXPECT_EQ(whole.str(), "{fission=none, overlap=1, shares=[0.5, 0.5], whole=1}");
  EXPECT_NO_THROW(whole.check(devs));
  expect_error([&] { whole.set("whole", "gpu"); }, {"", "whole=gpu", "a runtime device index"});
  whole.items["whole"] = "2";
  try {
    whole.check(devs);
    ADD_FAILURE() << "whole=2 passed the check with 2 devices";
  } catch (const sinew::Error& e) {
    EXPECT_NE(std::string(e.what()).find("whole device 2 is not one of the 2 devices"), std::string::npos) << e.what();
  }
  Config unknown = Config::single(0, 2);
  unknown.items["granularity"] = "4";  // read from a file written by another version, say
  expect_error([&] { unknown.check(devs, "knowledge-base entry #3"); }, {"", "knowledge-base entry #3", "no plan item"});
  unknown.schedule = "guided";
  unknown.items.clear();
  expect_error([&] { unknown.check(devs); }, {"", "config", "'guided' is no schedule"});
}

// A name that is neither an item nor a device names the item it is nearest to; fractions that do
// not add up to 1 are refused rather than read as ratios (whole numbers are ratios).
TEST(ConfigParse, MisspelledItemsAndFractionsThatDoNotAddUpAreRefused) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  expect_error([&] { Config::parse("ovrlap=2", devs); }, {"", "ovrlap=2", "did you mean 'overlap'?"});
  expect_error([&] { Config::parse("crossovr=2", devs); }, {"", "crossovr=2", "did you mean 'crossover'?"});
  expect_error([&] { Config::parse("shedule=dynamic", devs); }, {"", "shedule=dynamic", "did you mean 'schedule'?"});
  expect_error([&] { Config::parse("banana=1", devs); }, {"", "banana=1", "neither a plan item nor a device"});
  expect_error([&] { Config::parse("cpu:0=0.3,gpu:0=0.3", devs); }, {"", "cpu:0=0.3,gpu:0=0.3", "add up to 0.6"});
  expect_error([&] { Config::parse("0=0.5,1=0.75", devs); }, {"", "0=0.5,1=0.75", "ratios in whole numbers"});
  EXPECT_EQ(Config::parse("0=1,1=3", devs).shares, (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(Config::parse("0=0.25,1=0.75", devs).shares, (std::vector<double>{0.25, 0.75}));
}

// A plan's printed shares (Config::str: 4 significant digits) read back as that plan: a trained
// split of 0.015686/0.984314 prints as 0.01569/0.9843, which adds up to 0.99999.
TEST(ConfigParse, PrintedSharesReadBackAsThePlan) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  const Config back = Config::parse("0=0.01569,1=0.9843,fission=none,overlap=4", devs);
  ASSERT_EQ(back.shares.size(), 2u);
  EXPECT_NEAR(back.shares[0], 0.01569, 1e-5);
  EXPECT_NEAR(back.shares[0] + back.shares[1], 1.0, 1e-12);
  EXPECT_EQ(back.overlap, 4u);
}

// Plans that used to be accepted: a kind's share above 1, an item named twice, overlaps that
// wrapped, kinds that do not add up to 1 — refused, naming the item.
TEST(ConfigParse, SharesOutOfRangeOrNamedTwiceAreRefused) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  for (const char* bad : {"cpu=2", "cpu=0.6,cpu=0.4", "overlap=4294967297", "overlap=0", "overlap=17", "overlap=-1",
                          "cpu=0.3,gpu=0.3", "0=0.5,0=0.5", "gpu=1.5,cpu=0"}) {
    try {
      Config::parse(bad, devs);
      FAIL() << bad << " accepted";
    } catch (const sinew::Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << bad;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(Config::parse("overlap=16", devs).overlap, 16u);
  EXPECT_EQ(Config::parse("cpu=1", devs).shares, (std::vector<double>{1, 0}));
}

// A plan's shares add up to 1: a Config that does not is refused with the shares and their sum.
TEST(ConfigCheck, SharesMustAddUpToOne) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  Config c;
  c.shares = {0.5, 0.2};
  try {
    c.check(devs, "RunOptions::config");
    FAIL();
  } catch (const sinew::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("0.5, 0.2"), std::string::npos) << what;
    EXPECT_NE(what.find("add up to 0.7"), std::string::npos) << what;
    EXPECT_NE(what.find("RunOptions::config"), std::string::npos) << what;
  }
  c.shares = {0.5, 0.5 + 1e-9};  // within the tolerance
  EXPECT_NO_THROW(c.check(devs));
}

TEST(Decompose, StreamableSharesAreCutIntoChunksDealtToTheQueues) {
  std::vector<DeviceInfo> devs{cpu(0), gpu(1)};
  Config c;
  c.shares = {0.5, 0.5};
  c.overlap = 3;
  Streaming s{.streamable = true, .bytes_per_unit = 8, .chunk_bytes = 16u << 20};
  const std::size_t total = 100'000'000;  // 50M units on the GPU: 400 MB, 24 chunks of ~16 MB
  auto dec = decompose(total, 32, c, devs, s);
  expect_cover(dec, total);
  std::vector<std::size_t> gpu;  // units of the GPU's chunks, in order
  for (const auto& p : dec.parts) {
    if (p.device != 1) continue;
    EXPECT_EQ(p.queue, gpu.size() % 3);
    EXPECT_LE(p.units * 8, (16u << 20) + 32 * 8);
    gpu.push_back(p.units);
  }
  // 24 whole chunks, then the tail: a half, a quarter and an eighth of one (to within a granule).
  ASSERT_EQ(gpu.size(), 27u);
  const double whole = static_cast<double>(gpu.front());
  for (std::size_t i = 0; i < 24; ++i) EXPECT_NEAR(static_cast<double>(gpu[i]), whole, 32);
  EXPECT_NEAR(static_cast<double>(gpu[24]), whole / 2, 32);
  EXPECT_NEAR(static_cast<double>(gpu[25]), whole / 4, 32);
  EXPECT_NEAR(static_cast<double>(gpu[26]), whole / 8, 32);
  // Chunk size by the device's data: an eighth of it, between 16 and 64 MB.
  Streaming by_size{.streamable = true, .bytes_per_unit = 8};
  auto chunks_of = [&](std::size_t units) {
    std::size_t n = 0, largest = 0;
    for (const auto& p : decompose(units, 32, Config::single(1, 2), devs, by_size).parts) {
      ++n;
      largest = std::max(largest, p.units * 8);
    }
    return std::pair{n, largest};
  };
  EXPECT_EQ(chunks_of(10'000'000).first, 5u + 3);  // 80 MB: 16 MB chunks
  auto [n800, largest800] = chunks_of(100'000'000);  // 800 MB: 64 MB chunks
  EXPECT_EQ(n800, 12u + 3);
  EXPECT_LE(largest800, (64u << 20) + 32 * 8);
  EXPECT_GT(largest800, 56u << 20);
  auto [n200, largest200] = chunks_of(25'000'000);  // 200 MB: eighths of it
  EXPECT_EQ(n200, 8u + 3);
  EXPECT_GT(largest200, 20u << 20);
  s.streamable = false;  // trees whose partitions meet mid-run keep one partition per queue
  EXPECT_EQ(decompose(total, 32, c, devs, s).parts.size(), 4u);
  s.streamable = true;  // never a chunk smaller than a granule
  auto small = decompose(100, 32, c, devs, s);
  expect_cover(small, 100);
  for (const auto& p : small.parts) EXPECT_GE(p.units, 1u);
}

// A tree that exchanges halo units as it runs keeps a GPU's share in one partition on one queue:
// more queues would only add exchanges and barriers.
TEST(Decompose, TreesExchangingHalosUseOneQueuePerDiscreteDevice) {
  Config c;
  c.shares = {0.25, 0.75};
  c.overlap = 4;
  const std::vector<DeviceInfo> devices{cpu(0), gpu(1)};
  const Decomposition queues = decompose(1000, 1, c, devices);
  EXPECT_EQ(queues.parts.size(), 5u);
  const Decomposition one = decompose(1000, 1, c, devices, Streaming{.one_queue = true});
  ASSERT_EQ(one.parts.size(), 2u);
  EXPECT_EQ(one.parts[1].device, 1u);
  EXPECT_EQ(one.parts[1].queue, 0u);
  EXPECT_EQ(one.parts[1].units, 750u);
  expect_cover(one, 1000);
}

namespace {
// A tree that cannot stream, 100 units of 100 bytes in each partition, whose leaf 'root/t' marked
// whole_range() holds vectors a and b whole (4000 bytes each) on its device, beside that device's
// partitions; a discrete device of `gpu_memory` bytes and a CPU of ample memory.
Streaming whole_leaf_tree() {
  Streaming s;
  s.footprint.partition.push_back({"a", "slice", 100, 0, false});
  s.footprint.whole = {{"root/t", "a", 4000}, {"root/t", "b", 4000}};
  return s;
}
std::vector<DeviceInfo> whole_leaf_devices(std::uint64_t gpu_memory) {
  std::vector<DeviceInfo> devices{gpu(0), cpu(1)};
  devices[0].global_memory = devices[0].max_alloc = gpu_memory;
  devices[1].global_memory = devices[1].max_alloc = std::uint64_t{1} << 30;
  return devices;
}
Config whole_leaf_plan(double gpu_share, const char* whole = nullptr) {
  Config c;
  c.shares = {gpu_share, 1 - gpu_share};
  if (whole) c.set("whole", whole);
  return c;
}
}  // namespace

// The device of a whole_range() leaf holds its vectors whole beside its own partitions: a plan
// whose leaf device cannot is refused naming the leaf, the vector, the device and a device that
// can; one whose leaf runs elsewhere, or whose one partition on the device holds every unit (the
// leaf runs there as any leaf does), fits.
TEST(Decompose, AWholeLeafsDeviceHoldsItsVectorsBesideItsPartitions) {
  const Streaming s = whole_leaf_tree();
  const auto devices = whole_leaf_devices(10000);
  expect_error([&] { decompose(100, 1, whole_leaf_plan(0.5, "0"), devices, s); },
               {"root/t", "vector 'a'", "whole_range() and runs on gpu:0 (gpu) (the plan's whole item)"});
  try {
    decompose(100, 1, whole_leaf_plan(0.6), devices, s);
    ADD_FAILURE() << "the largest share's device ran the whole leaf beyond its memory";
  } catch (const MemoryShortfall& e) {
    EXPECT_EQ(e.device_index, 0u);
    EXPECT_NE(std::string(e.what()).find("the device with the plan's largest share"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(14000 bytes)"), std::string::npos) << e.what();  // 6000 + 8000
    EXPECT_NE(e.context().fix.find("run the leaf on cpu:0"), std::string::npos) << e.context().fix;
    EXPECT_NE(e.context().fix.find("whole=1"), std::string::npos) << e.context().fix;
    EXPECT_NE(e.context().fix.find("SINEW_MEMORY_CAP=gpu:0"), std::string::npos) << e.context().fix;
  }
  EXPECT_NO_THROW(decompose(100, 1, whole_leaf_plan(0.5, "1"), devices, s));
  EXPECT_NO_THROW(decompose(100, 1, whole_leaf_plan(0.2), devices, s));  // 2000 + 8000 bytes: fits
  EXPECT_NO_THROW(decompose(100, 1, whole_leaf_plan(1.0), devices, s));  // one partition of every unit
  // No device with room: the fix names a smaller share instead.
  auto small = devices;
  small[1].global_memory = small[1].max_alloc = 9000;
  expect_error([&] { decompose(100, 1, whole_leaf_plan(0.5), small, s); },
               {"root/t", "vector 'a'", "more than its memory"});
}

// fit_memory plans around a leaf device without room where the plan names none: the leaf moves
// to the device of the largest share that holds it (the plan's whole item set); a plan that names
// its whole device keeps it and stays refused.
TEST(Decompose, FitMemoryMovesAWholeLeafToADeviceWithRoom) {
  const Streaming s = whole_leaf_tree();
  const auto devices = whole_leaf_devices(10000);
  const Config fitted = fit_memory(whole_leaf_plan(0.6), 100, 1, devices, s);
  EXPECT_EQ(fitted.item("whole"), std::optional<std::string>("1")) << fitted.str();
  EXPECT_EQ(fitted.shares, whole_leaf_plan(0.6).shares) << fitted.str();
  EXPECT_EQ(whole_leaf_device(fitted), 1u);
  EXPECT_NO_THROW(decompose(100, 1, fitted, devices, s));
  const Config fits = whole_leaf_plan(0.2);
  EXPECT_EQ(fit_memory(fits, 100, 1, devices, s).str(), fits.str());
  const Config named = whole_leaf_plan(0.5, "0");
  EXPECT_ANY_THROW(decompose(100, 1, fit_memory(named, 100, 1, devices, s), devices, s));
}
