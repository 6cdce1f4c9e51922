// reduce.cl — the reduction behind map_reduce. The runtime prepends the definitions of
// SINEW_T (the element type) and SINEW_OP(a, b) (sum, min, max or the user's function).
// Each work-group folds a grid-stride share of `in` and writes one value per group to `out`;
// run again with a single group over those values, it yields the slice's result. The identity
// comes in a buffer, not by value: kernel arguments may be as small as 1 KiB in all, and a
// struct element (a 64-bin histogram is 256 bytes) may be larger than that.
__kernel void sinew_reduce(__global const SINEW_T* in, uint n, __global SINEW_T* out,
                           __local SINEW_T* scratch, __global const SINEW_T* identity) {
  const uint lid = get_local_id(0);
  SINEW_T acc = *identity;
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) acc = SINEW_OP(acc, in[i]);
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = SINEW_OP(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
