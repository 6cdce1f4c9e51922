// schedule/learned.cpp — the runtime's store of learned state: its key's order and its slots.
#include "schedule/learned.hpp"

#include "schedule/balancer.hpp"
#include "schedule/plan_cache.hpp"

#include <cmath>

namespace sinew::detail {

namespace {

// -1, 0, 1 as a is before, equal to or after b; NaN equals NaN and sorts after every number.
int compare(double a, double b) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan || b_nan) return a_nan == b_nan ? 0 : (a_nan ? 1 : -1);
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare(const KbFeatures& a, const KbFeatures& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (const int c = a[i].first.compare(b[i].first)) return c < 0 ? -1 : 1;
    if (const int c = compare(a[i].second, b[i].second)) return c;
  }
  return a.size() < b.size() ? -1 : (b.size() < a.size() ? 1 : 0);
}

}  // namespace

bool operator<(const LearnedKey& a, const LearnedKey& b) {
  if (const int c = a.tree.compare(b.tree)) return c < 0;
  if (const int c = compare(a.features, b.features)) return c < 0;
  return a.plan < b.plan;
}

PlanWatch::PlanWatch(std::unique_ptr<OnlineBalancer> b, std::string l)
    : balancer(std::move(b)), base(balancer->config()), label(std::move(l)) {}
PlanWatch::~PlanWatch() = default;

RankSplit::RankSplit(std::unique_ptr<OnlineBalancer> b) : balancer(std::move(b)) {}
RankSplit::~RankSplit() = default;

LearnedStore::LearnedStore() : plans_(std::make_unique<PlanCache>()) {}
LearnedStore::~LearnedStore() = default;

}  // namespace sinew::detail
