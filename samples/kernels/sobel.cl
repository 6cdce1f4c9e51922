// sobel.cl — the sobel sample's stages: blur -> Sobel -> threshold, on an 8-bit grey image
// partitioned by rows (a unit is one row of `width` pixels). Integer arithmetic throughout, so
// the results match the C++ reference (samples/common/reference.cpp) bit for bit.
//
// blur and sobel read their input with sinew::halo(v, 1, 1, Boundary::clamp): the pointer they
// get is the row above the slice, so the slice's row y is row y + 1, and above the image's top
// row (below its bottom row) stands a copy of that row. Columns are clamped here the same way.
// `blurred` is written by the blur stage on every device and read with a halo by the Sobel stage:
// the runtime moves just the rows next to each partition boundary between the devices.

// The 3x3 neighbourhood of (x, row) in rows of `width` pixels, columns clamped.
#define AT(r, dx) (int)(r)[clamp((int)x + (dx), 0, (int)width - 1)]

// 3x3 binomial blur, [1 2 1; 2 4 2; 1 2 1] / 16, rounded to nearest.
__kernel void blur(__global const uchar* in, __global uchar* out, uint width) {
  const uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
  const __global uchar* c = in + (size_t)(y + 1) * width;
  const __global uchar* up = c - width;
  const __global uchar* down = c + width;
  const int s = AT(up, -1) + 2 * AT(up, 0) + AT(up, 1) + 2 * AT(c, -1) + 4 * AT(c, 0) + 2 * AT(c, 1) +
                AT(down, -1) + 2 * AT(down, 0) + AT(down, 1);
  out[(size_t)y * width + x] = (uchar)((s + 8) / 16);
}

// Sobel gradient magnitude |gx| + |gy| (the L1 norm: integer, and monotone like the L2 one),
// saturated at 255.
__kernel void sobel(__global const uchar* in, __global uchar* magnitude, uint width) {
  const uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
  const __global uchar* c = in + (size_t)(y + 1) * width;
  const __global uchar* up = c - width;
  const __global uchar* down = c + width;
  const int gx = (AT(up, 1) + 2 * AT(c, 1) + AT(down, 1)) - (AT(up, -1) + 2 * AT(c, -1) + AT(down, -1));
  const int gy = (AT(down, -1) + 2 * AT(down, 0) + AT(down, 1)) - (AT(up, -1) + 2 * AT(up, 0) + AT(up, 1));
  magnitude[(size_t)y * width + x] = (uchar)min(abs(gx) + abs(gy), 255u);  // abs gives a uint
}

// edges = 255 where magnitude >= threshold, else 0; counts[y] = the edge pixels of row y (one
// work-item per row: the map_reduce sums the counts into the image's edge count).
__kernel void threshold(__global const uchar* magnitude, __global uchar* edges, __global uint* counts,
                        uint width, uint threshold, uint rows) {
  const uint y = (uint)get_global_id(0);
  if (y >= rows) return;
  uint count = 0;
  for (uint x = 0; x < width; ++x) {
    const uint edge = magnitude[(size_t)y * width + x] >= threshold;
    edges[(size_t)y * width + x] = edge ? 255 : 0;
    count += edge;
  }
  counts[y] = count;
}
#undef AT
