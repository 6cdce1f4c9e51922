// The program cache: memory hit, disk miss then hit, corrupt files, concurrent processes.
#include "kb/kb_test_util.hpp"
#include "platform/device.hpp"
#include "platform/hash.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <random>

namespace fs = std::filesystem;
using namespace sinew::detail;

namespace {
using kbtest::TempDir;

struct Cl {
  cl::Device device;
  cl::Context context;
  Cl() {
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    std::vector<cl::Device> devices;
    platforms.at(0).getDevices(CL_DEVICE_TYPE_ALL, &devices);
    device = devices.at(0);
    context = cl::Context(device);
  }
};

std::string unique_source() {
  std::random_device rd;
  return "__kernel void cached(__global int* v) { v[get_global_id(0)] = " + std::to_string(rd() % 100000) + "; }";
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[256];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  int rc = p ? pclose(p) : -1;
  return rc == 0 ? out : "failed: " + out;
}
}  // namespace

TEST(ProgramCache, MemoryHitThenDiskHitInANewCache) {
  TempDir dir;
  Cl cl;
  const std::string src = unique_source();
  {
    ProgramCache cache(dir.path().string());
    auto p1 = cache.get(cl.context, {cl.device}, {src, "t"}, "");
    auto p2 = cache.get(cl.context, {cl.device}, {src, "t"}, "");
    EXPECT_EQ(p1(), p2());
    EXPECT_EQ(cache.stats().builds, 1u);
    EXPECT_EQ(cache.stats().memory_hits, 1u);
    EXPECT_TRUE(fs::exists(cache.file_for(cl.device, src, "")));
    cache.get(cl.context, {cl.device}, {src, "t"}, "-DX=1");  // other options: another build
    EXPECT_EQ(cache.stats().builds, 2u);
  }
  ProgramCache again(dir.path().string());
  auto p = again.get(cl.context, {cl.device}, {src, "t"}, "");
  EXPECT_EQ(again.stats().builds, 0u);
  EXPECT_EQ(again.stats().disk_hits, 1u);
  cl::Kernel k(p, "cached");
  cl::Buffer b(cl.context, CL_MEM_READ_WRITE, 4 * sizeof(int));
  k.setArg(0, b);
  cl::CommandQueue q(cl.context, cl.device);
  q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(4));
  int out[4] = {0, 0, 0, 0};
  q.enqueueReadBuffer(b, CL_TRUE, 0, sizeof out, out);
  EXPECT_EQ(std::to_string(out[3]), src.substr(src.find("= ") + 2, src.find(";") - src.find("= ") - 2));
}

TEST(ProgramCache, CorruptOrTruncatedFilesAreRebuiltNotFatal) {
  TempDir dir;
  Cl cl;
  const std::string src = unique_source();
  std::string file;
  {
    ProgramCache cache(dir.path().string());
    cache.get(cl.context, {cl.device}, {src, "t"}, "");
    file = cache.file_for(cl.device, src, "");
  }
  for (int variant = 0; variant < 3; ++variant) {
    auto size = fs::file_size(file);
    if (variant == 0) fs::resize_file(file, size / 2);           // truncated
    if (variant == 1) { std::ofstream(file, std::ios::binary | std::ios::in | std::ios::out).seekp(40) << "garbage!"; }
    if (variant == 2) { std::ofstream(file, std::ios::trunc) << "not a cache file"; }
    ProgramCache cache(dir.path().string());
    auto p = cache.get(cl.context, {cl.device}, {src, "t"}, "");
    EXPECT_NO_THROW(cl::Kernel(p, "cached")) << variant;
    EXPECT_EQ(cache.stats().corrupt_files, 1u) << variant;
    EXPECT_EQ(cache.stats().builds, 1u) << variant;
    ProgramCache fixed(dir.path().string());  // the rebuilt binary replaced the bad file
    fixed.get(cl.context, {cl.device}, {src, "t"}, "");
    EXPECT_EQ(fixed.stats().disk_hits, 1u) << variant;
  }
}

// A cache file whose header claims only the first half of the real binary, with a checksum that
// matches that half, once made every process crash inside PoCL: the header must say the whole
// file (its length is checked), and what built it.
TEST(ProgramCache, AHeaderClaimingPartOfTheBinaryIsRebuilt) {
  TempDir dir;
  Cl cl;
  const std::string src = unique_source();
  std::string file;
  {
    ProgramCache cache(dir.path().string());
    cache.get(cl.context, {cl.device}, {src, "t"}, "");
    file = cache.file_for(cl.device, src, "");
  }
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  constexpr std::size_t kHeader = 40, kSizeAt = 24, kCheckAt = 32;  // magic, identity, source, size, check
  ASSERT_GT(bytes.size(), kHeader + 64);
  const std::uint64_t half = (bytes.size() - kHeader) / 2;
  const std::uint64_t check = Hasher().add(std::string_view(bytes).substr(kHeader, half)).value();
  bytes.replace(kSizeAt, 8, reinterpret_cast<const char*>(&half), 8);
  bytes.replace(kCheckAt, 8, reinterpret_cast<const char*>(&check), 8);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  ProgramCache cache(dir.path().string());
  auto p = cache.get(cl.context, {cl.device}, {src, "t"}, "");
  EXPECT_NO_THROW(cl::Kernel(p, "cached"));
  EXPECT_EQ(cache.stats().corrupt_files, 1u);
  EXPECT_EQ(cache.stats().builds, 1u);
}

// A binary is bound to the device, driver and source that built it: one copied over another
// entry's file (a cache directory shared across machines, a mix-up) is rebuilt, not loaded.
TEST(ProgramCache, ABinaryOfAnotherSourceIsRebuilt) {
  TempDir dir;
  Cl cl;
  const std::string a = unique_source(), b = unique_source() + " ";
  ProgramCache first(dir.path().string());
  first.get(cl.context, {cl.device}, {a, "t"}, "");
  first.get(cl.context, {cl.device}, {b, "t"}, "");
  fs::copy_file(first.file_for(cl.device, a, ""), first.file_for(cl.device, b, ""), fs::copy_options::overwrite_existing);
  ProgramCache cache(dir.path().string());
  cache.get(cl.context, {cl.device}, {b, "t"}, "");
  EXPECT_EQ(cache.stats().corrupt_files, 1u);
  EXPECT_EQ(cache.stats().builds, 1u);
}

// A binary that passes every check can still crash the driver as it loads: the marker a process
// keeps while loading it is still there when the next process comes, which then builds from
// source instead of crashing too.
TEST(ProgramCache, ABinaryAProcessDiedLoadingIsDropped) {
  TempDir dir;
  Cl cl;
  const std::string src = unique_source();
  std::string file;
  {
    ProgramCache cache(dir.path().string());
    cache.get(cl.context, {cl.device}, {src, "t"}, "");
    file = cache.file_for(cl.device, src, "");
  }
  std::ofstream(file + ".loading") << "12345\n";  // as a process that died while loading leaves it
  ProgramCache cache(dir.path().string());
  auto p = cache.get(cl.context, {cl.device}, {src, "t"}, "");
  EXPECT_NO_THROW(cl::Kernel(p, "cached"));
  EXPECT_EQ(cache.stats().crashed_loads, 1u);
  EXPECT_EQ(cache.stats().builds, 1u);
  EXPECT_FALSE(fs::exists(file + ".loading"));
  ProgramCache later(dir.path().string());
  later.get(cl.context, {cl.device}, {src, "t"}, "");
  EXPECT_EQ(later.stats().disk_hits, 1u);  // the rebuilt binary is stored again
}

TEST(ProgramCache, UnwritableDirectoryOnlyCostsCompileTime) {
  Cl cl;
  ProgramCache cache("/proc/sinew-cannot-exist");
  EXPECT_TRUE(cache.dir().empty());
  EXPECT_NO_THROW(cache.get(cl.context, {cl.device}, {unique_source(), "t"}, ""));
}

TEST(ProgramCache, TwoProcessesAtOnceBuildOnceAndLeaveAValidCache) {
  TempDir dir;
  const std::string src = unique_source();
  const std::string cmd = std::string(SINEW_CACHE_BUILDER) + " '" + dir.path().string() + "' '" + src + "'";
  auto a = std::async(std::launch::async, [&] { return run(cmd); });
  auto b = std::async(std::launch::async, [&] { return run(cmd); });
  std::string ra = a.get(), rb = b.get();
  // One builds; the other waits for its lock and loads what it stored ("builds disk_hits corrupt").
  EXPECT_TRUE((ra == "1 0 0\n" && rb == "0 1 0\n") || (ra == "0 1 0\n" && rb == "1 0 0\n")) << ra << rb;
  EXPECT_EQ(run(cmd), "0 1 0\n");  // a third process finds a whole, valid binary
  for (auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temporary left behind";
}

// On PoCL's CPU devices every live queue's programs are a build of their own (QueueBuild: PoCL
// aborts when launches of one build on several queues release each other's kernel library), by
// the lowest number no live queue holds, so that every process uses the same few builds.
TEST(ProgramCache, EveryLiveQueueOnAPoclCpuDeviceHasABuildOfItsOwn) {
  Cl cl;
  auto first = std::make_unique<QueueBuild>(cl.device);
  auto second = std::make_unique<QueueBuild>(cl.device);
  EXPECT_NE(first->options().find("-DSINEW_QUEUE_BUILD="), std::string::npos);
  EXPECT_NE(first->options(), second->options());
  const std::string freed = first->options();
  first.reset();
  QueueBuild third(cl.device);
  EXPECT_EQ(third.options(), freed);  // the number given back is taken again
  // A pooled queue gives its number back while it waits and takes the lowest free one when used
  // again: queues used one after another share the same builds.
  ASSERT_TRUE(second->numbered());
  const std::string before = second->options();
  second->give_back();
  EXPECT_EQ(second->options(), "");
  {
    QueueBuild meanwhile(cl.device);
    EXPECT_EQ(meanwhile.options(), before);
  }
  second->take();
  EXPECT_EQ(second->options(), before);
  // Two queues' builds of one source are two programs in the cache, with binaries of their own.
  TempDir dir;
  ProgramCache cache(dir.path().string());
  const std::string src = unique_source();
  auto a = cache.get(cl.context, {cl.device}, {src, "<test>"}, "-DX=1" + second->options());
  auto b = cache.get(cl.context, {cl.device}, {src, "<test>"}, "-DX=1" + third.options());
  EXPECT_NE(a(), b());
  EXPECT_EQ(cache.stats().builds, 2u);
}
