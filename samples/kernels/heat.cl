// heat.cl — one Jacobi sweep of the 2D heat equation (the heat sample's loop body).
//
// The grid is n x n floats, partitioned by rows (a unit is one row of n floats). `u` is read with
// sinew::halo(u, 1, 1, wall): the kernel gets a pointer to the row above its slice, so the
// slice's row y is row y + 1 of `u`, and rows 0 and count + 1 are its neighbours' (or, at the
// grid's top and bottom edges, rows of the wall temperature). The left and right edges are the
// same wall, given as `wall`: every edge of the plate is held at one fixed temperature.
//
// One work-group per row: each work-item updates the columns x = lid, lid + L, ... (neighbouring
// work-items read neighbouring floats) and keeps the largest |unew - u| it wrote; the group then
// reduces those to the row's one partial, which the tree's map_reduce reduces with reduce::max.

// u:       the slice's rows with one halo row above and one below ((rows + 2) * n floats)
// unew:    the slice's new rows; rowdiff: max |unew - u| per row of the slice
// scratch: one float per work-item of the group
__kernel void heat_sweep(__global const float* u, __global float* unew, __global float* rowdiff,
                         __local float* scratch, uint n, float alpha, float wall) {
  const uint lid = (uint)get_local_id(0), width = (uint)get_local_size(0), y = (uint)get_global_id(1);
  const __global float* c = u + (size_t)(y + 1) * n;  // this row; c - n and c + n are its neighbours
  __global float* o = unew + (size_t)y * n;
  float change = 0.0f;
  for (uint x = lid; x < n; x += width) {
    const float left = x > 0 ? c[x - 1] : wall;
    const float right = x + 1 < n ? c[x + 1] : wall;
    const float here = c[x];
    const float next = here + alpha * ((c[(int)x - (int)n] + c[x + n]) + (left + right) - 4.0f * here);
    o[x] = next;
    change = fmax(change, fabs(next - here));
  }
  scratch[lid] = change;
  barrier(CLK_LOCAL_MEM_FENCE);
  // A tree over the group (its size is a power of two: see samples/common/heat.cpp).
  for (uint step = width / 2; step > 0; step /= 2) {
    if (lid < step) scratch[lid] = fmax(scratch[lid], scratch[lid + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) rowdiff[y] = scratch[0];
}
