// 04_map_reduce_custom — a map_reduce with a user-written reduction.
//
// The body pairs every value with its index in the whole vector (offset(x) is where this
// device's slice starts); the reducer is argmax_pair from samples/kernels/argmax.cl (its text
// given with reduce::custom_source; reduce::custom reads a file by path), an associative and
// commutative OpenCL C function float2 f(float2, float2), with its identity (-inf, FLT_MAX).
// Sinew builds the reduction kernels around it and combines the partitions' partial results with
// the same function, so the answer does not depend on the plan. Run: 04_map_reduce_custom [device | --mpi]
#include <sinew/sinew.hpp>

#include "common/concept.hpp"  // sinew::samples::run_concept: [device] or --mpi
#include "common/kernels.hpp"  // sinew::samples::kernel, kernel_text: the samples' kernels, embedded

#include <cfloat>
#include <cstdint>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t n = 1 << 20;
  std::vector<cl_float> hx(n);
  std::uint32_t state = 12345;
  for (auto& v : hx) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<cl_float>(state >> 8) / 16777216.0f;  // [0, 1)
  }
  hx[777777] = 2.0f;  // the maximum ...
  hx[999999] = 2.0f;  // ... twice: the lower index wins
  const std::vector<cl_float>& input = hx;

  auto x = sinew::vector<cl_float>().name("x");
  auto pairs = sinew::vector<cl_float2>().name("pairs");
  auto best = sinew::result<cl_float2>("argmax");
  auto tag = sinew::samples::kernel("concepts.cl", "argmax_pairs")
                 .args(sinew::in(x), sinew::out(pairs), sinew::offset(x), sinew::count(x));
  const cl_float2 identity = {{-INFINITY, FLT_MAX}};
  auto argmax = sinew::reduce::custom_source(pairs, best, sinew::samples::kernel_text("argmax.cl"), "argmax_pair",
                                             identity, "argmax.cl");
  auto tree = sinew::map_reduce(tag, argmax);
  std::cout << tree.dump();

  cl_float2 found{};
  try {
    sinew::RunOptions options;
    options.profile = true;  // the report below shows each kernel's device time
    const auto ran = sinew::samples::run_concept(argc, argv, tree, {{x, input}}, options);
    if (!ran.checks) return 0;
    std::cout << ran.report.str() << "\n";
    found = ran.report.value(best);  // over ranks: every rank's value combined
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  std::cout << "max " << found.s[0] << " at " << found.s[1] << "\n";
  if (found.s[0] != 2.0f || found.s[1] != 777777.0f) {
    std::cout << "result: MISMATCH expected max 2 at 777777\n";
    return 1;
  }
  std::cout << "result: OK\n";
  return 0;
}
