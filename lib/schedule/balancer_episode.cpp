// schedule/balancer_episode.cpp — an episode's confirmation and its must-pay check
// (schedule/balancer_episode.hpp).
#include "schedule/balancer_episode.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sinew::detail {

void Episode::begin(EpisodeOrigin origin, unsigned moves) {
  origin_ = std::move(origin);
  moves_ = moves;
  in_progress_ = true;
}

void Episode::begin_after_step(EpisodeOrigin origin, std::size_t young_until) {
  begin(std::move(origin), 0);
  young_until_ = young_until;
}

double Episode::least_gain(bool follow, double se, double log_bound, const BalancerTuning::Moves& tuning) const {
  // The first confirmation moves to the estimate whatever it says: a step's move was sized on a
  // few runs of the changed device, this one on twice as many, and the moved device's line now has
  // two shares.
  if (moves_ == 1) return 0.0;
  const double bound_part = tuning.confirm_bound_fraction * log_bound;
  return follow ? bound_part : std::max(bound_part, tuning.confirm_errors * se);
}

bool Episode::pays(double now_ms, double sigma, std::size_t runs, bool grows, const BalancerTuning& tuning) const {
  // Slower beyond the noise of two medians of a few runs, that is: the noise of the device that
  // bounds each plan's runs (a plan that finishes every device together pays the noisiest one's
  // in every run, which a few runs cannot tell from a plan a few percent slower). A plan that
  // grows onto a device the origin left idle must be faster, beyond no allowance: the origin's
  // devices were chosen as the fastest set, and a split whose extra device's fixed costs the
  // model cannot see yet (one share, no line) looks as good as equal finish times make it; kept
  // within the noise, it would move towards equal finish times, never back.
  const double se = tuning.watch.centre_efficiency * sigma * std::sqrt(2.0 / static_cast<double>(runs));
  return std::log(now_ms / origin_->ms) <= (grows ? 0.0 : tuning.moves.must_pay + tuning.moves.pay_errors * se);
}

void Episode::close(bool went_back, const BalancerTuning::Moves& tuning) {
  in_progress_ = false;
  origin_.reset();
  if (!went_back) {
    backoff_ = 0;
    return;
  }
  hold_ = backoff_;
  backoff_ = backoff_ ? std::min<std::size_t>(backoff_ * 2, tuning.last_backoff) : tuning.first_backoff;
}

}  // namespace sinew::detail
