// samples/common/timestep.hpp — a time-stepping application over resident arrays
// (Runtime::array): oscillators whose positions and velocities stay on the devices while two
// different trees run alternately — `kick` (a map_reduce over single oscillators: velocities, and
// the total speed) and `drift` (a map over blocks of 64: positions) — with a host decision between
// steps: the time step of the next drift from the kick's total speed (a reduction's value, read
// from the Report, no array brought home), and, every few steps, new velocities written by the
// host into a range of the array (only that range moves back to the devices). Integers
// throughout, so the reference (the same steps in C++) agrees exactly. Shared by the timestep
// sample and its tests.
//
// Lifetime and threads: a TimeStep owns its trees and handles, not the arrays; one run at a time.
#pragma once

#include <sinew/sinew.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sinew::samples {

struct TimeStepSettings {
  std::size_t oscillators = 1 << 20;  // a multiple of 64 (drift's unit)
  std::size_t steps = 100;
  cl_int stiffness = 64;               // the springs' force, in 1/1024
  cl_int fast = 3;                     // a mean speed (1/256 units) above which the step is short
  cl_int short_step = 1, long_step = 4;  // drift's time steps, in 1/16
  std::size_t write_every = 16;        // the host writes velocities every this many steps (0: never)
  std::size_t write_count = 4096;      // that many oscillators' velocities
};

// The starting positions (in [-4096, 4096]) and velocities (0).
void timestep_start(const TimeStepSettings& s, std::vector<cl_int>& x, std::vector<cl_int>& v);
// The velocities the host writes at `step`: [first, first + count) set to `values`.
struct HostWrite {
  std::size_t first = 0;
  std::vector<cl_int> values;
};
HostWrite timestep_host_write(const TimeStepSettings& s, std::size_t step);

class TimeStep {
 public:
  TimeStep();
  struct Outcome {
    std::vector<cl_int> x, v;          // the arrays' contents at the end
    std::size_t short_steps = 0;       // steps the host chose the short time step for
    std::uint64_t moved_bytes = 0;     // between the host and the devices after the first step
    std::uint64_t written_bytes = 0;   // of those, what the host wrote
    double wall_ms = 0;                // every step's runs
  };
  Outcome run(Runtime& rt, const TimeStepSettings& s, const RunOptions& options = {});

 private:
  Vector<cl_int> x_, v_, speed_, blocks_x_, blocks_v_;
  Result<cl_int> total_speed_;
};

// The same steps and decisions in C++.
TimeStep::Outcome reference_timestep(const TimeStepSettings& s);

}  // namespace sinew::samples
