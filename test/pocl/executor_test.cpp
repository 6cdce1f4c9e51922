// The executor below the runtime: execute() over a decomposition made by hand, its transfers
// (staged and direct) byte for byte, and what its node runners check before data moves — on a
// PoCL device driven as a discrete one (explicit transfers) and as itself (zero copy).
#include "decompose/decompose.hpp"
#include "exec/executor.hpp"
#include "exec/host_copy.hpp"
#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/device.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <thread>
#include <utility>

using namespace sinew;
using namespace sinew::detail;

namespace {

// What a Runtime lends the executor, made by hand over the first PoCL device.
struct Machine {
  ProgramCache cache{""};
  std::vector<std::unique_ptr<Device>> devices = discover_devices(cache);
  QueuePool queues;
  BufferPool buffers;
  FftPlans fft;
  ThreadPool threads;
  Environment env;

  explicit Machine(bool discrete) {
    Device& d = *devices.at(0);
    if (discrete) {  // as RuntimeOptions::discrete does
      d.mutable_info().discrete = true;
      d.mutable_info().fission_configs.clear();
      d.mutable_info().overlap_levels = {1, 2, 3, 4};
    }
    env.devices = {&d};
    env.infos = {d.info()};
    env.infos[0].index = 0;
    env.programs = &cache;
    env.queues = &queues;
    env.buffers = &buffers;
    env.fft = &fft;
    env.threads = &threads;
    env.hardware_threads = std::max(1u, std::thread::hardware_concurrency());  // as a Runtime reads it
  }
};

Config overlap(unsigned n) {
  Config c = Config::single(0, 1);
  c.overlap = n;
  return c;
}

}  // namespace

class Executor : public ::testing::TestWithParam<bool> {};

TEST_P(Executor, RunsATreeOverADecompositionWithoutARuntime) {
  Machine m(GetParam());
  auto a = sinew::vector<cl_int>().name("a"), b = sinew::vector<cl_int>().name("b");
  auto tree = pipeline(kernel_source(sinew::testing::kTestKernels, "add_scalar", "t.cl").args(inout(a), scalar(cl_int(3))),
                       kernel_source(sinew::testing::kTestKernels, "mul2", "t.cl").args(in(a), out(b)));
  std::vector<cl_int> ha(1001), hb(1001, 0);
  std::iota(ha.begin(), ha.end(), -50);
  const std::vector<Binding> bindings = {{a, ha}, {b, hb}};
  const Analysis an = analyze(*tree.impl(), bindings);
  const Decomposition dec = decompose(an.units, granularity(*tree.impl(), an, m.env.infos), overlap(3), m.env.infos);
  m.env.copy_threads = 3;
  const Report r = execute(m.env, *tree.impl(), an, bindings, dec, {.profile = true});
  // A discrete device's staged copies on the threads asked for; a zero-copy device stages nothing.
  EXPECT_EQ(r.copy_threads, GetParam() ? 3u : 1u);
  EXPECT_EQ(r.str().find("3 threads each") != std::string::npos, GetParam());
  for (std::size_t i = 0; i < ha.size(); ++i) {
    ASSERT_EQ(ha[i], static_cast<cl_int>(i) - 50 + 3) << i;
    ASSERT_EQ(hb[i], 2 * ha[i]) << i;
  }
  ASSERT_EQ(r.partitions.size(), dec.parts.size());
  std::size_t units = 0;
  for (std::size_t p = 0; p < dec.parts.size(); ++p) {
    EXPECT_EQ(r.partitions[p].first, dec.parts[p].first);
    EXPECT_EQ(r.partitions[p].units, dec.parts[p].units);
    units += r.partitions[p].units;
  }
  EXPECT_EQ(units, 1001u);
  EXPECT_TRUE(r.profiled);
  std::set<std::string> timed;
  for (const auto& k : r.kernels) timed.insert(k.node);
  EXPECT_EQ(timed.size(), 2u);  // both leaves, by their paths
  EXPECT_GT(r.device_ms.at(0), 0);
}

INSTANTIATE_TEST_SUITE_P(DiscreteAndZeroCopy, Executor, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });

// Host -> device -> host through the pinned staging ring (chunks of Staging::kChunk, the last one
// short), its copies on one thread and split over helpers (RuntimeOptions::copy_threads; 0: by the
// host's threads, the run having no CPU work), and straight to the driver: every byte arrives.
TEST(ExecutorTransfers, StagedAndDirectMoveEveryByte) {
  for (const auto [mode, threads] : {std::pair{TransferMode::staged, 1u}, std::pair{TransferMode::staged, 3u},
                                     std::pair{TransferMode::staged, 0u}, std::pair{TransferMode::direct, 0u}}) {
    Machine m(/*discrete=*/true);
    m.env.transfer = mode;
    m.env.copy_threads = threads;
    const std::size_t n = (2 * Staging::kChunk + Staging::kChunk / 2) / sizeof(cl_int) + 13;
    auto v = sinew::vector<cl_int>().name("v");
    auto tree = kernel_source(sinew::testing::kTestKernels, "add_scalar", "t.cl").args(inout(v), scalar(cl_int(0)));
    std::vector<cl_int> host(n), back(n, -1);
    std::iota(host.begin(), host.end(), 7);
    const std::vector<Binding> bindings = {{v, host}};
    const Analysis an = analyze(*tree.impl(), bindings);
    const Decomposition dec = decompose(an.units, 1, overlap(1), m.env.infos);
    RunState run(m.env, *tree.impl(), an, bindings, dec, false);
    prepare(run, nullptr);
    PartState& ps = run.workers.parts.at(0);
    const cl::Buffer& slice = ps.slices.at(v.state());
    const std::size_t bytes = n * sizeof(cl_int);
    EXPECT_EQ(staged(run, host.data(), bytes), mode == TransferMode::staged);
    EXPECT_FALSE(run.workers.cpu_work);  // a discrete device alone: the host's threads are the copies'
    const unsigned ways = threads ? threads : copy_ways(0, false, 1, m.env.hardware_threads);
    EXPECT_EQ(ps.worker->slot->staging.copy.ways(), ways);
    EXPECT_EQ(ps.worker->slot->results.copy.ways(), ways);
    to_device(run, ps, slice, 0, host.data(), bytes, nullptr);
    to_host(run, ps, slice, 0, back.data(), bytes, nullptr);
    ps.worker->queue().finish();
    EXPECT_EQ(back, host) << "transfer mode " << to_string(mode) << ", copy threads " << threads;
  }
}

// Downloads begun and finished later (the dynamic schedule's chunks): three of them at once, the
// first taking most of the results ring, the second the rest of it and reading its other pieces
// into the slots the first frees, the third none until then; finished in order, every byte
// arrives where it belongs.
TEST(ExecutorTransfers, BegunDownloadsFinishWithEveryByte) {
  Machine m(/*discrete=*/true);
  m.env.transfer = TransferMode::staged;
  m.env.copy_threads = 3;  // each piece's copy split over helpers
  constexpr std::size_t kPiece = Staging::kChunk / sizeof(cl_int);
  const std::size_t cuts[] = {0, (Staging::kMaxSlots - 3) * kPiece + kPiece / 2, (Staging::kMaxSlots + 3) * kPiece,
                              (Staging::kMaxSlots + 5) * kPiece + 13};
  const std::size_t n = cuts[3];
  auto v = sinew::vector<cl_int>().name("v");
  auto tree = kernel_source(sinew::testing::kTestKernels, "add_scalar", "t.cl").args(inout(v), scalar(cl_int(0)));
  std::vector<cl_int> host(n), back(n, -1);
  std::iota(host.begin(), host.end(), 3);
  const std::vector<Binding> bindings = {{v, host}};
  const Analysis an = analyze(*tree.impl(), bindings);
  const Decomposition dec = decompose(an.units, 1, overlap(1), m.env.infos);
  RunState run(m.env, *tree.impl(), an, bindings, dec, false);
  prepare(run, nullptr);
  PartState& ps = run.workers.parts.at(0);
  const cl::Buffer& slice = ps.slices.at(v.state());
  to_device(run, ps, slice, 0, host.data(), n * sizeof(cl_int), nullptr);
  std::vector<Staging::Pending> later;
  for (int i = 0; i < 3; ++i)
    to_host(run, ps, slice, cuts[i] * sizeof(cl_int), back.data() + cuts[i], (cuts[i + 1] - cuts[i]) * sizeof(cl_int),
            nullptr, &later);
  ASSERT_EQ(later.size(), 3u);
  finish_downloads(run, ps, later);
  EXPECT_TRUE(later.empty());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += back[i] != host[i];
  EXPECT_EQ(wrong, 0u);
  ps.worker->queue().finish();
}

// What the kernel's runner checks once the program is built, before any data moves: a kernel the
// source parser cannot see (made by a macro) with the wrong number of arguments.
TEST(ExecutorTransfers, TheKernelRunnerChecksWhatTheParserCouldNot) {
  Machine m(/*discrete=*/false);
  const char* src = "#define K(name) __kernel void name(__global int* v, int s) { v[get_global_id(0)] += s; }\nK(add)\n";
  auto v = sinew::vector<cl_int>().name("v");
  auto tree = kernel_source(src, "add", "macro.cl").args(inout(v));  // one argument for two parameters
  std::vector<cl_int> host(64, 5);
  const std::vector<Binding> bindings = {{v, host}};
  const Analysis an = analyze(*tree.impl(), bindings);  // the parser found no signature: nothing to check
  const Decomposition dec = decompose(an.units, 1, overlap(1), m.env.infos);
  try {
    execute(m.env, *tree.impl(), an, bindings, dec);
    FAIL() << "ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 parameters but 1 arguments"), std::string::npos) << e.what();
    EXPECT_NE(e.node().find("kernel 'add'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(host, std::vector<cl_int>(64, 5));
}
