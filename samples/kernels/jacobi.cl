// jacobi.cl — one Jacobi sweep of the 2D heat equation, written as a new user writes it: the
// sweep reads the whole grid (sinew::whole: replicated to every device) instead of a halo, and
// writes its slice's rows. The same physics as heat.cl (every edge of the plate held at `wall`),
// so samples/common/reference.hpp's heat() checks it. bench_loop runs it against the same kernel
// written by hand in OpenCL (bench/handwritten), and test/pocl/loop_copies_test.cpp counts what
// the executor copies per iteration.
//
// The grid is n x n floats, partitioned by rows (a unit is one row). One work-group per row: each
// work-item updates the columns x = lid, lid + L, ... and keeps the largest |unew - u| it wrote;
// the group reduces those to the row's one partial (a tree: the group size is a power of two).

// u:       the whole grid (n * n floats); unew: the slice's new rows; rowdiff: max |unew - u| per row
// scratch: one float per work-item of the group
// first:   the slice's first element in the grid (sinew::offset(unew)): its first row is first / n
__kernel void jacobi_sweep(__global const float* u, __global float* unew, __global float* rowdiff,
                           __local float* scratch, uint first, uint n, float alpha, float wall) {
  const uint lid = (uint)get_local_id(0), width = (uint)get_local_size(0), r = (uint)get_global_id(1);
  const uint y = first / n + r;
  const __global float* c = u + (size_t)y * n;
  __global float* o = unew + (size_t)r * n;
  float change = 0.0f;
  for (uint x = lid; x < n; x += width) {
    const float up = y > 0 ? c[(int)x - (int)n] : wall;
    const float down = y + 1 < n ? c[x + n] : wall;
    const float left = x > 0 ? c[x - 1] : wall;
    const float right = x + 1 < n ? c[x + 1] : wall;
    const float here = c[x];
    const float next = here + alpha * ((up + down) + (left + right) - 4.0f * here);
    o[x] = next;
    change = fmax(change, fabs(next - here));
  }
  scratch[lid] = change;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = width / 2; step > 0; step /= 2) {
    if (lid < step) scratch[lid] = fmax(scratch[lid], scratch[lid + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) rowdiff[r] = scratch[0];
}
