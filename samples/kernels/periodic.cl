// periodic.cl — a time step of diffusion on a ring of rows (periodic in y), in two kernels as a
// simulation code writes them: the stencil over the interior rows, then the ghost rows refreshed
// from the opposite edge. Both index the whole grid by global row.
//
// diffuse: interior rows 1 .. rows-2 from their neighbours; the ghost rows 0 and rows-1 are copied
// as they are (wrap() rewrites them).
__kernel void diffuse(__global const float* u, __global float* next, uint rows, uint cols, float k) {
  uint c = get_global_id(0), r = get_global_id(1);
  uint i = r * cols + c;
  if (r == 0 || r == rows - 1) { next[i] = u[i]; return; }
  float w = c == 0 ? u[i + cols - 1] : u[i - 1];
  float e = c == cols - 1 ? u[i + 1 - cols] : u[i + 1];
  next[i] = u[i] + k * (u[i - cols] + u[i + cols] + w + e - 4.0f * u[i]);
}
// wrap: ghost row 0 becomes interior row rows-2, ghost row rows-1 interior row 1. It writes rows
// that are not its own work-items' (row 0 from a work-item of row rows-2): it must run whole.
__kernel void wrap(__global float* u, uint rows, uint cols) {
  uint c = get_global_id(0), r = get_global_id(1);
  if (r == rows - 2) u[c] = u[r * cols + c];
  if (r == 1) u[(rows - 1) * cols + c] = u[cols + c];
}
