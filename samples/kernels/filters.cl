// filters.cl — the Filter Pipeline benchmark's three image filters on RGBA (uchar4) pixels.
//
// Every filter treats one image line as independent of the others, so an image partitioned in
// whole lines (vector unit = image width) gives the same pixels whatever the partitioning.
// Integer-only arithmetic: the C++ reference in samples/common/reference.cpp reproduces every
// pixel bit-exactly. Each kernel receives the slice's element count and ignores work-items past
// it, so a runtime that rounds the range up to a work-group multiple stays correct.

// A 32-bit integer hash (Chris Wellons' "lowbias32"): good avalanche, cheap, and exact on every
// device and on the host.
uint sinew_hash32(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Approximately normal noise with standard deviation `factor`: the four bytes of a hash are four
// uniform variables whose sum (Irwin-Hall, mean 510, sd 147.8) is close to a Gaussian.
// `key` identifies (pixel, channel, seed); integer division truncates toward zero as in C++.
int sinew_noise(uint key, int factor) {
  uint h = sinew_hash32(key);
  int sum = (int)(h & 0xffU) + (int)((h >> 8) & 0xffU) + (int)((h >> 16) & 0xffU) + (int)(h >> 24);
  return ((sum - 510) * factor) / 148;
}

uchar sinew_add_noise(uchar v, uint pixel, uint channel, uint seed, int factor) {
  uint key = pixel * 3U + channel + seed * 0x9e3779b9U;
  return (uchar)clamp((int)v + sinew_noise(key, factor), 0, 255);
}

// Adds Gaussian-like noise of standard deviation `factor` to the R, G and B channels (alpha is
// kept). Two pixels per work-item (run with elements_per_thread(2)). The noise depends on the
// pixel's index in the whole image (`first` = offset of the slice), never on the partitioning.
__kernel void gaussian_noise(__global uchar4* img, int factor, uint seed, uint first, uint count) {
  uint i = (uint)get_global_id(0) * 2U;
  for (uint k = 0; k < 2U; ++k) {
    uint local_index = i + k;
    if (local_index >= count) return;
    uint pixel = first + local_index;
    uchar4 p = img[local_index];
    p.x = sinew_add_noise(p.x, pixel, 0U, seed, factor);
    p.y = sinew_add_noise(p.y, pixel, 1U, seed, factor);
    p.z = sinew_add_noise(p.z, pixel, 2U, seed, factor);
    img[local_index] = p;
  }
}

// Solarisation: every R, G, B value at or above `threshold` is inverted (255 - v); alpha kept.
__kernel void solarise(__global uchar4* img, int threshold, uint count) {
  uint i = (uint)get_global_id(0);
  if (i >= count) return;
  uchar4 p = img[i];
  int4 v = convert_int4(p);
  int4 inverted = (int4)(255) - v;
  int4 r = select(v, inverted, v >= (int4)(threshold));
  r.w = v.w;
  img[i] = convert_uchar4(r);
}

// Horizontal mirror of every line, in place. Run with dims(2) and elements_per_thread(2): the
// range is (width/2, lines of the slice); work-item (x, y) swaps pixels x and width-1-x of line y
// of the slice. `width` must be even (a line is a whole number of pixel pairs).
__kernel void mirror(__global uchar4* img, uint width, uint count) {
  uint x = (uint)get_global_id(0);
  uint y = (uint)get_global_id(1);
  if (x >= width / 2U || (y + 1U) * width > count) return;
  __global uchar4* line = img + (size_t)y * width;
  uchar4 a = line[x];
  uchar4 b = line[width - 1U - x];
  line[x] = b;
  line[width - 1U - x] = a;
}
