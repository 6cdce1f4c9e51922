// schedule/train_even_split.cpp — the even-split trainer (the spec's "50/50"): shares moved
// between device groups in proportion to their measured rates until they finish together.
#include "schedule/train_search.hpp"

#include <cmath>

namespace sinew::detail {

// Each step starts from the best point so far; a step that made things worse halves the next one.
Config even_split_search(PlanSearch& s, Config c) {
  if (s.groups().size() < 2) {
    s.measure(c);
    return c;
  }
  const double precision = s.options().precision;
  double damping = 1.0;
  TrainingPoint best{c, 1e300, {}};
  for (unsigned step = 0; step < s.tuning().even_split_steps; ++step) {
    const TrainingPoint* measured = s.measure(c);
    if (!measured) return best.config;
    const TrainingPoint p = *measured;
    if (p.time_ms < best.time_ms) {
      best = p;
    } else if (p.time_ms > best.time_ms * (1 + precision)) {
      damping *= 0.5;
    }
    if (s.balanced(best)) break;
    auto next = rebalance(s.devices(), best.config.shares, best.device_ms, damping);
    double change = 0;
    for (std::size_t d = 0; d < next.size(); ++d) change = std::max(change, std::fabs(next[d] - best.config.shares[d]));
    if (change < precision / 4) break;
    c.shares = next;
  }
  return best.config;
}

namespace {

class EvenSplitTrainer final : public SearchTrainer {
 public:
  std::string_view name() const override { return "even_split"; }
  Config distribute(PlanSearch& s, const Config& at) const override { return even_split_search(s, at); }
};

}  // namespace

std::unique_ptr<const Trainer> even_split_trainer() { return std::make_unique<EvenSplitTrainer>(); }

}  // namespace sinew::detail
