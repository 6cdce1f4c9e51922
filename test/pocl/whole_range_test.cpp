// A leaf that runs whole (Kernel::whole_range) beside split leaves: a transpose, which writes
// outside any slice, in a pipeline after a partitioned step, and a row flip between a split step
// and a split halo stencil in a loop, on however many PoCL devices the suite is given, zero-copy
// and with the last device discrete, with the poison check: the right result on every plan, the
// other leaves split by the plan and the whole leaf run once per step as one partition on the
// plan's whole device (its vectors gathered from the partitions and scattered back); the poison
// check catches a whole leaf that reads outside what was gathered; a dynamic or steal plan, a
// halo argument and a Cluster are refused before any device work; the trainer's plan runs it
// whole as well.
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

using namespace sinew;
using namespace sinew::testing;

namespace {

const char* kWholeKernels = R"CL(
__kernel void bump(__global int* a, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  a[y * cols + x] = a[y * cols + x] * 3 + (int)x;
}
// b = a transposed: row y of a becomes column y of b, outside any slice of b's rows.
__kernel void transpose(__global const int* a, __global int* b, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  b[x * rows + y] = a[y * cols + x];
}
// b = a, element by element: the transpose's twin that runs split (each partition its own rows).
__kernel void same(__global const int* a, __global int* b, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  b[y * cols + x] = a[y * cols + x];
}
// Wrong on purpose: reads one element past a's end for the last work-item.
__kernel void transpose_past(__global const int* a, __global int* b, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  b[x * rows + y] = a[y * cols + x + 1];
}
// Wrong on purpose: reads b, which it is given as out() (never gathered).
__kernel void transpose_reads_out(__global const int* a, __global int* b, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  b[x * rows + y] = a[y * cols + x] + b[x * rows + y];
}
__kernel void scale(__global int* a, uint cols) {
  size_t i = get_global_id(1) * cols + get_global_id(0);
  a[i] = (a[i] * 5 + 3) & 0xFFFF;
}
// b = a reversed plus the total of a: by value, and through a pointer.
__kernel void reverse_plus(__global const int* a, __global int* b, int total, uint n) {
  size_t i = get_global_id(0);
  b[n - 1 - i] = a[i] + total;
}
__kernel void reverse_plus_pointer(__global const int* a, __global int* b, __global const int* total, uint n) {
  size_t i = get_global_id(0);
  b[n - 1 - i] = a[i] + total[0];
}
__kernel void copy_int(__global const int* a, __global int* part) { part[get_global_id(0)] = a[get_global_id(0)]; }
// b = a with its rows in reverse order, outside any slice of b's rows.
__kernel void flip(__global const int* a, __global int* b, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  b[(rows - 1 - y) * cols + x] = a[y * cols + x];
}
// a = b's rows y - 1, y and y + 1 summed (global rows: the edge rows copy b).
__kernel void blur(__global const int* b, __global int* a, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1), i = y * cols + x;
  a[i] = y == 0 || y == rows - 1 ? b[i] : (b[i - cols] + b[i] + b[i + cols]) & 0xFFFF;
}
)CL";

// pipeline(bump(inout a), transpose(in a, out b).whole_range()) over a square grid (the transpose's
// units, rows of b, are as many as a's).
struct Transposed {
  std::vector<int> a, b, want;
  Node tree;
  std::vector<Binding> bindings;
  Vector<cl_int> va = sinew::vector<cl_int>().name("a"), vb = sinew::vector<cl_int>().name("b");
};
void make(Transposed& t, std::size_t side, const char* whole_entry = "transpose", bool whole = true) {
  t.a.resize(side * side);
  for (std::size_t i = 0; i < t.a.size(); ++i) t.a[i] = static_cast<int>((i * 13) % 97) - 40;
  t.b.assign(t.a.size(), 0);
  t.want.resize(t.a.size());
  for (std::size_t y = 0; y < side; ++y)
    for (std::size_t x = 0; x < side; ++x) t.want[x * side + y] = t.a[y * side + x] * 3 + static_cast<int>(x);
  t.va.unit(side);
  t.vb.unit(side);
  const auto n = static_cast<cl_uint>(side);
  auto bump = kernel_source(kWholeKernels, "bump", "whole.cl").args(inout(t.va), scalar(n)).dims(2);
  auto transpose =
      kernel_source(kWholeKernels, whole_entry, "whole.cl").args(in(t.va), out(t.vb), scalar(n), scalar(n)).dims(2);
  if (whole) transpose.whole_range();
  t.tree = pipeline(bump, transpose);
  t.bindings = {{t.va, t.a}, {t.vb, t.b}};
}

Runtime& checked(bool discrete) {
  static std::map<bool, std::unique_ptr<Runtime>> made;
  auto& r = made[discrete];
  if (!r)
    r = std::make_unique<Runtime>(RuntimeOptions{
        .discrete = discrete ? std::to_string(device_count() - 1) : std::string(), .poison_check = true});
  return *r;
}

// loop(pipeline(scale(inout a), flip(in a, out b).whole_range(), blur(halo(b, 1, 1), out(a)))) over a
// square grid, `steps` times, blur indexing globally: a split step, a whole leaf, a split stencil
// reading halo rows of what the whole leaf wrote.
struct Flipped {
  std::vector<int> a, b, want_a, want_b;
  Node tree;
  std::vector<Binding> bindings;
  Vector<cl_int> va = sinew::vector<cl_int>().name("a"), vb = sinew::vector<cl_int>().name("b");
};
void make_loop(Flipped& f, std::size_t side, std::size_t steps, const char* whole_entry = "flip", bool whole = true) {
  f.a.resize(side * side);
  for (std::size_t i = 0; i < f.a.size(); ++i) f.a[i] = static_cast<int>((i * 29) % 211);
  f.b.assign(f.a.size(), 0);
  f.want_a = f.a;
  f.want_b = f.b;
  for (std::size_t s = 0; s < steps; ++s) {
    for (auto& x : f.want_a) x = (x * 5 + 3) & 0xFFFF;
    for (std::size_t y = 0; y < side; ++y)
      for (std::size_t x = 0; x < side; ++x) f.want_b[(side - 1 - y) * side + x] = f.want_a[y * side + x];
    for (std::size_t y = 0; y < side; ++y)
      for (std::size_t x = 0; x < side; ++x) {
        const std::size_t i = y * side + x;
        f.want_a[i] = y == 0 || y == side - 1 ? f.want_b[i]
                                              : (f.want_b[i - side] + f.want_b[i] + f.want_b[i + side]) & 0xFFFF;
      }
  }
  f.va.unit(side);
  f.vb.unit(side);
  const auto n = static_cast<cl_uint>(side);
  auto scale = kernel_source(kWholeKernels, "scale", "whole.cl").args(inout(f.va), scalar(n)).dims(2);
  auto flip =
      kernel_source(kWholeKernels, whole_entry, "whole.cl").args(in(f.va), out(f.vb), scalar(n), scalar(n)).dims(2);
  if (whole) flip.whole_range();
  auto blur = kernel_source(kWholeKernels, "blur", "whole.cl")
                  .args(halo(f.vb, 1, 1), out(f.va), scalar(n), scalar(n))
                  .dims(2)
                  .global_indices();
  f.tree = loop(pipeline(scale, flip, blur)).times(steps);
  f.bindings = {{f.va, f.a}, {f.vb, f.b}};
}

// Plans for the suite's devices: each device alone, an even split, and one lopsided towards the
// last device with three overlap queues.
std::vector<Config> plans() {
  const std::size_t n = device_count();
  std::vector<Config> out;
  Config even;
  even.shares.assign(n, 1.0 / static_cast<double>(n));
  out.push_back(even);
  Config last_most = even;
  for (std::size_t d = 0; d < n; ++d) last_most.shares[d] = n == 1 ? 1.0 : d + 1 == n ? 0.6 : 0.4 / double(n - 1);
  last_most.overlap = 3;
  out.push_back(last_most);
  for (std::size_t d = 0; d < n; ++d) out.push_back(Config::single(d, n));
  return out;
}

// The partitions that ran units.
std::size_t working(const Report& r) {
  std::size_t count = 0;
  for (const auto& p : r.partitions) count += p.units > 0;
  return count;
}

// The whole leaf `node` ran `launches` times on `device`, gathered from the partitions (moving
// `gathered` and `scattered` bytes a launch) — or the run was one partition on that device.
void expect_whole(const Report& r, const std::string& node, std::size_t device, std::size_t launches,
                  std::uint64_t gathered, std::uint64_t scattered, const std::string& plan) {
  if (working(r) == 1 && r.whole_leaves.empty()) {
    for (const auto& p : r.partitions)
      if (p.units) EXPECT_EQ(p.device, device) << plan << "\n" << r.str();
    return;
  }
  ASSERT_EQ(r.whole_leaves.size(), 1u) << plan << "\n" << r.str();
  const WholeLeafRun& w = r.whole_leaves.front();
  EXPECT_NE(w.node.find(node), std::string::npos) << w.node;
  EXPECT_EQ(w.device, device) << plan;
  EXPECT_EQ(w.launches, launches) << plan;
  EXPECT_EQ(w.gathered_bytes, gathered * launches) << plan;
  EXPECT_EQ(w.scattered_bytes, scattered * launches) << plan;
  EXPECT_LE(w.host_bytes, w.gathered_bytes + w.scattered_bytes) << plan;
}

std::size_t largest_share(const Config& c) {
  return static_cast<std::size_t>(std::max_element(c.shares.begin(), c.shares.end()) - c.shares.begin());
}

// The device a plan runs its whole leaf on: its whole item, else the largest share.
std::size_t whole_leaf_device_of(const Config& c) {
  if (auto it = c.items.find("whole"); it != c.items.end()) return std::stoul(it->second);
  return largest_share(c);
}

}  // namespace

class WholeRange : public ::testing::TestWithParam<bool> {};

// The transpose is right on every plan; the bump before it runs split by the plan, the transpose
// once, whole, on the device with the plan's largest share.
TEST_P(WholeRange, TransposeIsRightAndNeverSplitOnAnyPlan) {
  Runtime& rt = checked(GetParam());
  for (const Config& c : plans()) {
    Transposed t;
    make(t, 24);
    const Report r = rt.run(t.tree, t.bindings, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(t.b, t.want), "") << c.str();
    std::size_t sharing = 0;
    for (double s : c.shares) sharing += s > 0;
    EXPECT_GE(working(r), sharing) << c.str() << "\n" << r.str();  // the bump is split as planned
    const std::uint64_t bytes = 24 * 24 * sizeof(cl_int);
    expect_whole(r, "transpose", largest_share(c), 1, bytes, bytes, c.str());
  }
}

// What a whole leaf's gather and scatter should add to Report::copies under the partitions of `r`
// (fission none: a partition is in the leaf's context where it is on the leaf's device): its
// vector a's slices gathered, b's scattered, `slice` bytes a unit; a copy lands where its device
// holds it, within host memory on a zero-copy device.
Copies expected_whole_copies(const Report& r, const std::vector<DeviceInfo>& devices, std::size_t leaf,
                             std::uint64_t unit_bytes, std::uint64_t whole_bytes) {
  Copies c;
  const auto add = [&](std::size_t device, CopyCount Copies::*kind, std::uint64_t bytes) {
    const DeviceInfo& d = devices.at(device);
    CopyCount& n = !d.discrete && d.host_unified_memory ? c.host : c.*kind;
    ++n.count;
    n.bytes += bytes;
  };
  bool through_host = false;
  for (const auto& p : r.partitions)
    if (p.units && p.device != leaf) through_host = true;
  for (const auto& p : r.partitions) {  // gather a
    if (!p.units) continue;
    if (p.device == leaf) {
      add(leaf, &Copies::device, p.units * unit_bytes);
    } else {
      add(p.device, &Copies::to_host, p.units * unit_bytes);
      add(leaf, &Copies::to_device, p.units * unit_bytes);
    }
  }
  if (through_host) add(leaf, &Copies::to_host, whole_bytes);  // b read once to scatter
  for (const auto& p : r.partitions) {  // scatter b
    if (!p.units) continue;
    if (p.device == leaf) add(leaf, &Copies::device, p.units * unit_bytes);
    else add(p.device, &Copies::to_device, p.units * unit_bytes);
  }
  return c;
}

std::string copies_text(const Copies& c) {
  std::string s;
  for (const auto& [name, n] : {std::pair{"to_device", c.to_device}, {"to_host", c.to_host}, {"host", c.host},
                                {"device", c.device}, {"values", c.values}})
    s += std::string(name) + " " + std::to_string(n.count) + "/" + std::to_string(n.bytes) + " ";
  return s;
}

Copies difference(const Copies& a, const Copies& b) {
  const auto minus = [](const CopyCount& x, const CopyCount& y) {
    return CopyCount{x.count - y.count, x.bytes - y.bytes};
  };
  return {minus(a.to_device, b.to_device), minus(a.to_host, b.to_host), minus(a.host, b.host),
          minus(a.device, b.device), minus(a.values, b.values)};
}

// Report::copies shows what running the leaf whole moved: against the same tree whose second leaf
// copies each partition's own rows (split, moving nothing), the whole transpose adds exactly its
// slices gathered and scattered, each where it happened (device-side, through the host, or within
// host memory on a zero-copy device), on every plan; in a loop, every step's in loop_copies too.
TEST_P(WholeRange, ReportCopiesCountTheGatherAndScatter) {
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(device_count() - 1) : std::string(),
                            .quiet = true});
  const std::size_t side = 24;
  const std::uint64_t unit_bytes = side * sizeof(cl_int), whole_bytes = side * unit_bytes;
  for (const Config& c : plans()) {
    Transposed whole, split;
    make(whole, side);
    make(split, side, "same", false);
    const Report rw = rt.run(whole.tree, whole.bindings, RunOptions{.config = c}).get();
    const Report rs = rt.run(split.tree, split.bindings, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(whole.b, whole.want), "") << c.str();
    ASSERT_EQ(rw.partitions.size(), rs.partitions.size()) << c.str();
    const Copies added = difference(rw.copies, rs.copies);
    const Copies want = rw.whole_leaves.empty()
                            ? Copies{}
                            : expected_whole_copies(rw, rt.devices(), rw.whole_leaves.front().device, unit_bytes,
                                                    whole_bytes);
    EXPECT_EQ(copies_text(added), copies_text(want)) << c.str() << "\nwhole:\n" << rw.str() << "\nsplit:\n" << rs.str();
    // In a loop, each step's gather and scatter count in loop_copies too.
    const std::size_t steps = 3;
    Flipped loop_whole, loop_split;
    make_loop(loop_whole, side, steps);
    make_loop(loop_split, side, steps, "same", false);
    const Report lw = rt.run(loop_whole.tree, loop_whole.bindings, RunOptions{.config = c}).get();
    const Report ls = rt.run(loop_split.tree, loop_split.bindings, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(loop_whole.a, loop_whole.want_a), "") << c.str();
    Copies per_step = lw.whole_leaves.empty() ? Copies{}
                                              : expected_whole_copies(lw, rt.devices(), lw.whole_leaves.front().device,
                                                                      unit_bytes, whole_bytes);
    for (CopyCount* n : {&per_step.to_device, &per_step.to_host, &per_step.host, &per_step.device})
      n->count *= steps, n->bytes *= steps;
    EXPECT_EQ(copies_text(difference(lw.loop_copies, ls.loop_copies)), copies_text(per_step)) << c.str();
  }
}

// The plan's whole item names the device the leaf runs on, whatever the shares.
TEST_P(WholeRange, ThePlansWholeItemChoosesTheDevice) {
  Runtime& rt = checked(GetParam());
  const std::size_t n = device_count();
  for (std::size_t d = 0; d < n; ++d) {
    Transposed t;
    make(t, 16);
    std::string plan = n == 1 ? "0=1" : "0=0.7";
    for (std::size_t i = 1; i < n; ++i) plan += "," + std::to_string(i) + "=" + std::to_string(0.3 / double(n - 1));
    plan += ",whole=" + std::to_string(d);
    const Report r = rt.run(t.tree, t.bindings, RunOptions{.plan = plan}).get();
    EXPECT_EQ(compare_int(t.b, t.want), "") << plan;
    const std::uint64_t bytes = 16 * 16 * sizeof(cl_int);
    expect_whole(r, "transpose", d, 1, bytes, bytes, plan);
  }
  if (n < 2) return;
  // A device without a share: the split stage runs on device 0 alone, the leaf on the last device.
  Transposed t;
  make(t, 16);
  const std::string plan = "0=1,whole=" + std::to_string(n - 1);
  const Report r = rt.run(t.tree, t.bindings, RunOptions{.plan = plan}).get();
  EXPECT_EQ(compare_int(t.b, t.want), "") << plan;
  ASSERT_EQ(r.whole_leaves.size(), 1u) << r.str();
  EXPECT_EQ(r.whole_leaves.front().device, n - 1);
  EXPECT_EQ(r.whole_leaves.front().gathered_bytes, 16u * 16u * sizeof(cl_int));
}

// In a loop: a split step, the whole leaf, a split stencil reading halo rows of what the whole
// leaf wrote, every step; the whole leaf runs once a step.
TEST_P(WholeRange, LoopOfSplitStepWholeLeafAndSplitStencilIsRight) {
  Runtime& rt = checked(GetParam());
  for (const Config& c : plans()) {
    Flipped f;
    make_loop(f, 20, 4);
    const Report r = rt.run(f.tree, f.bindings, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(f.a, f.want_a), "") << c.str();
    EXPECT_EQ(compare_int(f.b, f.want_b), "") << c.str();
    const std::uint64_t bytes = 20 * 20 * sizeof(cl_int);
    expect_whole(r, "flip", largest_share(c), 4, bytes, bytes, c.str());
  }
}

// The poison check finds a whole leaf that reads past what was gathered (one element beyond the
// vector), and one that reads the vector it only writes.
TEST(WholeRangePoison, AWholeLeafReadingOutsideWhatWasGatheredIsCaught) {
  Runtime& rt = checked(true);
  Config even;
  even.shares.assign(device_count(), 1.0 / static_cast<double>(device_count()));
  for (const char* entry : {"transpose_past", "transpose_reads_out"}) {
    // One device holds every unit: the leaf runs on its partition, whose out() slice is not poison.
    if (device_count() == 1 && std::string(entry) == "transpose_reads_out") continue;
    Transposed t;
    make(t, 16, entry);
    try {
      rt.run(t.tree, t.bindings, RunOptions{.config = even}).get();
      ADD_FAILURE() << entry << ": the poison check did not see the read outside what was gathered";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_tree)) << entry << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("vector 'b'"), std::string::npos) << e.what();
    }
  }
}

// A whole leaf takes a reduction's value by value on any plan; through a pointer (each partition's
// own buffer) it is refused before data moves where it would be gathered.
TEST_P(WholeRange, AValueByValueRunsAndThroughAPointerIsRefusedWhereGathered) {
  Runtime& rt = checked(GetParam());
  const std::size_t n = 96;
  for (const char* entry : {"reverse_plus", "reverse_plus_pointer"}) {
    auto va = sinew::vector<cl_int>().name("a"), part = sinew::vector<cl_int>().name("part");
    auto vb = sinew::vector<cl_int>().name("b");
    auto total = result<cl_int>("total");
    std::vector<int> a(n), b(n, 0), want(n);
    int sum = 0;
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<int>(i % 11) - 5, sum += a[i];
    for (std::size_t i = 0; i < n; ++i) want[n - 1 - i] = a[i] + sum;
    auto tree = pipeline(
        map_reduce(kernel_source(kWholeKernels, "copy_int", "whole.cl").args(in(va), out(part)), reduce::sum(part, total)),
        kernel_source(kWholeKernels, entry, "whole.cl")
            .args(in(va), out(vb), value(total), scalar(static_cast<cl_uint>(n)))
            .whole_range());
    Config even;
    even.shares.assign(device_count(), 1.0 / static_cast<double>(device_count()));
    const bool pointer = std::string(entry) == "reverse_plus_pointer";
    try {
      rt.run(tree, {{va, a}, {vb, b}}, RunOptions{.config = even}).get();
      EXPECT_FALSE(pointer && device_count() > 1) << entry << ": a value through a pointer ran gathered";
      EXPECT_EQ(compare_int(b, want), "") << entry;
    } catch (const Error& e) {
      EXPECT_TRUE(pointer && device_count() > 1) << entry << ": " << e.what();
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
      EXPECT_NE(e.context().fix.find("by value"), std::string::npos) << e.context().fix;
      EXPECT_EQ(b, std::vector<int>(n, 0)) << "no data moved before the error";
    }
  }
}

// A dynamic or steal plan is refused before any device work, naming the leaf marked whole.
TEST_P(WholeRange, DynamicAndStealPlansRefusedBeforeDeviceWork) {
  Runtime& rt = checked(GetParam());
  for (const char* schedule : {"dynamic", "steal"}) {
    Transposed t;
    make(t, 16);
    const auto before = t.a;
    Config plan;
    plan.shares.assign(device_count(), 1.0 / static_cast<double>(device_count()));
    plan.schedule = schedule;
    try {
      rt.run(t.tree, t.bindings, RunOptions{.config = plan}).get();
      ADD_FAILURE() << "a whole-range leaf ran under the " << schedule << " schedule";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
      EXPECT_NE(e.node().find("transpose"), std::string::npos) << e.what();
      EXPECT_EQ(e.argument(), "whole_range") << e.what();
      EXPECT_NE(std::string(e.what()).find("runs whole"), std::string::npos) << e.what();
      EXPECT_NE(e.context().fix.find("schedule=static"), std::string::npos) << e.context().fix;
    }
    EXPECT_EQ(t.a, before) << schedule << ": no device work before the error";
    EXPECT_EQ(t.b, std::vector<int>(t.b.size(), 0)) << schedule;
  }
}

// A halo of a whole leaf's vector is every unit of it: refused with the fix, before device work;
// and a whole item naming no device is refused as the plan is read.
TEST_P(WholeRange, HaloArgumentAndUnknownWholeDeviceRefused) {
  Runtime& rt = checked(GetParam());
  Transposed t;
  make(t, 16);
  const auto n = static_cast<cl_uint>(16);
  auto haloed = kernel_source(kWholeKernels, "transpose", "whole.cl")
                    .args(halo(t.va, 1, 1), out(t.vb), scalar(n), scalar(n))
                    .dims(2)
                    .whole_range();
  try {
    rt.run(haloed, t.bindings).get();
    ADD_FAILURE() << "a halo argument of a whole-range leaf ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
    EXPECT_NE(e.node().find("transpose"), std::string::npos) << e.what();
    EXPECT_NE(e.context().fix.find("sinew::in('a')"), std::string::npos) << e.context().fix;
  }
  try {
    rt.run(t.tree, t.bindings, RunOptions{.plan = "whole=" + std::to_string(device_count())}).get();
    ADD_FAILURE() << "a whole item beyond the devices ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
    EXPECT_NE(std::string(e.what()).find("whole device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(t.b, std::vector<int>(t.b.size(), 0)) << "no device work before the errors";
}

// The shares of plans() with the last device given 0.7 and its whole item `whole` (none: -1).
std::string last_most_plan(std::ptrdiff_t whole) {
  const std::size_t n = device_count();
  std::string plan;
  for (std::size_t d = 0; d + 1 < n; ++d) plan += std::to_string(d) + "=" + std::to_string(0.3 / double(n - 1)) + ",";
  plan += std::to_string(n - 1) + "=0.7";
  return whole < 0 ? plan : plan + ",whole=" + std::to_string(whole);
}

// The whole leaf's device holds its vectors whole beside its own partitions (the drag-through
// memory check): under a cap on the last device that holds its 70% of the slices but not the
// transpose's two whole vectors as well, a given plan that runs the leaf there — named by its
// whole item or as the largest share — is refused before any device work, naming the leaf, the
// vector, the device and the device that holds it; the same shares with the leaf on device 0 run.
TEST_P(WholeRange, AGivenPlanWhoseLeafDeviceCannotHoldItIsRefused) {
  if (device_count() < 2) GTEST_SKIP() << "needs a second device for the split";
  const std::size_t side = 32, last = device_count() - 1;
  const std::uint64_t grid = side * side * sizeof(cl_int);
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(last) : std::string(),
                            .memory_cap = "cpu:" + std::to_string(last) + "=" + std::to_string(grid * 3 / 2),
                            .quiet = true});
  for (const std::ptrdiff_t whole : {static_cast<std::ptrdiff_t>(last), std::ptrdiff_t{-1}}) {
    Transposed t;
    make(t, side);
    const auto before = t.a;
    const std::string plan = last_most_plan(whole);
    try {
      rt.run(t.tree, t.bindings, RunOptions{.plan = plan}).get();
      ADD_FAILURE() << plan << ": the whole leaf ran on a device that cannot hold it";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
      EXPECT_NE(e.node().find("transpose"), std::string::npos) << e.what();
      EXPECT_EQ(e.argument(), "vector 'a'") << e.what();
      EXPECT_NE(std::string(e.what()).find("whole_range() and runs on cpu:" + std::to_string(last)), std::string::npos)
          << e.what();
      EXPECT_NE(e.context().fix.find("whole=0"), std::string::npos) << e.context().fix;
      EXPECT_NE(e.context().fix.find("SINEW_MEMORY_CAP"), std::string::npos) << e.context().fix;
    }
    EXPECT_EQ(t.a, before) << plan << ": no device work before the error";
    EXPECT_EQ(t.b, std::vector<int>(t.b.size(), 0)) << plan;
  }
  Transposed t;
  make(t, side);
  const Report r = rt.run(t.tree, t.bindings, RunOptions{.plan = last_most_plan(0)}).get();
  EXPECT_EQ(compare_int(t.b, t.want), "");
  ASSERT_EQ(r.whole_leaves.size(), 1u) << r.str();
  EXPECT_EQ(r.whole_leaves.front().device, 0u);
  // What the run allocated: the leaf's two whole vectors on device 0, the capped device within
  // its cap.
  EXPECT_GE(r.device_bytes.at(0), 2 * grid) << r.str();
  EXPECT_LE(r.device_bytes.at(last), grid * 3 / 2) << r.str();
}

// A plan the runtime chooses (trained here) runs the leaf on a device that holds it: under caps
// that leave every device but the last unable to hold the transpose's whole vectors, the plans
// training measures keep their shares and run the leaf on the last device (fit_memory moves it
// there), rather than losing a capped device's share ("cannot hold its share ... runs without it").
TEST_P(WholeRange, ChosenPlansRunTheLeafOnADeviceThatHoldsIt) {
  if (device_count() < 2) GTEST_SKIP() << "needs a device with room beside the capped ones";
  const std::size_t side = 32, last = device_count() - 1;
  const std::uint64_t grid = side * side * sizeof(cl_int);
  std::string caps;
  for (std::size_t d = 0; d < last; ++d)
    caps += std::string(d ? "," : "") + "cpu:" + std::to_string(d) + "=" + std::to_string(grid * 3 / 2);
  std::vector<std::string> lines;
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(last) : std::string(),
                            .memory_cap = caps,
                            .kb_path = ":memory:",
                            .training = {.quality = 1, .max_executions = 8},
                            .quiet = false,
                            .log = [&](LogLevel, const std::string& line) { lines.push_back(line); }});
  for (int run = 0; run < 2; ++run) {  // trained, then the knowledge base's plan
    Transposed t;
    make(t, side);
    const Report r = rt.run(t.tree, t.bindings).get();
    EXPECT_EQ(compare_int(t.b, t.want), "") << r.config.str();
    if (r.whole_leaves.empty()) continue;  // one partition of every unit: the leaf ran there
    EXPECT_EQ(r.whole_leaves.front().device, last) << r.config.str();
    EXPECT_EQ(whole_leaf_device_of(r.config), last) << r.config.str();
  }
  for (const std::string& line : lines) EXPECT_EQ(line.find("cannot hold its share"), std::string::npos) << line;
}

// The knowledge base's plan (trained here) runs the leaf whole as well.
TEST_P(WholeRange, TrainedPlanRunsWhole) {
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(device_count() - 1) : std::string(),
                            .kb_path = ":memory:",
                            .training = {.quality = 1, .max_executions = 8},
                            .quiet = true});
  Transposed t;
  make(t, 32);
  const Report r = rt.run(t.tree, t.bindings).get();
  EXPECT_EQ(compare_int(t.b, t.want), "");
  const std::uint64_t bytes = 32 * 32 * sizeof(cl_int);
  expect_whole(r, "transpose", whole_leaf_device_of(r.config), 1, bytes, bytes, r.config.str());
}

// loop(pipeline(triple(in a, out g), row_sum(in g, out s), reverse(in s, out t).whole_range())) over
// `side` rows: a grid of `side` x `side`, its tripled copy g (no binding: device memory on every
// device) and the row sums, a vector of one element a row, whose reversal runs whole. Under the
// memory caps below no device holds the loop (which cannot be dragged through) alone, so training
// splits it, while any device holds the whole leaf's two small vectors.
const char* kRowKernels = R"CL(
__kernel void triple(__global const int* a, __global int* g, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  g[y * cols + x] = a[y * cols + x] * 3 + (int)x;
}
__kernel void row_sum(__global const int* a, __global int* s, uint cols) {
  size_t y = get_global_id(0);
  int sum = 0;
  for (uint x = 0; x < cols; ++x) sum += a[y * cols + x];
  s[y] = sum & 0xFFFF;
}
__kernel void reverse(__global const int* s, __global int* t, uint n) {
  size_t i = get_global_id(0);
  t[n - 1 - i] = s[i];
}
)CL";

// Training chooses the whole leaf's device by measurement: its plan splits the work, so the plan
// is measured again with the leaf on each other device (a progress line each), and the fastest is
// stored with its whole item, which the run then follows.
TEST_P(WholeRange, TrainingMeasuresTheWholeLeafsDevice) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices: one alone cannot hold the loop";
  const std::size_t side = 128, steps = 2;
  // Three quarters of the grid: the whole g of a device alone does not fit, half of it does; the
  // discrete device, which holds a's slice too, five quarters (a's and g's halves fit).
  const std::uint64_t grid = side * side * sizeof(cl_int);
  std::string caps;
  for (std::size_t d = 0; d < device_count(); ++d) {
    const bool discrete = GetParam() && d + 1 == device_count();
    caps += (d ? "," : "") + std::string("cpu:") + std::to_string(d) + "=" + std::to_string(discrete ? grid * 5 / 4 : grid * 3 / 4);
  }
  std::vector<std::string> lines;
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(device_count() - 1) : std::string(),
                            .memory_cap = caps,
                            .kb_path = ":memory:",
                            .training = {.quality = 1, .max_executions = 40, .time_budget_s = 60},
                            .quiet = false,
                            .log = [&](LogLevel, const std::string& line) { lines.push_back(line); }});
  std::vector<int> a(side * side), s(side, 0), t(side, 0), want_t(side);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>((i * 7) % 31);
  for (std::size_t y = 0; y < side; ++y) {
    int sum = 0;
    for (std::size_t x = 0; x < side; ++x) sum += a[y * side + x] * 3 + static_cast<int>(x);
    want_t[side - 1 - y] = sum & 0xFFFF;
  }
  auto va = sinew::vector<cl_int>().name("a").unit(side), vg = sinew::vector<cl_int>().name("g").unit(side),
       vs = sinew::vector<cl_int>().name("s"), vt = sinew::vector<cl_int>().name("t");
  const auto n = static_cast<cl_uint>(side);
  auto triple = kernel_source(kRowKernels, "triple", "rows.cl").args(in(va), out(vg), scalar(n)).dims(2);
  auto row_sum = kernel_source(kRowKernels, "row_sum", "rows.cl").args(in(vg), out(vs), scalar(n)).range_of(vs);
  auto reverse = kernel_source(kRowKernels, "reverse", "rows.cl").args(in(vs), out(vt), scalar(n)).whole_range();
  const Node tree = loop(pipeline(triple, row_sum, reverse)).times(steps);
  const Report r = rt.run(tree, {{va, a}, {vs, s}, {vt, t}}).get();
  EXPECT_EQ(compare_int(t, want_t), "");
  const auto measured_on = [&](std::size_t d) {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find("whole leaf on device " + std::to_string(d) + ":") != std::string::npos;
    });
  };
  const std::size_t working = std::count_if(r.config.shares.begin(), r.config.shares.end(), [](double x) { return x > 0; });
  ASSERT_GE(working, 2u) << "the cap leaves no device alone: " << r.config.str();
  const auto whole = r.config.item("whole");
  ASSERT_TRUE(whole) << "a split plan stores its whole device: " << r.config.str();
  // Every device but the trainer's (its plan's largest share, measured already) once.
  std::ptrdiff_t measured = 0;
  for (std::size_t d = 0; d < device_count(); ++d) {
    EXPECT_LE(measured_on(d), 1) << "device " << d << " of " << r.config.str();
    measured += measured_on(d);
  }
  std::string log;
  for (const auto& l : lines) log += l + "\n";
  EXPECT_EQ(measured, static_cast<std::ptrdiff_t>(device_count()) - 1) << r.config.str() << "\n" << log;
  ASSERT_EQ(r.whole_leaves.size(), 1u) << r.str();
  EXPECT_EQ(r.whole_leaves.front().device, std::stoul(*whole)) << r.config.str();
  EXPECT_EQ(r.whole_leaves.front().launches, steps) << r.config.str();
}

// A run pinned to each device, which screens the device's fission or overlap levels where the
// knowledge base has not seen it: right, and the leaf whole on that device at every level.
TEST_P(WholeRange, PinnedRunsScreenLevelsAndKeepTheLeafWhole) {
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(device_count() - 1) : std::string(),
                            .kb_path = ":memory:",
                            .training = {.quality = 1, .max_executions = 8},
                            .quiet = true});
  for (std::size_t d = 0; d < device_count(); ++d) {
    Transposed t;
    make(t, 32);
    const Report r = rt.run(t.tree, t.bindings, RunOptions{.device = d}).get();
    EXPECT_EQ(compare_int(t.b, t.want), "") << "device " << d;
    const std::uint64_t bytes = 32 * 32 * sizeof(cl_int);
    expect_whole(r, "transpose", d, 1, bytes, bytes, r.config.str());
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, WholeRange, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });
