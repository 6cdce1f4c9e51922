// histogram.cl — the histogram sample: a 64-bin histogram of an 8-bit grey image as one
// map_reduce over a struct type.
//
// The partial histogram is a struct (the C++ side declares the same members: 64 cl_uint, 256
// bytes); the reducer adds two of them bin by bin. Sinew prepends this file to its reduction
// kernels, so the struct is known there, and reads its name from histogram_add's first parameter.
typedef struct { uint bins[64]; } histogram64;

// Associative and commutative, identity all zeros: the result does not depend on the split.
histogram64 histogram_add(histogram64 a, histogram64 b) {
  for (int i = 0; i < 64; ++i) a.bins[i] += b.bins[i];
  return a;
}

// One work-item per image row (the unit of partitioning): that row's histogram, bin = grey / 4.
__kernel void row_histogram(__global const uchar* image, __global histogram64* partial, uint width) {
  const size_t row = get_global_id(0);
  __global const uchar* p = image + row * width;
  histogram64 h;
  for (int i = 0; i < 64; ++i) h.bins[i] = 0;
  for (uint x = 0; x < width; ++x) h.bins[p[x] >> 2]++;
  partial[row] = h;
}
