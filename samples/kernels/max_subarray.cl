// Maximum subarray sum (Bentley's problem, the divide-and-conquer example of CLRS ch. 4) for
// sinew::divide_and_conquer over float4 elements (SINEW_T): an element is the summary of a
// subarray, (sum, best prefix, best suffix, best), and element i starts as (x, x, x, x). A solved
// subproblem holds its summary in its first element; the others are left as they were.

float4 join(float4 a, float4 b) {
  return (float4)(a.x + b.x, fmax(a.y, a.x + b.y), fmax(b.z, b.x + a.z), fmax(fmax(a.w, b.w), a.z + b.y));
}

// One work-item per leaf folds its elements in order (a leaf is a few hundred elements).
__kernel void summarise_leaf(__global float4* data, uint n, uint leaf_size) {
  if (get_local_id(0) != 0) return;
  const uint first = get_group_id(0) * leaf_size, end = min(first + leaf_size, n);
  float4 s = data[first];
  for (uint i = first + 1; i < end; ++i) s = join(s, data[i]);
  data[first] = s;
}

// The first element of each group of `fanout` runs joins the runs' summaries in order; every
// other element is copied (the skeleton ping-pongs between two buffers: each must be whole).
__kernel void join_runs(__global const float4* src, __global float4* dst, uint n, uint run, uint fanout) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const ulong group = (ulong)run * fanout;
  if (i % group != 0) {
    dst[i] = src[i];
    return;
  }
  float4 s = src[i];
  for (ulong a = i + (ulong)run; a < n && a < i + group; a += run) s = join(s, src[a]);
  dst[i] = s;
}
