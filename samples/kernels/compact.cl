// compact.cl — the kernels of 06_scan (stream compaction with an exclusive prefix sum).

// keep[i] = 1 where x[i] passes the threshold, else 0.
__kernel void flag_above(__global const float* x, __global uint* keep, float threshold, uint count) {
  uint i = (uint)get_global_id(0);
  if (i < count) keep[i] = x[i] > threshold ? 1u : 0u;
}
