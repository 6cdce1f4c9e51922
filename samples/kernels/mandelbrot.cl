// mandelbrot.cl — the mandelbrot sample's one kernel: escape-time iteration counts of a side x
// side image partitioned by rows (a unit is one row of `side` pixels), over a view whose upper
// half holds the set: rows there iterate up to max_iter times, rows below escape at once, so the
// cost of a row depends on where it is (irregular work for the dynamic schedule, issue 18).
//
// Floating point contraction is off, so every step rounds as the C++ reference's float
// arithmetic does (samples/common/reference.cpp) and the counts match it exactly.
#pragma OPENCL FP_CONTRACT OFF

// `first_pixel`: sinew::offset of the output, the slice's first pixel in the whole image.
__kernel void mandelbrot(__global uint* iterations, uint side, uint first_pixel, uint max_iter, float re0,
                         float im0, float step) {
  const uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
  const uint row = first_pixel / side + y;
  const float cr = re0 + step * (float)x, ci = im0 + step * (float)row;
  float zr = 0.0f, zi = 0.0f;
  uint n = 0;
  while (n < max_iter) {
    const float zr2 = zr * zr, zi2 = zi * zi;
    if (zr2 + zi2 > 4.0f) break;
    const float t = zr2 - zi2 + cr;
    zi = 2.0f * zr * zi + ci;
    zr = t;
    ++n;
  }
  iterations[(size_t)y * side + x] = n;
}
