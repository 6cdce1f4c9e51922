// pagerank — PageRank by power iteration on a synthetic power-law graph (CSR of in-links), the
// whole computation one loop tree: the dangling nodes' rank mass, a reduction, feeds the same
// iteration's update (sinew::value), until the ranks change by less than the tolerance in L1.
// Checked against the same iterations in double (common/pagerank.cpp).
//
//   pagerank [--nodes N] [--tolerance X] [--max-iterations N] [--device I]
#include "common/pagerank.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  std::size_t nodes = 1 << 20, max_iterations = 100;
  float tolerance = 1e-6f;
  const float damping = 0.85f;
  sinew::RunOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    char* end = nullptr;
    const double v = std::strtod(argv[i + 1], &end);
    if (*end || !(v >= 0)) {
      std::cerr << "pagerank: " << flag << " takes a non-negative number, not '" << argv[i + 1] << "'\n";
      return 2;
    }
    if (flag == "--nodes") nodes = static_cast<std::size_t>(v);
    else if (flag == "--tolerance") tolerance = static_cast<float>(v);
    else if (flag == "--max-iterations") max_iterations = static_cast<std::size_t>(v);
    else if (flag == "--device") options.device = static_cast<std::size_t>(v);
    else {
      std::cerr << "pagerank: unknown flag " << flag << " (--nodes, --tolerance, --max-iterations, --device)\n";
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << "pagerank: every flag takes a value\n";
    return 2;
  }
  try {
    const auto g = sinew::samples::power_law_graph(nodes, 11);
    std::size_t reference_iterations = 0;
    const auto want = sinew::samples::reference_pagerank(g, damping, tolerance, max_iterations, reference_iterations);
    sinew::Runtime rt;
    sinew::samples::PageRank pagerank(damping, tolerance, max_iterations);
    std::vector<cl_float> ranks;
    const auto o = pagerank.run(rt, g, ranks, options);
    double difference = 0;
    for (std::size_t i = 0; i < nodes; ++i) difference += std::fabs(ranks[i] - want[i]);
    const std::size_t apart = std::max(o.iterations, reference_iterations) - std::min(o.iterations, reference_iterations);
    // Float ranks against double: the L1 difference within a few tolerances and float's rounding.
    const bool ok = difference <= sinew::samples::pagerank_accepted_difference(tolerance, o.iterations) && apart <= 2;
    std::cout << nodes << " nodes, " << g.sources.size() << " links: " << o.iterations << " iterations (reference: "
              << reference_iterations << "), L1 difference from the reference " << difference << ", "
              << o.report.wall_ms / static_cast<double>(std::max<std::size_t>(1, o.iterations)) << " ms per iteration\n"
              << "result: " << (ok ? "OK" : "WRONG") << "\n";
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "pagerank: " << e.what() << "\n";
    return 2;
  }
}
