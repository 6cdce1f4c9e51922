// argmax.cl — a user reduction for sinew::reduce::custom (used by 04_map_reduce_custom).
//
// A (value, index) pair reduces to the larger value; equal values keep the lower index, so the
// function is associative and commutative and the result does not depend on how the runtime
// partitions and combines the data. Identity: (-INFINITY, FLT_MAX). Indices are exact as float
// up to 2^24 elements.
float2 argmax_pair(float2 a, float2 b) {
  if (a.x > b.x) return a;
  if (b.x > a.x) return b;
  return a.y <= b.y ? a : b;
}
