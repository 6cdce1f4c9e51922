// cg.cl — conjugate gradient on a sparse matrix in CSR, rows partitioned over the devices; the
// matrix (row_start, columns, values) and the search direction p are read whole by the product.
// One iteration: ap = A p; (p.ap, r.r) as one float2 reduction; x += alpha p, r -= alpha ap with
// alpha = r.r / p.ap, and the new r.r reduced; p = r + beta p with beta = new r.r / r.r. The
// reductions' results reach the later kernels as one-element buffers (sinew::value), so on one
// device the iteration never waits for the host.

// ap = A p over this partition's rows: `first` is its first row, `rows` how many it has.
__kernel void cg_spmv(__global const int* row_start, __global const int* columns, __global const float* values,
                      __global const float* p, __global float* ap, uint first, uint rows) {
  const uint i = get_global_id(0);
  if (i >= rows) return;
  const uint row = first + i;
  float sum = 0.0f;
  for (int k = row_start[row]; k < row_start[row + 1]; ++k) sum += values[k] * p[columns[k]];
  ap[i] = sum;
}

// The terms of p.ap and r.r, reduced together.
__kernel void cg_dots(__global const float* p, __global const float* ap, __global const float* r,
                      __global float2* terms) {
  const uint i = get_global_id(0);
  terms[i] = (float2)(p[i] * ap[i], r[i] * r[i]);
}

// x += alpha p, r -= alpha ap, alpha = r.r / p.ap (dots = (p.ap, r.r)); the new r's squares.
__kernel void cg_update_xr(__global float* x, __global float* r, __global const float* p,
                           __global const float* ap, __global float* squares, __global const float2* dots) {
  const uint i = get_global_id(0);
  const float alpha = dots[0].y / dots[0].x;
  x[i] += alpha * p[i];
  const float ri = r[i] - alpha * ap[i];
  r[i] = ri;
  squares[i] = ri * ri;
}

// p = r + beta p, beta = new r.r / old r.r.
__kernel void cg_update_p(__global float* p, __global const float* r, __global const float* rr,
                          __global const float2* dots) {
  const uint i = get_global_id(0);
  p[i] = r[i] + rr[0] / dots[0].y * p[i];
}
