// timestep — a time-stepping application over resident arrays (Runtime::array): two trees with
// different units run alternately over positions and velocities that stay on the devices, the
// host choosing each step's time step from a reduction's value and writing new velocities into a
// range every few steps (samples/common/timestep.hpp). Prints what moved between the host and the
// devices after the first step; --check compares the arrays with the same steps in C++.
//
//   timestep [--oscillators N] [--steps N] [--device I] [--check 0|1]
#include "common/timestep.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  sinew::samples::TimeStepSettings s;
  sinew::RunOptions options;
  bool check = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    char* end = nullptr;
    const double v = std::strtod(argv[i + 1], &end);
    if (*end || !(v >= 0)) {
      std::cerr << "timestep: " << flag << " takes a non-negative number, not '" << argv[i + 1] << "'\n";
      return 2;
    }
    if (flag == "--oscillators") s.oscillators = static_cast<std::size_t>(v);
    else if (flag == "--steps") s.steps = static_cast<std::size_t>(v);
    else if (flag == "--device") options.device = static_cast<std::size_t>(v);
    else if (flag == "--check") check = v != 0;
    else {
      std::cerr << "timestep: unknown flag " << flag << " (--oscillators, --steps, --device, --check)\n";
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << "timestep: every flag takes a value\n";
    return 2;
  }
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
