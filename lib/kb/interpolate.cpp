// kb/interpolate.cpp — deriving a plan for unseen inputs from the entries of the same key:
// nearest neighbour (the spec's method) and inverse-distance weighting of shares.
#include <sinew/error.hpp>
#include <sinew/kb.hpp>

#include "kb/features.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinew {

namespace {

struct Candidate {
  const KbEntry* entry;
  double distance;
};

// The usable entries (those with every query feature, for data where the query's lies) and their
// normalised Euclidean distance to the query, nearest first; ties: the more recently updated
// entry, then the later one.
std::vector<Candidate> rank(const std::vector<KbEntry>& known, const KbFeatures& query) {
  const std::size_t dims = query.size();
  std::vector<const KbEntry*> usable;
  std::vector<std::vector<double>> points;
  for (const auto& e : known) {
    if (!detail::kb::same_residency(e.features, query)) continue;
    std::vector<double> p(dims);
    bool complete = true;
    for (std::size_t d = 0; d < dims && complete; ++d) {
      auto it = std::find_if(e.features.begin(), e.features.end(),
                             [&](const auto& f) { return f.first == query[d].first; });
      if (it == e.features.end() || !std::isfinite(it->second)) complete = false;
      else p[d] = it->second;
    }
    if (!complete || e.config.shares.empty()) continue;
    usable.push_back(&e);
    points.push_back(std::move(p));
  }

  // Each dimension's range over the usable entries and the query: a feature measured in bytes
  // must not outweigh one counted in iterations.
  std::vector<double> low(dims), high(dims);
  for (std::size_t d = 0; d < dims; ++d) {
    low[d] = high[d] = query[d].second;
    for (const auto& p : points) {
      low[d] = std::min(low[d], p[d]);
      high[d] = std::max(high[d], p[d]);
    }
  }

  std::vector<Candidate> out;
  for (std::size_t i = 0; i < usable.size(); ++i) {
    double sum = 0;
    for (std::size_t d = 0; d < dims; ++d) {
      double range = high[d] - low[d];
      if (range <= 0) continue;  // every value equal: this dimension tells nothing apart
      double delta = (points[i][d] - query[d].second) / range;
      sum += delta * delta;
    }
    out.push_back({usable[i], std::sqrt(sum)});
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    if (a.entry->updated != b.entry->updated) return a.entry->updated > b.entry->updated;
    return a.entry->id > b.entry->id;
  });
  return out;
}

}  // namespace

std::optional<Derived> NearestNeighbour::derive(const std::vector<KbEntry>& known, const KbFeatures& features) const {
  auto ranked = rank(known, features);
  if (ranked.empty()) return std::nullopt;
  const auto& best = ranked.front();
  return Derived{best.entry->config, best.entry->id, best.distance, name()};
}

std::optional<Derived> InverseDistance::derive(const std::vector<KbEntry>& known, const KbFeatures& features) const {
  auto ranked = rank(known, features);
  if (ranked.empty()) return std::nullopt;
  const auto& nearest = ranked.front();
  Derived out{nearest.entry->config, nearest.entry->id, nearest.distance, name()};
  if (nearest.distance == 0) return out;  // these very features: nothing to interpolate

  const std::size_t devices = nearest.entry->config.shares.size();
  std::vector<double> shares(devices, 0.0);
  double total_weight = 0;
  std::size_t used = 0;
  for (const auto& c : ranked) {
    if (used == std::max<std::size_t>(k_, 1)) break;
    if (c.entry->config.shares.size() != devices) continue;
    double w = 1.0 / std::pow(c.distance, power_);
    if (!std::isfinite(w)) continue;
    for (std::size_t d = 0; d < devices; ++d) shares[d] += w * c.entry->config.shares[d];
    total_weight += w;
    ++used;
  }
  double sum = 0;
  for (double& s : shares) sum += (s /= total_weight);
  if (!(sum > 0) || !std::isfinite(sum)) return out;
  for (double& s : shares) s /= sum;
  out.config.shares = std::move(shares);
  return out;
}

std::unique_ptr<Interpolator> make_interpolator(Interpolation kind) {
  if (kind == Interpolation::inverse_distance) return std::make_unique<InverseDistance>();
  // cost_model: the nearest input's plan is its source, and its plan where the runs fit no line
  // (the planner fits them: schedule/derive.hpp).
  return std::make_unique<NearestNeighbour>();
}

}  // namespace sinew
