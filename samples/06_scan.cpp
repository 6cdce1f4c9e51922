// 06_scan — sinew::scan: a prefix combination over a whole vector split across the devices.
//
// Stream compaction: which elements of x pass a threshold, and where each kept element goes in
// the compacted array. A kernel flags the elements (1 or 0); an exclusive prefix sum of the
// flags gives each kept element its slot. Each device scans its slice; the slices' totals meet
// on the host (one value per partition), and each slice then gets the total of the slices
// before it added, so the slots are the same whatever the plan.
//
// The operator may be sum, min, max (scan_op::sum() ...) or any associative OpenCL C function
// with its identity, e.g. scan_op::custom_source<cl_int>("int f(int a, int b) {...}", "f", 0);
// it need not commute. scan(v, op, kind) scans in place; scan(in, out, op, kind) into a second
// vector. Run: 06_scan [device], or over the ranks of an MPI job: mpirun -np 3 06_scan --mpi (each
// rank's partitions then take the totals of the ranks before them).
#include <sinew/sinew.hpp>

#include "common/concept.hpp"  // sinew::samples::run_concept: [device] or --mpi
#include "common/kernels.hpp"  // sinew::samples::kernel: the samples' kernels, embedded

#include <cstdint>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t n = 1 << 20;
  const float threshold = 0.9f;
  std::vector<cl_float> hx(n);
  std::uint32_t state = 2026;
  for (auto& v : hx) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<cl_float>(state >> 8) / 16777216.0f;  // [0, 1)
  }
  const std::vector<cl_float>& input = hx;
  std::vector<cl_uint> keep(n), slot(n);

  auto x = sinew::vector<cl_float>().name("x");
  auto flags = sinew::vector<cl_uint>().name("keep");
  auto slots = sinew::vector<cl_uint>().name("slot");
  auto tree = sinew::pipeline(
      sinew::samples::kernel("compact.cl", "flag_above")
          .args(sinew::in(x), sinew::out(flags), sinew::scalar(threshold), sinew::count(x)),
      sinew::scan(flags, slots, sinew::scan_op::sum(), sinew::ScanKind::exclusive));
  std::cout << tree.dump();

  try {
    const auto ran = sinew::samples::run_concept(argc, argv, tree, {{x, input}, {flags, keep}, {slots, slot}});
    if (!ran.checks) return 0;
    std::cout << ran.report.str() << "\n";
  } catch (const sinew::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  // The compaction itself: each kept element to its slot.
  const std::size_t kept = slot.back() + keep.back();
  std::vector<cl_float> compacted(kept);
  for (std::size_t i = 0; i < n; ++i)
    if (keep[i]) compacted[slot[i]] = hx[i];

  // The same in plain C++.
  std::vector<cl_uint> want_keep(n), want_slot(n);
  for (std::size_t i = 0; i < n; ++i) want_keep[i] = hx[i] > threshold ? 1u : 0u;
  std::exclusive_scan(want_keep.begin(), want_keep.end(), want_slot.begin(), 0u);
  std::vector<cl_float> want;
  for (float v : hx)
    if (v > threshold) want.push_back(v);

  std::cout << kept << " of " << n << " elements above " << threshold << "\n";
  if (keep != want_keep || slot != want_slot || compacted != want) {
    std::cout << "result: MISMATCH with the C++ exclusive_scan\n";
    return 1;
  }
  std::cout << "result: OK\n";
  return 0;
}
