// Divide and conquer: a mergesort whose lower levels run split over the devices.
#include <sinew/sinew.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <vector>

// SINEW_T is the element type, defined by the skeleton for both kernels.
const char* const kSource = R"CL(
// One work-group per leaf; its first work-item sorts the leaf in place (insertion sort).
__kernel void sort_leaf(__global SINEW_T* data, uint n, uint leaf_size) {
  if (get_local_id(0) != 0) return;
  const uint lo = get_group_id(0) * leaf_size, hi = min(lo + leaf_size, n);
  for (uint i = lo + 1; i < hi; ++i) {
    const SINEW_T x = data[i];
    uint j = i;
    for (; j > lo && data[j - 1] > x; --j) data[j] = data[j - 1];
    data[j] = x;
  }
}
// One work-item per element: its place in the merged run is its place in its own run plus the
// number of elements of the other runs of its group that go before it (ties: the earlier run's).
__kernel void merge_runs(__global const SINEW_T* src, __global SINEW_T* dst, uint n, uint run, uint fanout) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const uint start = i / (run * fanout) * (run * fanout), own = (i - start) / run;
  const SINEW_T x = src[i];
  uint place = i - start - own * run;
  for (uint r = 0; r < fanout; ++r) {
    const uint lo = start + r * run;
    if (r == own || lo >= n) continue;
    uint a = lo, b = min(lo + run, n);
    while (a < b) {
      const uint m = (a + b) / 2;
      if (r < own ? src[m] <= x : src[m] < x) a = m + 1; else b = m;
    }
    place += a - lo;
  }
  dst[start + place] = x;
}
)CL";

int main() {
  const std::size_t n = 1 << 15;
  std::vector<cl_uint> keys(n);
  std::uint32_t state = 7;
  for (auto& k : keys) k = state = state * 1664525u + 1013904223u;
  std::vector<cl_uint> expected = keys;
  std::sort(expected.begin(), expected.end());

  auto v = sinew::vector<cl_uint>().name("keys");
  auto tree = sinew::divide_and_conquer(v, sinew::kernel_source(kSource, "sort_leaf"),
                                        sinew::kernel_source(kSource, "merge_runs"),
                                        {.fanout = 2, .leaf_size = 256});

  sinew::Runtime rt;
  // The levels below the crossover split by the shares; from it up on one device.
  sinew::Config plan;
  plan.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  plan.set("crossover", "4");
  const sinew::Report report = rt.execute(tree, {{v, keys}}, {.config = plan});
  for (const auto& level : report.levels)
    std::cout << "level " << level.level << ": " << level.subproblems << " subproblems of " << level.subproblem
              << " keys on " << level.devices.size() << " device(s)\n";

  if (keys != expected) {
    std::cout << "MISMATCH\n";
    return 1;
  }
  std::cout << "OK: " << n << " keys sorted in " << report.levels.size() << " levels\n";
  return 0;
}
