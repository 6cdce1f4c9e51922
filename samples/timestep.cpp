// timestep — a time-stepping application over resident arrays (Runtime::array): two trees with
// different units run alternately over positions and velocities that stay on the devices, the
// host choosing each step's time step from a reduction's value and writing new velocities into a
// range every few steps (samples/common/timestep.hpp). Prints what moved between the host and the
// devices after the first step; --check compares the arrays with the same steps in C++.
//
//   timestep [--oscillators N] [--steps N] [--device I] [--check 0|1]
#include "common/cli.hpp"
#include "common/timestep.hpp"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  sinew::samples::TimeStepSettings s;
  sinew::RunOptions options;
  bool check = true;
  const auto given = sinew::samples::cli::parse_numbers(
      argc, argv, "timestep", "two trees alternating over resident arrays, the host choosing each time step",
      {{"oscillators", "the oscillators", std::to_string(s.oscillators)},
       {"steps", "time steps", std::to_string(s.steps)},
       {"device", "the device index to run on", "the runtime's default"},
       {"check", "1: compare with the same steps in C++; 0: do not", "1"}});
  if (given.count("oscillators")) s.oscillators = static_cast<std::size_t>(given.at("oscillators"));
  if (given.count("steps")) s.steps = static_cast<std::size_t>(given.at("steps"));
  if (given.count("device")) options.device = static_cast<std::size_t>(given.at("device"));
  if (given.count("check")) check = given.at("check") != 0;
  try {
    sinew::Runtime rt;
    sinew::samples::TimeStep timestep;
    const auto o = timestep.run(rt, s, options);
    std::cout << s.oscillators << " oscillators, " << s.steps << " steps (" << o.short_steps
              << " short): " << o.wall_ms / static_cast<double>(s.steps) << " ms per step; after the first step "
              << o.moved_bytes << " bytes moved between the host and the devices, of which the host wrote "
              << o.written_bytes << "\n";
    if (!check) return 0;
    const auto want = sinew::samples::reference_timestep(s);
    const bool ok = o.x == want.x && o.v == want.v && o.short_steps == want.short_steps;
    std::cout << "result: " << (ok ? "OK" : "WRONG") << "\n";
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "timestep: " << e.what() << "\n";
    return 2;
  }
}
