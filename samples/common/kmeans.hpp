// samples/common/kmeans.hpp — Lloyd's k-means on 2D integer points as one loop tree
// (samples/kernels/kmeans.cl): per iteration the clusters' sums and counts (a struct reduced by a
// user function) feed the same iteration's assignment through sinew::value, and the loop stops
// once no point changes cluster. Shared by the kmeans sample and its tests.
//
// Lifetime and threads: a KMeans owns its tree and handles, not the host data; one run at a time.
#pragma once

#include <sinew/sinew.hpp>

#include <cstddef>
#include <vector>

namespace sinew::samples {

inline constexpr int kKMeansClusters = 8;  // KMEANS_K in kmeans.cl

// The clusters' integer sums and counts, as kmeans.cl's kmeans_stats.
struct KMeansStats {
  cl_int sum_x[kKMeansClusters];
  cl_int sum_y[kKMeansClusters];
  cl_int count[kKMeansClusters];
};

class KMeans {
 public:
  // Points come in units of `per_unit` (one work-item each); at most `max_iterations` iterations.
  KMeans(std::size_t per_unit, std::size_t max_iterations);

  struct Outcome {
    Report report;
    std::size_t iterations = 0;
  };
  // Clusters `points` (a multiple of per_unit) starting from `labels` (point i in cluster
  // labels[i] < 8), which it overwrites with the final clusters.
  Outcome run(Runtime& rt, const std::vector<cl_int2>& points, std::vector<cl_uint>& labels,
              const RunOptions& options = {});
  const Node& tree() const { return tree_; }
  // The bindings of one run (what run() runs), pointing into `points` and `labels`; for callers
  // that submit the run themselves (the sample registry).
  std::vector<Binding> bind(const std::vector<cl_int2>& points, std::vector<cl_uint>& labels) const;

 private:
  std::size_t per_unit_;
  Vector<cl_int2> points_;
  Vector<cl_uint> labels_, changed_;
  Vector<KMeansStats> stats_part_;
  Result<KMeansStats> stats_;
  Result<cl_uint> changes_;
  Node tree_;
};

// Points in a few blobs (coordinates in [0, 4096)), and the first labels: point i in cluster i % 8.
std::vector<cl_int2> kmeans_points(std::size_t n, std::uint64_t seed);
std::vector<cl_uint> kmeans_first_labels(std::size_t n);
// The reference: the same iterations in C++ (the same double arithmetic per point); `iterations`
// the count, the last one changing nothing (or max_iterations).
std::vector<cl_uint> reference_kmeans(const std::vector<cl_int2>& points, std::vector<cl_uint> labels,
                                      std::size_t max_iterations, std::size_t& iterations);

}  // namespace sinew::samples
