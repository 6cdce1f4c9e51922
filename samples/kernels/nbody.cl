// nbody.cl — one direct-sum step of the N-Body benchmark (the Loop skeleton's body).
//
// Every device reads all positions (replicated with sinew::whole) and advances only the bodies of
// its own slice, so the step writes new positions into a second vector; the tree copies them back
// (sinew::copy) before the next step. Single precision, softened gravity (G = 1), semi-implicit
// Euler: v += a*dt, then p += v*dt. Float results differ from the double-precision C++ reference
// by rounding only (rsqrt, operation order, contraction): see samples/common/nbody.cpp for the
// tolerance.

// pos:     all n bodies, xyz = position, w = mass (read whole)
// vel:     this slice's velocities, xyz used, w kept (read and written)
// new_pos: this slice's new positions (written), w = mass copied through
// first:   index of the slice's first body; count: bodies in the slice; n: bodies in total
// eps2:    softening length squared (> 0: a body's pull on itself is then exactly zero)
__kernel void nbody_step(__global const float4* pos, __global float4* vel, __global float4* new_pos,
                         uint first, uint count, uint n, float dt, float eps2) {
  uint i = (uint)get_global_id(0);
  if (i >= count) return;
  float4 p = pos[first + i];
  float3 a = (float3)(0.0f);
  for (uint j = 0; j < n; ++j) {
    float4 q = pos[j];
    float3 d = q.xyz - p.xyz;
    float inv = rsqrt(dot(d, d) + eps2);
    a += (q.w * inv * inv * inv) * d;
  }
  float4 v = vel[i];
  v.xyz += a * dt;
  p.xyz += v.xyz * dt;
  vel[i] = v;
  new_pos[i] = p;
}
