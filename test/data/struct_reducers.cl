// Struct reductions for the tests (reduce_types_test): a 64-bin histogram and an argmax pair,
// their reducers, and the kernels that make the partial values.
typedef struct { uint bins[64]; } hist;

hist hist_add(hist a, hist b) {
  for (int i = 0; i < 64; ++i) a.bins[i] += b.bins[i];
  return a;
}

typedef struct argmax { float value; uint index; } argmax;

// The larger value; of equal values the lower index, so the result does not depend on the split.
argmax argmax_pick(argmax a, argmax b) {
  if (a.value != b.value) return a.value > b.value ? a : b;
  return a.index <= b.index ? a : b;
}

// One partial histogram per row of `width` 8-bit pixels (bin = pixel / 4).
__kernel void row_hist(__global const uchar* img, __global hist* out, uint width) {
  const size_t r = get_global_id(0);
  hist h;
  for (int i = 0; i < 64; ++i) h.bins[i] = 0;
  for (uint x = 0; x < width; ++x) h.bins[img[r * width + x] >> 2]++;
  out[r] = h;
}

__kernel void tag(__global const float* x, __global argmax* out, uint off) {
  const size_t i = get_global_id(0);
  out[i].value = x[i];
  out[i].index = off + (uint)i;
}
