// samples/common/kmeans.cpp — k-means as one loop tree (see kmeans.hpp).
#include "common/kmeans.hpp"

#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sinew::samples {

KMeans::KMeans(std::size_t per_unit, std::size_t max_iterations) : per_unit_(per_unit) {
  if (per_unit == 0 || max_iterations == 0) throw std::invalid_argument("kmeans: units of at least one point, one iteration");
  points_ = sinew::vector<cl_int2>().unit(per_unit).name("points");
  labels_ = sinew::vector<cl_uint>().unit(per_unit).name("labels");
  changed_ = sinew::vector<cl_uint>().name("changed");
  stats_part_ = sinew::vector<KMeansStats>().name("stats_part");
  stats_ = sinew::result<KMeansStats>("stats");
  changes_ = sinew::result<cl_uint>("changes");
  const auto per = static_cast<cl_uint>(per_unit);
  auto accumulate = kernel("kmeans.cl", "kmeans_accumulate")
                        .args(in(points_), in(labels_), out(stats_part_), scalar(per))
                        .range_of(stats_part_);
  const KMeansStats zero{};
  auto stats = map_reduce(accumulate, reduce::custom_source(stats_part_, stats_, kernel_text("kmeans.cl"), "add_stats",
                                                            zero, "kmeans.cl"));
  auto assign = kernel("kmeans.cl", "kmeans_assign")
                    .args(in(points_), inout(labels_), out(changed_), value(stats_), scalar(per))
                    .range_of(changed_);
  tree_ = loop(pipeline(stats, map_reduce(assign, reduce::sum(changed_, changes_))))
              .times(max_iterations)
              .until(changes_, [](cl_uint changes) { return changes == 0; })
              .name("kmeans");
}

KMeans::Outcome KMeans::run(Runtime& rt, const std::vector<cl_int2>& points, std::vector<cl_uint>& labels,
                            const RunOptions& options) {
  Outcome o;
  o.report = rt.run(tree_, bind(points, labels), options).get();
  o.iterations = o.report.iterations;
  return o;
}

std::vector<Binding> KMeans::bind(const std::vector<cl_int2>& points, std::vector<cl_uint>& labels) const {
  if (points.size() != labels.size() || points.size() % per_unit_)
    throw std::invalid_argument("kmeans: one label per point, and whole units of points");
  return {Binding(points_, points), Binding(labels_, labels)};
}

std::vector<cl_int2> kmeans_points(std::size_t n, std::uint64_t seed) {
  reference::Random random(seed);
  std::vector<cl_int2> centres(5);
  for (auto& c : centres) c = {{static_cast<cl_int>(random.uniform(500, 3500)), static_cast<cl_int>(random.uniform(500, 3500))}};
  std::vector<cl_int2> points(n);
  for (std::size_t i = 0; i < n; ++i) {
    const cl_int2& c = centres[i % centres.size()];
    points[i] = {{c.s[0] + static_cast<cl_int>(random.uniform(-500, 500)), c.s[1] + static_cast<cl_int>(random.uniform(-500, 500))}};
  }
  return points;
}

std::vector<cl_uint> kmeans_first_labels(std::size_t n) {
  std::vector<cl_uint> labels(n);
  for (std::size_t i = 0; i < n; ++i) labels[i] = static_cast<cl_uint>(i % kKMeansClusters);
  return labels;
}

std::vector<cl_uint> reference_kmeans(const std::vector<cl_int2>& points, std::vector<cl_uint> labels,
                                      std::size_t max_iterations, std::size_t& iterations) {
  for (iterations = 0; iterations < max_iterations;) {
    KMeansStats s{};
    for (std::size_t i = 0; i < points.size(); ++i) {
      s.sum_x[labels[i]] += points[i].s[0];
      s.sum_y[labels[i]] += points[i].s[1];
      s.count[labels[i]] += 1;
    }
    std::size_t changes = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      cl_uint best = labels[i];
      double best_distance = std::numeric_limits<double>::infinity();
      for (int c = 0; c < kKMeansClusters; ++c) {
        if (s.count[c] == 0) continue;
        const double dx = points[i].s[0] - static_cast<double>(s.sum_x[c]) / s.count[c];
        const double dy = points[i].s[1] - static_cast<double>(s.sum_y[c]) / s.count[c];
        const double d = dx * dx + dy * dy;  // as the kernel computes it (FP_CONTRACT OFF there)
        if (d < best_distance) {
          best_distance = d;
          best = static_cast<cl_uint>(c);
        }
      }
      changes += best != labels[i];
      labels[i] = best;
    }
    ++iterations;
    if (changes == 0) break;
  }
  return labels;
}

}  // namespace sinew::samples
