// Options: every setting is a RuntimeOptions field and a SINEW_* variable; what the program sets
// wins, the environment fills the rest, then the defaults. A bad value names its variable.
#include <sinew/sinew.hpp>

#include <iostream>

int main() {
  // As if the environment said SINEW_QUALITY=5 and SINEW_DEVICES=cpu (from_environment() reads
  // the real one; a Runtime does that itself).
  const sinew::RuntimeOptions environment =
      sinew::RuntimeOptions::from_variables({{"SINEW_QUALITY", "5"}, {"SINEW_DEVICES", "cpu"}});

  sinew::RuntimeOptions mine;
  mine.devices = "all";  // set by the program: wins over SINEW_DEVICES
  const sinew::RuntimeOptions in_force = mine.or_else(environment).with_defaults();
  std::cout << "devices " << *in_force.devices << ", quality " << *in_force.training.quality << ", strategy "
            << sinew::to_string(*in_force.training.strategy) << "\n";

  bool refused = false;
  try {
    sinew::RuntimeOptions::from_variables({{"SINEW_QUALITY", "lots"}});
  } catch (const sinew::Error& e) {
    refused = true;
    std::cout << "refused: " << e.message() << "\n";
  }

  // Every variable, what it accepts and its default (`sinew options` prints this table).
  for (const auto& variable : sinew::environment_variables())
    if (variable.name == "SINEW_KB") std::cout << variable.name << ": " << variable.effect << "\n";

  if (*in_force.devices != "all" || *in_force.training.quality != 5 || !refused) {
    std::cout << "UNEXPECTED\n";
    return 1;
  }
  std::cout << "OK\n";
  return 0;
}
