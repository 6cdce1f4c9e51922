// samples/common/pagerank.hpp — PageRank by power iteration on a synthetic power-law graph (CSR of
// in-links) as one loop tree (samples/kernels/pagerank.cl): the dangling nodes' rank mass, a
// reduction, feeds the same iteration's update through sinew::value, and the loop stops once the
// ranks change by less than the tolerance in L1. Shared by the pagerank sample and its tests.
//
// Lifetime and threads: a PageRank owns its tree and handles, not the host data; one run at a time.
#pragma once

#include <sinew/sinew.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sinew::samples {

// A directed graph as CSR of in-links: node i's sources are sources[in_start[i], in_start[i+1]).
struct Graph {
  std::size_t nodes = 0;
  std::vector<cl_int> in_start, sources;
  std::vector<cl_uint> out_degree;
};
// `nodes` nodes with power-law out-degrees (about a tenth without out-links), links drawn towards
// low-numbered nodes, so that in-degrees follow a power law too.
Graph power_law_graph(std::size_t nodes, std::uint64_t seed);

class PageRank {
 public:
  PageRank(float damping, float tolerance, std::size_t max_iterations);
  struct Outcome {
    Report report;
    std::size_t iterations = 0;
    float change = 0;  // the last iteration's L1 change
  };
  // ranks: resized to the graph's nodes, starting at 1/n.
  Outcome run(Runtime& rt, const Graph& g, std::vector<cl_float>& ranks, const RunOptions& options = {});
  const Node& tree() const { return tree_; }
  // The bindings of one run (what run() runs: ranks resized to the graph's nodes, starting at
  // 1/n), pointing into `g`, `ranks` and this object; for callers that submit the run themselves
  // (the sample registry).
  std::vector<Binding> bind(const Graph& g, std::vector<cl_float>& ranks);

 private:
  Vector<cl_int> in_start_, sources_;
  Vector<cl_uint> out_degree_;
  Vector<cl_float> rank_, next_, mass_, change_;
  Result<cl_float> dangling_, total_change_;
  cl_float last_change_ = 0;
  Node tree_;
};

// The L1 difference accepted between float ranks after `iterations` iterations stopped at
// `tolerance` and the double reference: the two may stop an iteration apart (each changing the
// ranks by less than the tolerance), and float rounds every rank in every iteration (the ranks
// sum to 1), with a margin.
double pagerank_accepted_difference(double tolerance, std::size_t iterations);
// The same iterations in double; `iterations` the count.
std::vector<double> reference_pagerank(const Graph& g, double damping, double tolerance, std::size_t max_iterations,
                                       std::size_t& iterations);

}  // namespace sinew::samples
