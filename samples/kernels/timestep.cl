// timestep.cl — the time-stepping sample's kernels (samples/common/timestep.hpp): oscillators in
// fixed point, integers throughout, so that every device and the host reference agree exactly.

// The velocities take a step of the springs' force; each oscillator's speed (in 1/256 of a
// velocity unit) for the host's choice of the next time step.
__kernel void timestep_kick(__global const int* x, __global int* v, __global int* speed, int stiffness) {
  size_t i = get_global_id(0);
  int next = v[i] - x[i] * stiffness / 1024;
  v[i] = next;
  speed[i] = (int)abs(next) / 256;
}

// The positions move by dt sixteenths of the velocities; run over blocks of 64 oscillators.
__kernel void timestep_drift(__global int* x, __global const int* v, int dt) {
  size_t i = get_global_id(0);
  x[i] += v[i] * dt / 16;
}
