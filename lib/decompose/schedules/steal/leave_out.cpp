// decompose/schedules/steal/leave_out.cpp — which device the runs of one steal plan leave out (see
// leave_out.hpp).
#include "decompose/schedules/steal/leave_out.hpp"

#include <algorithm>

namespace sinew::detail {
namespace {

double least(const std::vector<double>& ms) { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }

}  // namespace

double LeaveOut::kept_best_ms() const { return least(kept_ms_); }

void LeaveOut::ran(const Settings& s, std::optional<std::size_t> left_out, const std::vector<double>& parts,
                   double ms) {
  const std::size_t runs = std::max<std::size_t>(1, s.runs);
  if (trying_ && left_out == trial_) {
    trial_ms_.push_back(ms);
    if (!kept_ms_.empty() && ms > *std::max_element(kept_ms_.begin(), kept_ms_.end())) end_trial(s, false);
    else if (trial_ms_.size() >= runs) end_trial(s, least(trial_ms_) < kept_best_ms());
    return;
  }
  if (left_out != kept_) return;  // a run of a way neither kept nor tried now (runs of the plan overlapped)
  kept_ms_.push_back(ms);
  if (kept_ms_.size() > runs) kept_ms_.erase(kept_ms_.begin());
  ++since_trial_;
  if (!trying_ && kept_ms_.size() >= runs && since_trial_ >= std::max(wait_, runs)) begin_trial(s, parts);
}

void LeaveOut::begin_trial(const Settings& s, const std::vector<double>& parts) {
  since_trial_ = 0;
  if (kept_) {  // the way with every device, again
    trial_.reset();
    trying_ = true;
    return;
  }
  if (!(s.part > 0)) return;
  // The device that ran the least part, among at least two that ran any.
  std::optional<std::size_t> minor;
  std::size_t working = 0;
  for (std::size_t d = 0; d < parts.size(); ++d) {
    if (!(parts[d] > 0)) continue;
    ++working;
    if (!minor || parts[d] < parts[*minor]) minor = d;
  }
  if (working < 2 || !(parts[*minor] < s.part)) return;
  trial_ = minor;
  trying_ = true;
}

void LeaveOut::end_trial(const Settings& s, bool trial_wins) {
  const std::size_t runs = std::max<std::size_t>(1, s.runs);
  trying_ = false;
  if (trial_wins) {
    other_best_ms_ = kept_best_ms();
    kept_ = trial_;
    kept_ms_ = trial_ms_;
    wait_ = runs;
  } else {
    other_best_ms_ = least(trial_ms_);
    wait_ = std::min(std::max(s.interval, runs), 2 * std::max(wait_, runs));
  }
  trial_ms_.clear();
  since_trial_ = 0;
}

}  // namespace sinew::detail
