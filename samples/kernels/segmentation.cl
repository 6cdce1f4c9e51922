// segmentation.cl — the Segmentation benchmark: threshold segmentation of a 3D grey image.
//
// Every voxel becomes one of three classes: below `lo` -> 0, above `hi` -> 255, else 128. A unit
// of partitioning is one z-slice (width*height voxels); run with dims(3, width) and
// elements_per_thread(4): the range is (width/4, height, slices of the partition) and each
// work-item classifies 4 consecutive voxels of a row. `width` must be a multiple of 4.
// Integer only: bit-exact against the C++ reference.
__kernel void segmentation(__global const uchar* in, __global uchar* out, uchar lo, uchar hi, uint width,
                           uint height, uint count) {
  uint x = (uint)get_global_id(0) * 4U;
  uint y = (uint)get_global_id(1);
  uint z = (uint)get_global_id(2);
  if (x >= width || y >= height) return;
  size_t index = ((size_t)z * height + y) * width + x;
  if (index + 4U > (size_t)count) return;
  int4 v = convert_int4(vload4(0, in + index));
  int4 cls = select((int4)(128), (int4)(0), v < (int4)((int)lo));
  cls = select(cls, (int4)(255), v > (int4)((int)hi));
  vstore4(convert_uchar4(cls), 0, out + index);
}
