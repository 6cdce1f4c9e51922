// A run identical to the one before it goes on that run's prepared state (exec/kept_run.hpp,
// Report::prepared_again); anything that differs is prepared afresh, and what changed between
// identical runs (a host write, another tree's run, a failed run) is seen by the next. Each case
// compares every element with a C++ reference (small integers: float sums are exact) and with the
// same runs prepared afresh (profiled runs are never kept), on every PoCL device this process
// sees (1 or 2: the suite is registered once per count), zero-copy, with the last device
// discrete, and under the poison check (which keeps nothing).
#include <sinew/sinew.hpp>

#include "kb/kb_test_util.hpp"
#include "pocl/resident_setups.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

using namespace sinew;

namespace {

const char* kKernels = R"CL(
__kernel void axpy(__global const float* x, __global float* y, float a) {
  size_t i = get_global_id(0); y[i] += a * x[i];
}
__kernel void twice(__global float* y) {
  size_t i = get_global_id(0); y[i] = 2.0f * y[i] - 1.0f;
}
)CL";

constexpr std::size_t kN = 1 << 12;

using Setup = sinew::testing::ResidentSetup;
using sinew::testing::checked;
std::vector<Setup> setups() { return sinew::testing::resident_setups(); }

// Each device alone, and on two devices an uneven split.
std::vector<std::vector<double>> share_sets(std::size_t devices) {
  std::vector<std::vector<double>> out;
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<double> s(devices, 0.0);
    s[d] = 1.0;
    out.push_back(s);
  }
  if (devices > 1) {
    std::vector<double> odd(devices, 0.7 / static_cast<double>(devices - 1));
    odd[0] = 0.3;
    out.push_back(odd);
  }
  return out;
}

using sinew::testing::discrete_only;

RunOptions plan(const std::vector<double>& shares, bool profile = false) {
  RunOptions o = sinew::testing::shares_plan(shares);
  if (profile) o.profile = true;
  return o;
}

std::vector<float> start_values(std::size_t seed) { return sinew::testing::start_values(kN, seed); }

void saxpy_reference(std::vector<float>& y, const std::vector<float>& x) {
  for (std::size_t i = 0; i < kN; ++i) y[i] += 2.0f * x[i];
}
void twice_reference(std::vector<float>& y) {
  for (float& v : y) v = 2.0f * v - 1.0f;
}

struct Trees {
  Vector<cl_float> x = sinew::vector<cl_float>().name("x"), y = sinew::vector<cl_float>().name("y");
  Node saxpy = sinew::kernel_source(kKernels, "axpy").args(in(x), inout(y), scalar(2.0f));
  Vector<cl_float> rows = sinew::vector<cl_float>().name("rows").unit(64);
  Node doubling = sinew::kernel_source(kKernels, "twice").args(inout(rows));
};

void expect_equal(Array<cl_float>& a, const std::vector<float>& ref, const std::string& what) {
  const auto got = a.host();
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;
}

// A run after the first of a loop of identical runs reuses the state unless the poison check is on.
void expect_reused(const Runtime& rt, const Report& r, const std::string& what) {
  EXPECT_EQ(r.prepared_again, !checked(rt)) << what;
}

}  // namespace

// Identical runs reuse the prepared state; their results equal the same runs prepared afresh
// (profiled) and the reference, and on discrete devices nothing moves between them.
TEST(KeptRun, IdenticalRunsEqualRunsPreparedAfresh) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      for (const bool keep : {false, true}) {
        const std::string what = setup.name + " " + plan(shares).config->str() + (keep ? " keep" : "");
        Trees t;
        auto x = rt.array<cl_float>(start_values(1), {.keep_last_good = keep});
        auto y = rt.array<cl_float>(start_values(2), {.keep_last_good = keep});
        auto fresh_y = rt.array<cl_float>(start_values(2), {.keep_last_good = keep});
        std::vector<float> ref = start_values(2);
        for (int run = 0; run < 4; ++run) {
          const Report r = rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
          const Report p = rt.execute(t.saxpy, {{t.x, x}, {t.y, fresh_y}}, plan(shares, /*profile=*/true));
          saxpy_reference(ref, start_values(1));
          EXPECT_FALSE(p.prepared_again) << what;  // profiled: prepared afresh, the kept state left as it is
          if (run > 0) expect_reused(rt, r, what);
          if (run > 0 && discrete_only(rt, shares) && !checked(rt) && !keep)
            EXPECT_EQ(r.copies.host_bytes(), 0u) << what;
        }
        for (int run = 0; run < 4; ++run) {
          const Report r = rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
          saxpy_reference(ref, start_values(1));
          if (run > 0) expect_reused(rt, r, what);
          if (run > 0 && discrete_only(rt, shares) && !checked(rt)) EXPECT_EQ(r.copies.host_bytes(), 0u) << what;
        }
        for (int run = 0; run < 4; ++run)
          rt.execute(t.saxpy, {{t.x, x}, {t.y, fresh_y}}, plan(shares, /*profile=*/true));
        expect_equal(y, ref, what);
        const auto a = y.host();
        const auto b = fresh_y.host();
        for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(a[i], b[i]) << what << " at " << i;
        EXPECT_EQ(y.runs_completed(), 8u) << what;
      }
    }
  }
}

// What the host writes between identical runs reaches the next run, which still reuses the state
// and moves what the same run prepared afresh (profiled) moves after the same writes.
TEST(KeptRun, HostWriteBetweenRunsIsSeen) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Trees t;
      struct Pair {
        Array<cl_float> x, y;
      };
      Pair kept{rt.array<cl_float>(start_values(1)), rt.array<cl_float>(start_values(2))};
      Pair fresh{rt.array<cl_float>(start_values(1)), rt.array<cl_float>(start_values(2))};
      std::vector<float> ref = start_values(2);
      std::vector<float> xs = start_values(1);
      for (Pair* p : {&kept, &fresh}) rt.execute(t.saxpy, {{t.x, p->x}, {t.y, p->y}}, plan(shares, p == &fresh));
      saxpy_reference(ref, xs);
      for (int step = 0; step < 3; ++step) {
        const std::size_t first = 100 + 37 * static_cast<std::size_t>(step), count = 300;
        for (std::size_t i = 0; i < count; ++i) {
          ref[first + i] = static_cast<float>(step + i % 5);
          xs[first + 1000 + i] = static_cast<float>(i % 3);  // the vector it reads, too
        }
        std::uint64_t moved[2] = {0, 0};
        for (Pair* p : {&kept, &fresh}) {
          auto part = p->y.write(first, count);
          for (std::size_t i = 0; i < count; ++i) part[i] = ref[first + i];
          auto input = p->x.write(first + 1000, count);
          for (std::size_t i = 0; i < count; ++i) input[i] = xs[first + 1000 + i];
          const Report r = rt.execute(t.saxpy, {{t.x, p->x}, {t.y, p->y}}, plan(shares, p == &fresh));
          moved[p == &fresh] = r.copies.to_device.bytes;
          if (p == &kept) expect_reused(rt, r, what);
        }
        saxpy_reference(ref, xs);
        EXPECT_EQ(moved[0], moved[1]) << what;
        if (discrete_only(rt, shares) && !checked(rt)) EXPECT_GT(moved[0], 0u) << what;
        expect_equal(kept.y, ref, what);
        expect_equal(fresh.y, ref, what);
      }
    }
  }
}

// A changed plan is prepared afresh (and then kept); host vectors rebound at another address are
// too; a host vector bound again at the same address is uploaded by every run.
TEST(KeptRun, ChangedPlanOrBindingIsPreparedAfresh) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    const auto sets = share_sets(rt.devices().size());
    const std::string what = setup.name;
    Trees t;
    auto x = rt.array<cl_float>(start_values(1));
    auto y = rt.array<cl_float>(start_values(2));
    std::vector<float> ref = start_values(2);
    for (const auto& shares : sets) {
      for (int run = 0; run < 3; ++run) {
        const Report r = rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
        saxpy_reference(ref, start_values(1));
        if (run == 0) EXPECT_FALSE(r.prepared_again) << what << " " << plan(shares).config->str();
        else expect_reused(rt, r, what);
      }
      expect_equal(y, ref, what);
    }
    // Host memory: kept only where no run's slice takes a device buffer from the pool (a kept
    // state holds none), i.e. on zero-copy devices alone.
    std::vector<float> xs = start_values(1), ys = start_values(2), href = start_values(2);
    for (const auto& shares : sets) {
      const bool zero_copy_only = [&] {
        for (std::size_t d = 0; d < shares.size(); ++d)
          if (shares[d] > 0 && rt.devices()[d].discrete) return false;
        return true;
      }();
      for (int run = 0; run < 3; ++run) {
        xs[static_cast<std::size_t>(run) * 5] = static_cast<float>(run);  // written by the host between runs
        const Report r = rt.execute(t.saxpy, {{t.x, xs}, {t.y, ys}}, plan(shares));
        saxpy_reference(href, xs);
        if (run > 0) EXPECT_EQ(r.prepared_again, zero_copy_only && !checked(rt)) << what;
        for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(ys[i], href[i]) << what << " at " << i;
      }
      std::vector<float> other = ys;  // the same contents at another address
      const Report r = rt.execute(t.saxpy, {{t.x, xs}, {t.y, other}}, plan(shares));
      EXPECT_FALSE(r.prepared_again) << what;
      saxpy_reference(href, xs);
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(other[i], href[i]) << what << " at " << i;
      ys = other;
    }
  }
}

// Two trees alternating over the same arrays (different units): each keeps its own state, and
// each sees what the other wrote and where it left the data.
TEST(KeptRun, TwoTreesAlternating) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Trees t;
      auto x = rt.array<cl_float>(start_values(1));
      auto y = rt.array<cl_float>(start_values(2));
      std::vector<float> ref = start_values(2);
      for (int step = 0; step < 4; ++step) {
        const Report a = rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
        saxpy_reference(ref, start_values(1));
        const Report b = rt.execute(t.doubling, {{t.rows, y}}, plan(shares));
        twice_reference(ref);
        if (step > 0) {
          expect_reused(rt, a, what);
          expect_reused(rt, b, what);
        }
      }
      expect_equal(y, ref, what);
    }
  }
}

// Trees that each keep their last run's state build their programs no more often than one tree:
// a kept state holds no queue build between its runs (exec/kept_run.cpp), so the trees run after
// it take the same build numbers and find their programs built. Counted as the program files of
// the runtime's own disk cache; the first tree then runs again on its kept state.
TEST(KeptRun, ManyKeptTreesBuildTheirProgramsOnce) {
  for (const auto& setup : setups()) {
    kbtest::TempDir cache;
    RuntimeOptions options = setup.options;
    options.cache_dir = cache.path().string();
    options.disk_cache = true;
    Runtime rt(options);
    const auto programs = [&] {
      std::size_t n = 0;
      for (const auto& e : std::filesystem::directory_iterator(cache.path())) n += e.path().extension() == ".bin";
      return n;
    };
    const auto shares = share_sets(rt.devices().size()).back();
    auto x = rt.array<cl_float>(start_values(1));
    auto y = rt.array<cl_float>(start_values(2));
    std::vector<float> ref = start_values(2);
    std::vector<Trees> trees(6);
    rt.execute(trees[0].saxpy, {{trees[0].x, x}, {trees[0].y, y}}, plan(shares));
    saxpy_reference(ref, start_values(1));
    const std::size_t one_tree = programs();
    EXPECT_GT(one_tree, 0u) << setup.name;
    for (auto& t : trees) {
      rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
      saxpy_reference(ref, start_values(1));
    }
    EXPECT_EQ(programs(), one_tree) << setup.name;
    const Report again = rt.execute(trees[0].saxpy, {{trees[0].x, x}, {trees[0].y, y}}, plan(shares));
    saxpy_reference(ref, start_values(1));
    expect_reused(rt, again, setup.name);
    expect_equal(y, ref, setup.name);
  }
}

// A failed run between identical runs (another tree's, keep_last_good on): the next run reuses the
// state and starts from the last good contents. Without the last good copy the next run is refused
// as a freshly prepared one would be, and after the host writes the array the runs go on.
TEST(KeptRun, FailedRunThenGoodOnes) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Trees t;
      Node failing = sinew::loop(t.saxpy).until([](const LoopState&) -> bool { throw std::runtime_error("stop"); });
      auto x = rt.array<cl_float>(start_values(1));
      auto y = rt.array<cl_float>(start_values(2));
      std::vector<float> ref = start_values(2);
      for (int run = 0; run < 2; ++run) {
        rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
        saxpy_reference(ref, start_values(1));
      }
      EXPECT_THROW(rt.execute(failing, {{t.x, x}, {t.y, y}}, plan(shares)), std::exception) << what;
      const Report r = rt.execute(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares));
      saxpy_reference(ref, start_values(1));
      expect_reused(rt, r, what);
      expect_equal(y, ref, what);

      if (checked(rt)) continue;  // (the poison check's first run fails on host copies)
      auto z = rt.array<cl_float>(start_values(2), {.keep_last_good = false});
      for (int run = 0; run < 2; ++run) rt.execute(t.saxpy, {{t.x, x}, {t.y, z}}, plan(shares));
      EXPECT_THROW(rt.execute(failing, {{t.x, x}, {t.y, z}}, plan(shares)), std::exception) << what;
      EXPECT_THROW(rt.execute(t.saxpy, {{t.x, x}, {t.y, z}}, plan(shares)), Error) << what;  // lost
      auto all = z.write();
      for (std::size_t i = 0; i < kN; ++i) all[i] = 1.0f;
      std::vector<float> zref(kN, 1.0f);
      for (int run = 0; run < 3; ++run) {
        const Report g = rt.execute(t.saxpy, {{t.x, x}, {t.y, z}}, plan(shares));
        saxpy_reference(zref, start_values(1));
        EXPECT_EQ(g.prepared_again, run > 0) << what;  // the refused run took the kept state with it
      }
      expect_equal(z, zref, what);
    }
  }
}

// Runs submitted before the first is waited for (Runtime::run) over the same arrays: each in its
// turn, the later ones on the kept state.
TEST(KeptRun, SubmittedRunsInTurn) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Trees t;
      auto x = rt.array<cl_float>(start_values(1));
      auto y = rt.array<cl_float>(start_values(2));
      std::vector<float> ref = start_values(2);
      std::vector<std::future<Report>> pending;
      for (int run = 0; run < 6; ++run) {
        pending.push_back(rt.run(t.saxpy, {{t.x, x}, {t.y, y}}, plan(shares)));
        saxpy_reference(ref, start_values(1));
      }
      std::size_t reused = 0;
      for (auto& f : pending) reused += f.get().prepared_again ? 1 : 0;
      if (!checked(rt)) EXPECT_GE(reused, 1u) << what;
      expect_equal(y, ref, what);
    }
  }
}
