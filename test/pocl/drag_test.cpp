// Drag-through (RuntimeOptions::memory_cap, $SINEW_MEMORY_CAP): a device whose share of a
// streamable tree exceeds its memory streams it through one chunk's buffers per queue; a tree
// that cannot stream gets an error naming the vector and the sizes before any device work, and
// the planner moves what does not fit to devices with room. Runs on 1, 2 and 3 PoCL devices, with
// the capped (last) device zero-copy and driven like a GPU (SINEW_DISCRETE). Every run is checked
// against the plain C++ reference of test/pocl/trees.hpp or of the sample, and the executor's own
// count of the bytes it allocated on the capped device (Report::device_bytes) against the cap.
#include "common/descriptors.hpp"
#include "decompose/decompose.hpp"
#include "common/sample.hpp"
#include "pocl/device_memory_count.hpp"
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <unistd.h>

using namespace sinew;
using namespace sinew::testing;

namespace {

constexpr std::size_t kUnits = 1 << 16;           // 256 KB per int vector, 1 MB for the 4-wide rows
constexpr std::uint64_t kCap = 48 << 10;          // far below one chunk's natural size (16-64 MB)

// The cases of trees.hpp whose partitions meet as they run: a loop predicate, a scan, replicas
// re-synchronised, halos exchanged. The others stream.
const std::set<std::string> kJoined = {"loop_until_map_reduce", "replicated_sync_loop", "scan_between_kernels",
                                       "halo_pipeline_zero", "halo_loop_constant"};

// The cases the split test also plans (trains): a pipeline, a halo read, a loop and an
// exchanging pipeline.
const std::set<std::string> kPlanned = {"pipeline_channel", "halo_clamp", "loop_until_map_reduce",
                                        "halo_pipeline_zero"};

std::string last_id() { return std::to_string(device_count() - 1); }

// A runtime whose last device is capped (and, `discrete`, driven like a GPU); one per setting
// for the whole binary, so programs are built once per context.
std::map<std::tuple<bool, std::uint64_t, std::optional<double>>, std::unique_ptr<Runtime>>& made() {
  static std::map<std::tuple<bool, std::uint64_t, std::optional<double>>, std::unique_ptr<Runtime>> runtimes;
  return runtimes;
}
// The runtimes go when the tests end, not at exit: their planners write what they buffered, and
// clFFT tears down, while the library's own statics still live.
struct DropRuntimes : ::testing::Environment {
  void TearDown() override { made().clear(); }
};
[[maybe_unused]] ::testing::Environment* const kDrop = ::testing::AddGlobalTestEnvironment(new DropRuntimes);

Runtime& capped(bool discrete, std::uint64_t cap = kCap, std::optional<double> chunk_mb = std::nullopt) {
  auto& r = made()[{discrete, cap, chunk_mb}];
  if (!r)
    r = std::make_unique<Runtime>(RuntimeOptions{.discrete = discrete ? last_id() : std::string(),
                                                 .memory_cap = last_id() + "=" + std::to_string(cap),
                                                 .chunk_mb = chunk_mb,
                                                 .kb_path = ":memory:",
                                                 .training = {.quality = 1, .max_executions = 12},
                                                 .quiet = true});
  return *r;
}

std::uint64_t bound_bytes(const std::vector<Binding>& bindings) {
  std::uint64_t sum = 0;
  for (const auto& b : bindings)
    if (b.vector) sum += b.elements * b.type.size;
  return sum;
}

class Drag : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

// Everything on the capped device, by a given plan: a streamable tree is dragged through in
// chunks and gives the reference; any other is refused before device work, the message naming the
// vector, its size and the device's memory.
TEST_P(Drag, WholeTreeOnTheCappedDevice) {
  const auto& [name, discrete] = GetParam();
  Runtime& rt = capped(discrete);
  const std::size_t dev = rt.devices().size() - 1;
  ASSERT_EQ(rt.devices()[dev].memory(), kCap);
  Holder h;
  Case c = make_case(name, kUnits, h);
  ASSERT_GT(bound_bytes(c.bindings), 4 * kCap) << "the share must exceed the device's memory";
  const auto before = h;
  // A zero-copy device holds bound vectors in the host memory: a tree that cannot stream fits
  // there unless its intermediates, halo buffers or replicas do not.
  if (kJoined.count(name)) {
    try {
      c.report = rt.execute(c.tree, c.bindings, RunOptions{.device = dev});
      EXPECT_FALSE(discrete) << name << " ran on a device too small for it";
      EXPECT_EQ(c.check(), "") << name;
      EXPECT_LE(c.report.device_bytes.at(dev), kCap) << name;
      return;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("vector '"), std::string::npos) << what;
      EXPECT_NE(what.find(" bytes)"), std::string::npos) << what;  // the sizes
      EXPECT_NE(what.find("memory cap of 48.0 KB (" + std::to_string(kCap) + " bytes)"), std::string::npos) << what;
      EXPECT_NE(what.find("cannot be dragged through"), std::string::npos) << what;
      EXPECT_NE(what.find("SINEW_MEMORY_CAP"), std::string::npos) << what;  // the fix
    }
    EXPECT_EQ(h.a, before.a) << "no device work before the error";
    EXPECT_EQ(h.f, before.f) << "no device work before the error";
    return;
  }
  c.report = rt.execute(c.tree, c.bindings, RunOptions{.device = dev});
  EXPECT_EQ(c.check(), "") << name;
  ASSERT_EQ(c.report.device_bytes.size(), rt.devices().size());
  EXPECT_LE(c.report.device_bytes[dev], kCap) << name << "\n" << c.report.decomposition;
  if (discrete) {
    EXPECT_GT(c.report.device_bytes[dev], 0u) << name;
    EXPECT_GE(c.report.partitions.size(), 4u) << "dragged through in chunks\n" << c.report.decomposition;
  }
}

INSTANTIATE_TEST_SUITE_P(Trees, Drag, ::testing::Combine(::testing::ValuesIn(case_names()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_discrete" : "_zero_copy");
                         });

// The same trees split over every device by an even plan; the planner's runs (from an in-memory
// knowledge base) move what a tree that cannot stream does not fit to the devices with room.
TEST(DragSplit, EvenAndPlannedSplitsMatchTheReferences) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  for (bool discrete : {false, true}) {
    Runtime& rt = capped(discrete);
    const std::size_t dev = rt.devices().size() - 1;
    for (const auto& name : case_names()) {
      Holder h;
      Case c = make_case(name, kUnits, h);
      Config even;
      even.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
      if (kJoined.count(name)) {
        try {  // refused, but on a zero-copy device where the host memory holds what it needs
          c.report = rt.execute(c.tree, c.bindings, RunOptions{.config = even});
          EXPECT_FALSE(discrete) << name << " ran on a device too small for it";
          EXPECT_EQ(c.check(), "") << name;
          EXPECT_LE(c.report.device_bytes.at(dev), kCap) << name;
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("cannot be dragged through"), std::string::npos) << e.what();
        }
      } else {
        c.report = rt.execute(c.tree, c.bindings, RunOptions{.config = even});
        EXPECT_EQ(c.check(), "") << name << (discrete ? " discrete" : " zero copy");
        EXPECT_LE(c.report.device_bytes.at(dev), kCap) << name;
      }
      if (!kPlanned.count(name)) continue;
      Holder h2;
      Case p = make_case(name, kUnits, h2);
      try {
        p.report = rt.execute(p.tree, p.bindings, RunOptions{.balance = false});
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " planned" << (discrete ? " discrete: " : " zero copy: ") << e.what();
        continue;
      }
      EXPECT_EQ(p.check(), "") << name << " planned" << (discrete ? " discrete" : " zero copy");
      EXPECT_LE(p.report.device_bytes.at(dev), kCap) << name << " planned: " << p.report.config.str() << "\n"
                                                     << p.report.decomposition;
    }
  }
}

// A cap that forces many chunks, with SINEW_CHUNK_MB asking for chunks far larger than it: the
// memory wins, and the chunks stay within it however many queues run at once.
TEST(DragChunks, ManyChunksOnEveryOverlapLevel) {
  for (std::uint64_t cap : {std::uint64_t{16} << 10, std::uint64_t{200} << 10}) {
    Runtime& rt = capped(true, cap, 64.0);
    const std::size_t dev = rt.devices().size() - 1;
    for (unsigned overlap : {1u, 2u, 4u}) {
      Holder h;
      Case c = make_case("pipeline_channel", kUnits, h);
      Config cfg = Config::single(dev, rt.devices().size());
      cfg.overlap = overlap;
      c.report = rt.execute(c.tree, c.bindings, RunOptions{.config = cfg});
      EXPECT_EQ(c.check(), "") << "cap " << cap << ", overlap " << overlap;
      EXPECT_LE(c.report.device_bytes.at(dev), cap) << c.report.decomposition;
      // Three vectors of 4 bytes a unit: a MB of data through 16 KB holds at most ~1300 units.
      EXPECT_GE(c.report.partitions.size(), 3 * kUnits * 4 / cap) << c.report.decomposition;
    }
  }
}

// Not even one granule per queue fits: an error naming the device, not a run past its memory.
TEST(DragChunks, ACapBelowOneGranuleIsAnError) {
  Runtime& rt = capped(true, 32);  // a row of the halo buffer and the output is 64 bytes
  const std::size_t dev = rt.devices().size() - 1;
  Holder h;
  Case c = make_case("halo_clamp", kUnits, h);
  try {
    rt.execute(c.tree, c.bindings, RunOptions{.device = dev});
    FAIL() << "ran with 32 bytes of memory";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot drag its share"), std::string::npos) << what;
    EXPECT_NE(what.find("vector 'img'"), std::string::npos) << what;
  }
}

// A tree no split of the devices' memory holds: the planned run fails before training, and the
// knowledge base keeps nothing of it.
TEST(DragPlanner, NothingIsStoredWhenNoDeviceHoldsTheTree) {
  const auto path = std::filesystem::temp_directory_path() / ("sinew_drag_" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  {
    Runtime rt(RuntimeOptions{.memory_cap = "all=" + std::to_string(kCap), .kb_path = path.string(), .quiet = true});
    Holder h;
    Case c = make_case("loop_until_map_reduce", kUnits, h);
    const auto before = h.f;
    try {
      rt.execute(c.tree, c.bindings);
      FAIL() << "a loop larger than every device ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be dragged through"), std::string::npos) << e.what();
    }
    EXPECT_EQ(h.f, before);
  }
  auto kb = KnowledgeBase::open(path.string());
  EXPECT_TRUE(kb->trees().empty()) << kb->export_json();
  std::filesystem::remove(path);
}

// A cap within reach of the planner: a loop (which cannot stream) planned by training moves the
// share the capped device cannot hold to the others.
TEST(DragPlanner, TrainingMovesTheExcessOfALoop) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  // The loop's vectors are 256 KB each: the capped device can hold less than a tenth of them.
  Runtime& rt = capped(true);
  const std::size_t dev = rt.devices().size() - 1;
  Holder h;
  Case c = make_case("loop_until_map_reduce", kUnits, h);
  c.report = rt.execute(c.tree, c.bindings, RunOptions{.train = true, .balance = false});
  EXPECT_EQ(c.check(), "");
  EXPECT_LE(c.report.device_bytes.at(dev), kCap) << c.report.config.str();
  EXPECT_LE(c.report.config.shares.at(dev), 0.1) << c.report.config.str();
}

// A planned run under a cap, from a knowledge base of its own at `path` with every training
// line caught: the report, the lines.
struct PlannedRun {
  Report report;
  std::vector<std::string> lines;
};
PlannedRun planned_under_cap(std::uint64_t cap, const std::filesystem::path& path,
                             const std::function<Report(Runtime&)>& run) {
  PlannedRun out;
  std::mutex mutex;
  Runtime rt(RuntimeOptions{.discrete = last_id(), .memory_cap = last_id() + "=" + std::to_string(cap),
                            .kb_path = path.string(), .training = {.quality = 1, .max_executions = 12},
                            .quiet = false, .log = [&](LogLevel, const std::string& line) {
                              std::lock_guard lock(mutex);
                              out.lines.push_back(line);
                            }});
  out.report = run(rt);
  return out;
}

// The knowledge base at `path` keeps the trained plan `r` ran by, and every training line names a
// plan as it ran (as the knowledge base stored its runs), the trained one as the run used it.
void expect_lines_name_what_ran(const std::string& name, const PlannedRun& planned, const std::filesystem::path& path) {
  auto shares_text = [](const std::vector<double>& shares) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(3) << "[";
    for (std::size_t i = 0; i < shares.size(); ++i) o << (i ? " " : "") << shares[i];
    return o.str() + "]";
  };
  auto kb = KnowledgeBase::open(path.string());
  ASSERT_EQ(kb->trees().size(), 1u) << name;
  const auto entries = kb->entries_for_tree(kb->trees()[0].tree);
  ASSERT_FALSE(entries.empty()) << name << ": runs stored, no plan\n" << kb->export_json();
  EXPECT_EQ(entries[0].config.str(), planned.report.config.str()) << name;
  std::set<std::string> stored;
  for (const auto& run : kb->runs_for_tree(kb->trees()[0].tree)) stored.insert(shares_text(run.config.shares));
  bool trained_line = false;
  for (const auto& line : planned.lines) {
    if (line.find("trained '") != std::string::npos) {
      trained_line = true;
      EXPECT_NE(line.find(planned.report.config.str()), std::string::npos) << name << ": " << line;
    }
    const auto shares = line.find(" shares [");
    if (line.find("executions] ") == std::string::npos || shares == std::string::npos) continue;
    const std::string text = line.substr(shares + 8, line.find(']', shares) - shares - 7);
    EXPECT_TRUE(stored.count(text)) << name << ": the line names a plan no run used: " << line;
  }
  EXPECT_TRUE(trained_line) << name;
}

std::filesystem::path kb_file(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("sinew_drag_" + name + "_" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  return path;
}

// Planned runs under a cap on the discrete device of trees whose runners take more than the
// footprint the plan was fitted by (a scan's levels, a divide-and-conquer node's buffers): the
// training plans around the cap (the capped device runs without a share it cannot hold) and the
// knowledge base keeps the trained plan.
TEST(DragPlanner, TrainingPlansAroundWhatTheRunnersTake) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  for (const char* name : {"prefix_sum", "mergesort"}) {
    auto s = samples::find(name);
    ASSERT_TRUE(s);
    s->prepare(s->sizes().small);
    const std::uint64_t cap = bound_bytes(s->bindings()) / 8;
    const auto path = kb_file(name);
    PlannedRun planned;
    try {
      planned = planned_under_cap(cap, path, [&](Runtime& rt) { return s->run(rt, RunOptions{.balance = false}); });
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << " planned under a cap of " << cap << " bytes: " << e.what();
      continue;
    }
    const std::size_t dev = device_count() - 1;
    EXPECT_TRUE(s->check().ok) << name << ": " << s->check().message;
    EXPECT_LE(planned.report.device_bytes.at(dev), cap) << name << ": " << planned.report.config.str();
    EXPECT_EQ(planned.report.provenance, Provenance::trained) << name;
    expect_lines_name_what_ran(name, planned, path);
    std::filesystem::remove(path);
  }
}

// Training a loop whose even split the capped device cannot hold: each point is the plan as it
// ran (its excess moved), in the progress lines as in the knowledge base.
TEST(DragPlanner, TrainingLinesNameThePlansAsTheyRan) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  Holder h;
  Case c = make_case("loop_until_map_reduce", kUnits, h);
  const auto path = kb_file("loop");
  const PlannedRun planned = planned_under_cap(kCap, path, [&](Runtime& rt) {
    return rt.execute(c.tree, c.bindings, RunOptions{.train = true, .balance = false});
  });
  c.report = planned.report;
  EXPECT_EQ(c.check(), "");
  expect_lines_name_what_ran("loop_until_map_reduce", planned, path);
  std::filesystem::remove(path);
}

// A run pinned to the capped device (RunOptions::device) runs there alone or is refused with the
// reason, whatever the cap: N-Body (replicas refreshed each step: it cannot stream) at caps from
// below its footprint to well above it, where the screening of the device's overlap levels meets
// levels it cannot hold.
TEST(DragPinned, APinnedRunStaysOnItsDeviceOrIsRefused) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  auto nbody = samples::find("nbody");
  ASSERT_TRUE(nbody);
  nbody->prepare(nbody->sizes().small);
  const std::uint64_t bound = bound_bytes(nbody->bindings());
  std::size_t ran = 0, refused = 0;
  for (std::uint64_t cap = bound; cap <= 5 * bound; cap += bound / 8) {
    Runtime rt(RuntimeOptions{.discrete = last_id(), .memory_cap = last_id() + "=" + std::to_string(cap),
                              .kb_path = ":memory:", .quiet = true});
    const std::size_t dev = rt.devices().size() - 1;
    try {
      const Report r = nbody->run(rt, RunOptions{.device = dev});
      ++ran;
      EXPECT_TRUE(nbody->check().ok) << "cap " << cap;
      for (const auto& p : r.partitions) EXPECT_EQ(p.device, dev) << "cap " << cap << ": " << r.config.str();
      EXPECT_EQ(r.config.shares.at(dev), 1.0) << "cap " << cap << ": " << r.config.str();
      EXPECT_LE(r.device_bytes.at(dev), cap);
    } catch (const Error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("memory cap"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(rt.devices()[dev].id()), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(ran, 0u);
  EXPECT_GT(refused, 0u);
}

// The samples that stream, at their small size, capped to a quarter of their data on the last
// device and run there alone: dragged through, equal to their references.
TEST(DragSamples, EverySampleThatStreams) {
  std::set<std::string> streamed;
  for (const bool discrete : {false, true})
    for (const auto& name : samples::names()) {
      auto s = samples::find(name);
      ASSERT_TRUE(s);
      s->prepare(s->sizes().small);
      const std::uint64_t cap = std::max<std::uint64_t>(bound_bytes(s->bindings()) / 4, 1);
      // A runtime of its own, gone before the test ends (clFFT's plans must not outlive clFFT's
      // own teardown at exit, as the static runtimes of capped() would).
      Runtime rt(RuntimeOptions{.discrete = discrete ? last_id() : std::string(),
                                .memory_cap = last_id() + "=" + std::to_string(cap), .kb_path = ":memory:", .quiet = true});
      const std::size_t dev = rt.devices().size() - 1;
      try {
        const Report r = s->run(rt, RunOptions{.device = dev});
        const auto c = s->check();
        EXPECT_TRUE(c.ok) << name << (discrete ? " discrete: " : " zero copy: ") << c.message;
        EXPECT_LE(r.device_bytes.at(dev), cap) << name << "\n" << r.decomposition;
        streamed.insert(name);
      } catch (const Error& e) {
        // Only a tree that cannot stream may refuse, and it says why.
        EXPECT_NE(std::string(e.what()).find("memory"), std::string::npos) << name << ": " << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << (discrete ? " discrete: " : " zero copy: ") << e.what();
      }
    }
  for (const char* must : {"saxpy", "filter_pipeline", "segmentation", "mandelbrot", "fft"})
    EXPECT_TRUE(streamed.count(must)) << must << " did not stream";
}

// The cap bounds what the process holds on the device, not only what one run holds: runs at other
// overlap levels and chunk sizes (whose buffers the pool keeps for the next request) and a library's
// scratch (clFFT's for long transforms) together stay within it, counted where OpenCL allocates.
TEST(DragProcess, TheCapBoundsEveryBufferTheProcessHolds) {
  // What one runtime whose last device is capped to `cap` held there at most, over `runs`.
  auto most_held = [](std::uint64_t cap, const std::function<void(Runtime&, std::size_t)>& runs) {
    start_device_memory_window();
    Runtime rt(RuntimeOptions{.discrete = last_id(), .memory_cap = last_id() + "=" + std::to_string(cap),
                              .kb_path = ":memory:", .quiet = true});
    const std::size_t dev = rt.devices().size() - 1;
    runs(rt, dev);
    EXPECT_GT(counted_buffers(), 0u) << "clCreateBuffer is not counted";
    const auto held = device_memory();
    EXPECT_EQ(held.size(), rt.devices().size());
    return held.size() > dev ? held[dev].most_since_start() : 0;
  };
  const std::uint64_t cap = 200 << 10;
  const std::uint64_t streamed = most_held(cap, [&](Runtime& rt, std::size_t dev) {
    for (const std::size_t units : {kUnits, kUnits / 3})  // other sizes: other chunks
      for (unsigned overlap : {1u, 2u, 3u, 4u}) {
        Holder h;
        Case c = make_case("pipeline_channel", units, h);
        Config cfg = Config::single(dev, rt.devices().size());
        cfg.overlap = overlap;
        c.report = rt.execute(c.tree, c.bindings, RunOptions{.config = cfg});
        EXPECT_EQ(c.check(), "") << "overlap " << overlap;
        EXPECT_LE(c.report.device_bytes.at(dev), cap);
      }
  });
  EXPECT_GT(streamed, 0u);
  EXPECT_LE(streamed, cap) << "the process held more than the cap over runs at four overlap levels";
  auto fft = samples::find("fft");
  ASSERT_TRUE(fft);
  fft->prepare(fft->sizes().small);
  // Half its data: one transform's slice and clFFT's scratch for it.
  const std::uint64_t fft_cap = bound_bytes(fft->bindings()) / 2;
  const std::uint64_t transformed = most_held(fft_cap, [&](Runtime& rt, std::size_t dev) {
    const Report r = fft->run(rt, RunOptions{.device = dev});
    EXPECT_TRUE(fft->check().ok) << fft->check().message;
    EXPECT_LE(r.device_bytes.at(dev), fft_cap) << r.decomposition;
  });
  EXPECT_GT(transformed, 0u);
  // Beside the scratch, clFFT keeps a constant buffer of 128 bytes per plan (not the ledger's).
  EXPECT_LE(transformed, fft_cap + 1024) << "clFFT's scratch is outside the cap";
}

// A given dynamic plan (RuntimeOptions::config, RunOptions::plan) whose chunks the capped device
// might not hold runs as given or not at all: refused before any device work, naming where it was
// given and the fix (schedule=static, under which the share is dragged through). The knowledge
// base's dynamic plans run static instead (DragDecompose.ATreeThatCannotStreamIsRefusedOrMoved).
TEST(DragGiven, AGivenDynamicPlanTheDeviceCannotHoldIsRefused) {
  Runtime rt(RuntimeOptions{.discrete = last_id(), .memory_cap = last_id() + "=" + std::to_string(kCap),
                            .config = "schedule=dynamic", .kb_path = ":memory:", .quiet = true});
  for (const bool by_runtime : {true, false}) {
    Holder h;
    Case c = make_case("pipeline_channel", kUnits, h);
    const auto before = h;
    try {
      rt.execute(c.tree, c.bindings, by_runtime ? RunOptions{} : RunOptions{.plan = "schedule=dynamic"});
      FAIL() << "a dynamic plan ran on a device that might not hold its chunks";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(by_runtime ? "$SINEW_CONFIG" : "RunOptions::plan"), std::string::npos) << what;
      EXPECT_NE(what.find("use schedule=static"), std::string::npos) << what;
      EXPECT_NE(what.find(rt.devices().back().id()), std::string::npos) << what;
    }
    EXPECT_EQ(h.a, before.a) << "no device work before the error";
  }
}

// The cap's syntax: read like the other device selections, a bad one named.
TEST(DragOptions, TheCapIsReadAndChecked) {
  auto o = RuntimeOptions::from_variables({{"SINEW_MEMORY_CAP", "gpu:0=256MB, cpu:1=64KB"}});
  EXPECT_EQ(o.memory_cap, "gpu:0=256MB, cpu:1=64KB");
  const auto caps = parse::memory_caps(*o.memory_cap, "x");
  ASSERT_EQ(caps.size(), 2u);
  EXPECT_EQ(caps[0].first, "gpu:0");
  EXPECT_EQ(caps[0].second, 256ull << 20);
  EXPECT_EQ(caps[1].second, 64ull << 10);
  EXPECT_EQ(parse::bytes("3GB", "x"), 3ull << 30);
  EXPECT_EQ(parse::bytes("4096", "x"), 4096u);
  for (const char* bad : {"cpu:1", "cpu:1=", "=5MB", "cpu:1=5XB", "cpu:1=-1", "cpu:1=0"})
    EXPECT_THROW(RuntimeOptions::from_variables({{"SINEW_MEMORY_CAP", bad}}), Error) << bad;
  try {
    Runtime rt(RuntimeOptions{.memory_cap = "gpu:7=1MB"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("memory_cap"), std::string::npos) << e.what();
  }
  Runtime rt(RuntimeOptions{.memory_cap = "0=1MB"});
  EXPECT_EQ(rt.devices()[0].memory(), 1u << 20);
  EXPECT_EQ(rt.devices()[0].memory_cap, 1u << 20);
}

}  // namespace

// ----- the decomposition alone (no device work) -----------------------------------------------

namespace {

DeviceInfo fake(std::size_t index, bool discrete, std::uint64_t memory) {
  DeviceInfo d;
  d.index = index;
  d.kind = discrete ? DeviceKind::gpu : DeviceKind::cpu;
  d.name = discrete ? "gpu" : "cpu";
  d.discrete = discrete;
  d.host_unified_memory = !discrete;
  d.global_memory = 1ull << 34;
  d.max_alloc = 1ull << 32;
  d.memory_cap = memory;
  if (discrete) d.overlap_levels = {1, 2, 3, 4};
  else d.fission_configs.push_back({"none", {}, "", {}});
  return d;
}

// saxpy's footprint: x in, y inout, 4 bytes each per unit; `joined`: as if it could not stream.
detail::Streaming saxpy_like(bool streamable) {
  detail::Streaming s{.streamable = streamable, .bytes_per_unit = 8};
  s.footprint.partition = {{"x", "slice", 4, 0, true}, {"y", "slice", 4, 0, true}};
  s.footprint.context = {{"w", "replica", 1000, 0, true}};
  if (!streamable) s.joined = {"loop", "loop", "its partitions meet", "fix"};
  return s;
}

}  // namespace

TEST(DragDecompose, ChunksFitTheMemoryOnEveryQueue) {
  const std::vector<DeviceInfo> devs{fake(0, false, 0), fake(1, true, 64 << 10)};
  for (unsigned overlap : {1u, 2u, 3u})
    for (std::size_t granule : {1u, 32u}) {
      Config c;
      c.shares = {0.25, 0.75};
      c.overlap = overlap;
      const auto dec = detail::decompose(1 << 20, granule, c, devs, saxpy_like(true));
      std::size_t largest = 0, next = 0;
      for (const auto& p : dec.parts) {
        EXPECT_EQ(p.first, next);
        next += p.units;
        if (p.device == 1) largest = std::max(largest, p.units);
      }
      EXPECT_EQ(next, std::size_t{1} << 20);
      // One partition's 8 bytes a unit on each queue, beside the replica (1000 bytes).
      EXPECT_LE(largest * 8 * std::min<std::size_t>(overlap, dec.parts.size()) + 1000, 64u << 10)
          << "overlap " << overlap << ", granule " << granule;
      EXPECT_GT(largest, 0u);
    }
}

TEST(DragDecompose, ATreeThatCannotStreamIsRefusedOrMoved) {
  const std::vector<DeviceInfo> devs{fake(0, false, 0), fake(1, true, 64 << 10)};
  Config c;
  c.shares = {0.5, 0.5};
  try {
    detail::decompose(1 << 16, 8, c, devs, saxpy_like(false));
    FAIL() << "256 KB of slices on a 64 KB device";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("vector 'x'"), std::string::npos) << what;
    EXPECT_NE(what.find("257.0 KB (263144 bytes)"), std::string::npos) << what;  // 32768 units x 8 + 1000
    EXPECT_NE(what.find("memory cap of 64.0 KB (65536 bytes)"), std::string::npos) << what;
    EXPECT_NE(what.find("its partitions meet"), std::string::npos) << what;
  }
  const Config fitted = detail::fit_memory(c, 1 << 16, 8, devs, saxpy_like(false));
  EXPECT_NEAR(fitted.shares[0] + fitted.shares[1], 1.0, 1e-9);
  EXPECT_LT(fitted.shares[1], 64.0 * 1024 / 8 / 65536);
  EXPECT_GT(fitted.shares[1], 0.1);
  EXPECT_NO_THROW(detail::decompose(1 << 16, 8, fitted, devs, saxpy_like(false)));
  // A streamable tree's plan stays.
  EXPECT_EQ(detail::fit_memory(c, 1 << 16, 8, devs, saxpy_like(true)), c);
  // Nothing holds it: the error, as decompose() gives it.
  const std::vector<DeviceInfo> small{fake(0, true, 4 << 10), fake(1, true, 64 << 10)};
  EXPECT_THROW(detail::fit_memory(c, 1 << 16, 8, small, saxpy_like(false)), Error);
  // A dynamic plan a device might not hold runs static.
  Config dynamic = c;
  dynamic.schedule = "dynamic";
  EXPECT_EQ(detail::fit_memory(dynamic, 1 << 16, 8, devs, saxpy_like(true)).schedule, "static");
  EXPECT_THROW(detail::decompose(1 << 16, 8, dynamic, devs, saxpy_like(true)), Error);
}
