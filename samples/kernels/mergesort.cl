// Mergesort for sinew::divide_and_conquer (SINEW_T: the key type, defined by the skeleton).
//
// sort_leaf: one work-group sorts one leaf (a power of two of keys, at most the device's local
// memory) with a bitonic network in __local memory; the last leaf of a part may be shorter, its
// missing keys stand in as SINEW_KEY_MAX (build option -DSINEW_KEY_MAX=..., UINT_MAX or INFINITY:
// they sort last and are never written back). Not stable, which keys alone cannot tell.
//
// merge_runs: a fully parallel k-way merge: each work-item takes one key of one run and counts,
// by binary search, the keys of the other runs of its group that precede it (those before its run
// when equal, so equal keys keep their run order), which is its rank in the merged run. Every
// level runs with one work-item per key, so the top levels (few long runs) are as parallel as
// the bottom ones.
#ifndef SINEW_KEY_MAX
#define SINEW_KEY_MAX UINT_MAX
#endif

__kernel void sort_leaf(__global SINEW_T* data, uint n, uint leaf_size, __local SINEW_T* keys) {
  const uint first = get_group_id(0) * leaf_size;
  const uint count = min(leaf_size, n - first);
  const uint lid = get_local_id(0), local_size = get_local_size(0);
  for (uint i = lid; i < leaf_size; i += local_size) keys[i] = i < count ? data[first + i] : (SINEW_T)SINEW_KEY_MAX;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 2; k <= leaf_size; k <<= 1) {
    for (uint j = k >> 1; j > 0; j >>= 1) {
      for (uint i = lid; i < leaf_size / 2; i += local_size) {
        // The i-th compare-exchange of this step: the pair (a, a + j), ascending where bit k of a is 0.
        const uint a = 2 * i - (i & (j - 1));
        const uint b = a + j;
        const SINEW_T x = keys[a], y = keys[b];
        const bool up = (a & k) == 0;
        if ((x > y) == up) {
          keys[a] = y;
          keys[b] = x;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  for (uint i = lid; i < count; i += local_size) data[first + i] = keys[i];
}

__kernel void merge_runs(__global const SINEW_T* src, __global SINEW_T* dst, uint n, uint run, uint fanout) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const ulong group_size = (ulong)run * fanout;
  const uint group = (uint)((i / group_size) * group_size);  // first key of the group
  const uint r = (i - group) / run;                            // the key's run in the group
  const SINEW_T x = src[i];
  uint rank = i - (group + r * run);
  for (uint q = 0; q < fanout; ++q) {
    const ulong a = group + (ulong)q * run;
    if (a >= n) break;
    if (q == r) continue;
    uint lo = (uint)a, hi = (uint)min(a + run, (ulong)n);
    const uint start = lo;
    if (q < r) {
      while (lo < hi) {  // keys <= x
        const uint m = lo + (hi - lo) / 2;
        if (src[m] <= x) lo = m + 1; else hi = m;
      }
    } else {
      while (lo < hi) {  // keys < x
        const uint m = lo + (hi - lo) / 2;
        if (src[m] < x) lo = m + 1; else hi = m;
      }
    }
    rank += lo - start;
  }
  dst[group + rank] = x;
}
