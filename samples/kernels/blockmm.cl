// blockmm.cl — the CPU variant of the block matrix product (samples/blockmm): C = A * B for a
// block of rows of A and C (row-major, B k x n whole), one BLOCK x BLOCK tile of C per
// work-group, built from BLOCK x BLOCK tiles of A and B staged in local memory. The GPU variant
// is CLBlast's gemm on the same block of rows. BLOCK comes from the build options (-D BLOCK=16)
// and must be the work-group's side; k and n are whole multiples of it.
#ifndef BLOCK
#define BLOCK 16
#endif

__kernel void block_gemm(__global const float* a, __global const float* b, __global float* c, uint k, uint n) {
  __local float a_tile[BLOCK][BLOCK];
  __local float b_tile[BLOCK][BLOCK];
  const size_t col = get_global_id(0), row = get_global_id(1);  // row within this block of rows
  const size_t lc = get_local_id(0), lr = get_local_id(1);
  float sum = 0.0f;
  for (uint t = 0; t < k; t += BLOCK) {
    a_tile[lr][lc] = a[row * k + t + lc];
    b_tile[lr][lc] = b[(t + lr) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < BLOCK; ++j) sum += a_tile[lr][j] * b_tile[j][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + col] = sum;
}
