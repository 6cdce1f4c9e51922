// kmeans — Lloyd's k-means (8 clusters) on 2D integer points, the whole clustering one loop tree:
// the clusters' sums and counts (a struct reduced by a user function) feed the same iteration's
// assignment (sinew::value), until no point changes cluster. Checked against the same iterations
// in C++ (common/kmeans.cpp): the same clusters for every point.
//
//   kmeans [--points N] [--max-iterations N] [--device I]
#include "common/cli.hpp"
#include "common/kmeans.hpp"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  std::size_t points = 1 << 20, max_iterations = 100;
  const std::size_t per_unit = 256;
  sinew::RunOptions options;
  const auto given = sinew::samples::cli::parse_numbers(
      argc, argv, "kmeans", "Lloyd's k-means (8 clusters) on 2D integer points, one loop tree",
      {{"points", "the points (rounded up to a multiple of 256)", "1048576"},
       {"max-iterations", "at most this many iterations", "100"},
       {"device", "the device index to run on", "the runtime's default"}});
  if (given.count("points")) points = static_cast<std::size_t>(given.at("points"));
  if (given.count("max-iterations")) max_iterations = static_cast<std::size_t>(given.at("max-iterations"));
  if (given.count("device")) options.device = static_cast<std::size_t>(given.at("device"));
  if (points == 0 || max_iterations == 0) {
    std::cerr << "kmeans: at least one point and one iteration\n";
    return 2;
  }
  points = (points + per_unit - 1) / per_unit * per_unit;
  try {
    const auto xy = sinew::samples::kmeans_points(points, 7);
    auto labels = sinew::samples::kmeans_first_labels(points);
    std::size_t reference_iterations = 0;
    const auto want = sinew::samples::reference_kmeans(xy, labels, max_iterations, reference_iterations);
    sinew::Runtime rt;
    sinew::samples::KMeans kmeans(per_unit, max_iterations);
    const auto o = kmeans.run(rt, xy, labels, options);
    const bool ok = labels == want && o.iterations == reference_iterations;
    std::cout << points << " points: " << o.iterations << " iterations (reference: " << reference_iterations << "), "
              << o.report.wall_ms / static_cast<double>(o.iterations) << " ms per iteration\n"
              << "result: " << (ok ? "OK" : "WRONG") << "\n";
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "kmeans: " << e.what() << "\n";
    return 2;
  }
}
