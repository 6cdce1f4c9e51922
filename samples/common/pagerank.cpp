// samples/common/pagerank.cpp — PageRank as one loop tree (see pagerank.hpp).
#include "common/pagerank.hpp"

#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>

namespace sinew::samples {

Graph power_law_graph(std::size_t nodes, std::uint64_t seed) {
  if (nodes < 2) throw std::invalid_argument("pagerank: at least two nodes");
  reference::Random random(seed);
  std::vector<std::vector<cl_int>> in(nodes);
  Graph g;
  g.nodes = nodes;
  g.out_degree.assign(nodes, 0);
  for (std::size_t u = 0; u < nodes; ++u) {
    const double p = random.uniform(0.0f, 1.0f);
    if (p < 0.1) continue;  // dangling
    const auto degree = static_cast<std::size_t>(std::min(1000.0, std::floor(2.0 / std::pow(p, 1.0 / 1.5))));
    for (std::size_t k = 0; k < degree; ++k) {
      const double t = random.uniform(0.0f, 1.0f);
      const auto v = std::min(nodes - 1, static_cast<std::size_t>(static_cast<double>(nodes) * t * t * t));
      if (v == u) continue;
      in[v].push_back(static_cast<cl_int>(u));
      ++g.out_degree[u];
    }
  }
  g.in_start.reserve(nodes + 1);
  g.in_start.push_back(0);
  for (const auto& sources : in) {
    g.sources.insert(g.sources.end(), sources.begin(), sources.end());
    g.in_start.push_back(static_cast<cl_int>(g.sources.size()));
  }
  return g;
}

PageRank::PageRank(float damping, float tolerance, std::size_t max_iterations) {
  if (!(damping > 0 && damping < 1) || !(tolerance >= 0) || max_iterations == 0)
    throw std::invalid_argument("pagerank: a damping in (0, 1), a tolerance >= 0 and at least one iteration");
  in_start_ = sinew::vector<cl_int>().name("in_start");
  sources_ = sinew::vector<cl_int>().name("sources");
  out_degree_ = sinew::vector<cl_uint>().name("out_degree");
  rank_ = sinew::vector<cl_float>().name("rank");
  next_ = sinew::vector<cl_float>().name("next");
  mass_ = sinew::vector<cl_float>().name("mass");
  change_ = sinew::vector<cl_float>().name("change");
  dangling_ = sinew::result<cl_float>("dangling");
  total_change_ = sinew::result<cl_float>("change");
  auto dangling = map_reduce(kernel("pagerank.cl", "pagerank_dangling").args(in(rank_), in(out_degree_), out(mass_)),
                             reduce::sum(mass_, dangling_));
  auto update = map_reduce(kernel("pagerank.cl", "pagerank_update")
                               .args(whole(in_start_), whole(sources_), whole(rank_), whole(out_degree_), out(next_),
                                     out(change_), value(dangling_), offset(next_), count(next_), size(rank_),
                                     scalar(damping)),
                           reduce::sum(change_, total_change_));
  tree_ = loop(pipeline(dangling, update, copy(next_, rank_)))
              .times(max_iterations)
              .until(total_change_, [tolerance](cl_float change) { return change < tolerance; })
              .name("pagerank");
}

PageRank::Outcome PageRank::run(Runtime& rt, const Graph& g, std::vector<cl_float>& ranks, const RunOptions& options) {
  Outcome o;
  o.report = rt.run(tree_, bind(g, ranks), options).get();
  o.iterations = o.report.iterations;
  o.change = last_change_;
  return o;
}

std::vector<Binding> PageRank::bind(const Graph& g, std::vector<cl_float>& ranks) {
  ranks.assign(g.nodes, 1.0f / static_cast<float>(g.nodes));
  return {Binding(in_start_, g.in_start), Binding(sources_, g.sources), Binding(out_degree_, g.out_degree),
          Binding(rank_, ranks), Binding(total_change_, &last_change_)};
}

double pagerank_accepted_difference(double tolerance, std::size_t iterations) {
  return 2 * tolerance + 4 * static_cast<double>(FLT_EPSILON) * static_cast<double>(iterations + 1);
}

std::vector<double> reference_pagerank(const Graph& g, double damping, double tolerance, std::size_t max_iterations,
                                       std::size_t& iterations) {
  const auto n = static_cast<double>(g.nodes);
  std::vector<double> rank(g.nodes, 1.0 / n), next(g.nodes);
  for (iterations = 0; iterations < max_iterations;) {
    double dangling = 0;
    for (std::size_t i = 0; i < g.nodes; ++i)
      if (g.out_degree[i] == 0) dangling += rank[i];
    double change = 0;
    for (std::size_t i = 0; i < g.nodes; ++i) {
      double sum = 0;
      for (auto k = g.in_start[i]; k < g.in_start[i + 1]; ++k) sum += rank[g.sources[k]] / g.out_degree[g.sources[k]];
      next[i] = (1 - damping) / n + damping * (sum + dangling / n);
      change += std::fabs(next[i] - rank[i]);
    }
    rank.swap(next);
    ++iterations;
    if (change < tolerance) break;
  }
  return rank;
}

}  // namespace sinew::samples
