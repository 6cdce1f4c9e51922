// samples/common/iterative_samples.cpp — cg, kmeans and pagerank as registry descriptors (see
// iterative_samples.hpp).
#include "common/iterative_samples.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sinew::samples {

// ---- cg --------------------------------------------------------------------------------------

std::string Cg::description() const {
  return "conjugate gradient on the 2D Poisson matrix (CSR, SpMV reading p whole), the whole solve one loop "
         "tree; loop(pipeline(spmv, map_reduce, map_reduce, map)).until(|r| <= tol |b|)";
}

namespace {
std::size_t checked_side(std::size_t size, std::size_t standard) {
  const std::size_t side = size ? size : standard;
  if (side < 2 || side > 46340)
    throw std::invalid_argument("cg: the size is the grid's side, from 2 to 46340, not " + std::to_string(side));
  return side;
}
}  // namespace

std::uint64_t Cg::host_bytes(std::size_t size) const {
  // Per row: row_start, 5 columns and 5 values, b, x, r, p (floats), the reference's double.
  const std::size_t side = checked_side(size, sizes().standard);
  return saturating_product({side, side, 4 + 5 * 4 + 5 * 4 + 4 * 4 + 8});
}

void Cg::prepare(std::size_t size) {
  side_ = checked_side(size, sizes().standard);
  reset_state(side_);
  matrix_ = poisson_2d(side_);
  b_ = cg_right_hand_side(matrix_.rows);
  x_.assign(matrix_.rows, 0.0f);
  solver_ = std::make_unique<ConjugateGradient>(tolerance, max_iterations);
  tree_ = solver_->tree();
}

std::vector<Binding> Cg::bindings() {
  ran_ = true;
  return solver_->bind(matrix_, b_, x_);
}

std::size_t Cg::bytes() const {
  return (matrix_.row_start.size() + matrix_.columns.size()) * sizeof(cl_int) +
         (matrix_.values.size() + 2 * matrix_.rows) * sizeof(cl_float);
}

Check Cg::compare() {
  Check c;
  c.measure = "|b - Ax| / |b|, in double";
  c.tolerance = cg_accepted_residual(tolerance, side_);
  c.max_error = relative_residual(matrix_, b_, x_);
  c.ok = c.max_error <= c.tolerance;
  c.message = c.ok ? "OK" : "relative residual " + std::to_string(c.max_error) + " above " + std::to_string(c.tolerance);
  return c;
}

// ---- kmeans ----------------------------------------------------------------------------------

std::string Kmeans::description() const {
  return "Lloyd's k-means, 8 clusters on 2D integer points; loop(pipeline(map_reduce of a struct of sums and "
         "counts, map_reduce of the changes)).until(no point changes)";
}

namespace {
std::size_t kmeans_points_for(std::size_t size, std::size_t standard) {
  const std::size_t n = size ? size : standard;
  return (n + Kmeans::kPerUnit - 1) / Kmeans::kPerUnit * Kmeans::kPerUnit;
}
}  // namespace

std::uint64_t Kmeans::host_bytes(std::size_t size) const {
  // Per point: its coordinates, the first labels, the labels, the reference's labels.
  return saturating_product({kmeans_points_for(size, sizes().standard), sizeof(cl_int2) + 3 * sizeof(cl_uint)});
}

void Kmeans::prepare(std::size_t size) {
  const std::size_t n = kmeans_points_for(size, sizes().standard);
  reset_state(n);
  points_ = kmeans_points(n, 7);
  first_labels_ = kmeans_first_labels(n);
  labels_ = first_labels_;
  reference_.reset();
  body_ = std::make_unique<KMeans>(kPerUnit, max_iterations);
  tree_ = body_->tree();
}

std::vector<Binding> Kmeans::bindings() {
  labels_ = first_labels_;
  ran_ = true;
  return body_->bind(points_, labels_);
}

std::size_t Kmeans::bytes() const { return points_.size() * (sizeof(cl_int2) + sizeof(cl_uint)); }

Check Kmeans::compare() {
  if (!reference_) {
    std::size_t iterations = 0;
    reference_ = reference_kmeans(points_, first_labels_, max_iterations, iterations);
  }
  Check c;
  c.measure = "points labelled otherwise than the reference";
  std::size_t wrong = 0, first = labels_.size();
  for (std::size_t i = 0; i < labels_.size(); ++i)
    if (labels_[i] != (*reference_)[i] && wrong++ == 0) first = i;
  c.max_error = static_cast<double>(wrong);
  c.ok = wrong == 0;
  c.message = c.ok ? "OK"
                   : std::to_string(wrong) + " points differ, the first " + std::to_string(first) + ": cluster " +
                         std::to_string(labels_[first]) + ", expected " + std::to_string((*reference_)[first]);
  return c;
}

// ---- pagerank --------------------------------------------------------------------------------

std::string Pagerank::description() const {
  return "PageRank by power iteration on a synthetic power-law graph (CSR of in-links, read whole); "
         "loop(pipeline(map_reduce, map_reduce, copy)).until(L1 change < tol)";
}

namespace {
std::size_t pagerank_nodes_for(std::size_t size, std::size_t standard) {
  const std::size_t n = size ? size : standard;
  if (n < 2) throw std::invalid_argument("pagerank: the size is the graph's nodes, at least 2");
  return n;
}
}  // namespace

std::uint64_t Pagerank::host_bytes(std::size_t size) const {
  // Per node: in_start, out_degree, ranks, the reference's double, and about 4 in-links (the
  // generator's mean out-degree is about 3.2) held twice while the graph is built.
  return saturating_product({pagerank_nodes_for(size, sizes().standard), 3 * 4 + 8 + 2 * 4 * 4});
}

void Pagerank::prepare(std::size_t size) {
  const std::size_t n = pagerank_nodes_for(size, sizes().standard);
  reset_state(n);
  graph_ = power_law_graph(n, 11);
  ranks_.assign(n, 0.0f);
  reference_.reset();
  body_ = std::make_unique<PageRank>(damping, tolerance, max_iterations);
  tree_ = body_->tree();
}

std::vector<Binding> Pagerank::bindings() {
  ran_ = true;
  return body_->bind(graph_, ranks_);
}

std::size_t Pagerank::bytes() const {
  return (graph_.in_start.size() + graph_.sources.size() + graph_.out_degree.size() + ranks_.size()) * 4;
}

Check Pagerank::compare() {
  if (!reference_) reference_ = reference_pagerank(graph_, damping, tolerance, max_iterations, reference_iterations_);
  Check c;
  c.measure = "L1 difference of the ranks from the reference in double";
  for (std::size_t i = 0; i < ranks_.size(); ++i) c.max_error += std::fabs(ranks_[i] - (*reference_)[i]);
  // The run may stop up to two iterations from the reference (the sample program's check).
  c.tolerance = pagerank_accepted_difference(tolerance, reference_iterations_ + 2);
  c.ok = c.max_error <= c.tolerance;
  c.message = c.ok ? "OK" : "L1 difference " + std::to_string(c.max_error) + " above " + std::to_string(c.tolerance);
  return c;
}

}  // namespace sinew::samples
