// schedule/plan.cpp — comments that state invariants, and words that look like run ids but are
// not: the fission levels L1 to L4, uint4 and float4 vectors, int2, a factor x2, b64 text, the
// mask 0x1f, the vector "v0" and v12, u8 and i32 widths, a device named "gpu:0 NVIDIA H100"
// (an example in quotes), `t1 - t0` (code in backticks), C++20, -O3, x86-64, p99, cl kernels.
#include "tree/nodes/loop.hpp"

#include <cstdlib>

namespace fake::detail {

// Each unit is planned once: the shares add up to the units (docs/decisions/007).
int plan(const NodeImpl& n) {
  int units = n.units();
  return units;
}

class Planner {
 public:
  Planner() : units_{1}, rounds_(2) {}
  int units() const { return units_ * rounds_; }

 private:
  int units_;
  int rounds_;
};

}  // namespace fake::detail
