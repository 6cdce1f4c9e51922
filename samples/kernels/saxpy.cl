// saxpy.cl — the Saxpy benchmark's kernel: y = a*x + y in single precision.
//
// Computed with fma (correctly rounded in OpenCL C), so a host reference using std::fma matches
// bit for bit; samples/common/saxpy.cpp still accepts a few ulps so that the CLBlast variant
// (which may round a*x first) is judged by the same check.
__kernel void saxpy(__global const float* x, __global float* y, float a, uint count) {
  uint i = (uint)get_global_id(0);
  if (i >= count) return;
  y[i] = fma(a, x[i], y[i]);
}
