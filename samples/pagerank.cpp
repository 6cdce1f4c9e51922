// pagerank — PageRank by power iteration on a synthetic power-law graph (CSR of in-links), the
// whole computation one loop tree: the dangling nodes' rank mass, a reduction, feeds the same
// iteration's update (sinew::value), until the ranks change by less than the tolerance in L1.
// Checked against the same iterations in double (common/pagerank.cpp).
//
//   pagerank [--nodes N] [--tolerance X] [--max-iterations N] [--device I]
#include "common/cli.hpp"
#include "common/pagerank.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  std::size_t nodes = 1 << 20, max_iterations = 100;
  float tolerance = 1e-6f;
  const float damping = 0.85f;
  sinew::RunOptions options;
  const auto given = sinew::samples::cli::parse_numbers(
      argc, argv, "pagerank", "PageRank by power iteration on a synthetic power-law graph, one loop tree",
      {{"nodes", "the graph's nodes", "1048576"},
       {"tolerance", "stop once the ranks change by less than this in L1", "1e-6"},
       {"max-iterations", "at most this many iterations", "100"},
       {"device", "the device index to run on", "the runtime's default"}});
  if (given.count("nodes")) nodes = static_cast<std::size_t>(given.at("nodes"));
  if (given.count("tolerance")) tolerance = static_cast<float>(given.at("tolerance"));
  if (given.count("max-iterations")) max_iterations = static_cast<std::size_t>(given.at("max-iterations"));
  if (given.count("device")) options.device = static_cast<std::size_t>(given.at("device"));
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
