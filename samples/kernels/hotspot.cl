// hotspot.cl — one time step of the thermal simulation of a chip (Rodinia's HotSpot, one grid cell
// per work-item), written for the whole grid as the benchmark suites write it: the cell's global
// row and column, boundary tests on them (an edge cell's missing neighbour is the cell itself),
// neighbours at global positions. Sinew runs it unchanged with Kernel::global_indices(): each
// partition is launched at its global offset and `temp` is addressed in whole-grid coordinates,
// its halo rows at their natural place.
__kernel void hotspot_step(__global const float* temp, __global const float* power, __global float* result,
                           uint rows, uint cols, float step_div_cap, float rx_inv, float ry_inv, float rz_inv,
                           float amb) {
  uint c = get_global_id(0), r = get_global_id(1);
  uint i = r * cols + c;
  float t = temp[i];
  float n = r == 0 ? t : temp[i - cols];
  float s = r == rows - 1 ? t : temp[i + cols];
  float w = c == 0 ? t : temp[i - 1];
  float e = c == cols - 1 ? t : temp[i + 1];
  result[i] = t + step_div_cap * (power[i] + (s + n - 2.0f * t) * ry_inv + (e + w - 2.0f * t) * rx_inv +
                                  (amb - t) * rz_inv);
}
