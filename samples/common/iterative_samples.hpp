// samples/common/iterative_samples.hpp — the iterative samples (cg, kmeans, pagerank) as registry
// descriptors (sample.hpp), so that training, the benchmarks and `sinew train` run them by name.
// Each wraps the sample body the sample program uses (cg.hpp, kmeans.hpp, pagerank.hpp) with the
// program's default parameters, and checks a run against the body's C++ reference, computed on
// the first check after prepare() and kept.
//
// Lifetime and threads: as every Sample (sample.hpp).
#pragma once

#include "common/cg.hpp"
#include "common/descriptors.hpp"
#include "common/kmeans.hpp"
#include "common/pagerank.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace sinew::samples {

// Conjugate gradient on the 2D Poisson matrix of a side x side grid, one loop tree until
// |r| <= tolerance * |b|. Checked by the true residual |b - Ax| / |b| (cg_accepted_residual).
class Cg final : public SampleBase {
 public:
  float tolerance = 1e-5f;
  std::size_t max_iterations = 5000;

  std::string name() const override { return "cg"; }
  std::string description() const override;
  std::string size_unit() const override { return "grid side: N for an N x N grid, N^2 rows"; }
  Sizes sizes() const override { return {64, 512, 1024}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override;
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  std::size_t side_ = 0;
  CsrMatrix matrix_;
  std::vector<cl_float> b_, x_;
  std::unique_ptr<ConjugateGradient> solver_;
};

// Lloyd's k-means (8 clusters) on 2D integer points, one loop tree until no point changes
// cluster. Checked bit-exactly against reference_kmeans's labels.
class Kmeans final : public SampleBase {
 public:
  static constexpr std::size_t kPerUnit = 256;  // points per work-item unit, as the sample program's
  std::size_t max_iterations = 100;

  std::string name() const override { return "kmeans"; }
  std::string description() const override;
  std::string size_unit() const override { return "points (rounded up to a multiple of 256)"; }
  Sizes sizes() const override { return {1 << 14, 1 << 20, 1 << 24}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override;
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  std::vector<cl_int2> points_;
  std::vector<cl_uint> first_labels_, labels_;
  std::optional<std::vector<cl_uint>> reference_;
  std::unique_ptr<KMeans> body_;
};

// PageRank by power iteration on a synthetic power-law graph, one loop tree until the ranks change
// by less than the tolerance in L1. Checked by the L1 difference from reference_pagerank.
class Pagerank final : public SampleBase {
 public:
  float damping = 0.85f, tolerance = 1e-6f;
  std::size_t max_iterations = 100;

  std::string name() const override { return "pagerank"; }
  std::string description() const override;
  std::string size_unit() const override { return "graph nodes"; }
  Sizes sizes() const override { return {1 << 14, 1 << 20, 1 << 23}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override;
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  Graph graph_;
  std::vector<cl_float> ranks_;
  std::optional<std::vector<double>> reference_;
  std::size_t reference_iterations_ = 0;
  std::unique_ptr<PageRank> body_;
};

}  // namespace sinew::samples
