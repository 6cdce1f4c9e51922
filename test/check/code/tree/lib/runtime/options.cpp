// runtime/options.cpp — the one reader of the environment.
#include <cstdlib>
#include <string>

namespace fake {

std::string devices() {
  const char* v = std::getenv("SINEW_DEVICES");
  return v ? v : "all";
}

}  // namespace fake
