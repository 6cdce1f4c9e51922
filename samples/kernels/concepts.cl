// concepts.cl — kernels of the numbered concept samples (samples/01_... to 04_...).
//
// Small on purpose: each sample shows one idea of Sinew's API, not a computation. Every kernel
// gets its slice's element count and ignores work-items past it.

// 01_first_kernel: v = factor * v.
__kernel void scale(__global float* v, float factor, uint count) {
  uint i = (uint)get_global_id(0);
  if (i < count) v[i] *= factor;
}

// 02_pipeline, stage 1: t = x * x (t is a channel: it never leaves the device).
__kernel void square(__global const float* x, __global float* t, uint count) {
  uint i = (uint)get_global_id(0);
  if (i < count) t[i] = x[i] * x[i];
}

// 02_pipeline, stage 2: y = t + b.
__kernel void add_scalar(__global const float* t, __global float* y, float b, uint count) {
  uint i = (uint)get_global_id(0);
  if (i < count) y[i] = t[i] + b;
}

// 03_loop_until: one relaxation step. Halves x and writes |x| as this element's share of the
// residual; the map_reduce sums the shares, so the residual halves every iteration.
__kernel void halve(__global float* x, __global float* residual, uint count) {
  uint i = (uint)get_global_id(0);
  if (i >= count) return;
  float v = x[i] * 0.5f;
  x[i] = v;
  residual[i] = fabs(v);
}

// 04_map_reduce_custom: pairs each value with its index in the whole vector, for the argmax
// reducer of argmax.cl.
__kernel void argmax_pairs(__global const float* x, __global float2* pairs, uint first, uint count) {
  uint i = (uint)get_global_id(0);
  if (i < count) pairs[i] = (float2)(x[i], (float)(first + i));
}

// 05_halo: a 3-point stencil, y = (x[i-1] + 2 x[i] + x[i+1]) / 4 in integers. x is read with
// sinew::halo(x, 1, 1, ...): the pointer is one element ahead of the slice, so the slice's
// element i is x[i + 1] and its neighbours x[i] and x[i + 2] are always there.
__kernel void smooth3(__global const int* x, __global int* y, uint count) {
  uint i = (uint)get_global_id(0);
  if (i < count) y[i] = (x[i] + 2 * x[i + 1] + x[i + 2]) / 4;
}
