// schedule/balancer.cpp — the online two-level balancer (see balancer.hpp).
#include "schedule/balancer.hpp"

#include "platform/error.hpp"
#include "schedule/train.hpp"

#include <algorithm>
#include <cmath>

namespace sinew::detail {

namespace {

// Element-wise median of the device times of several runs.
std::vector<double> median_times(const std::deque<std::vector<double>>& runs) {
  std::vector<double> out(runs.front().size(), 0.0);
  std::vector<double> column;
  for (std::size_t d = 0; d < out.size(); ++d) {
    column.clear();
    for (const auto& r : runs) column.push_back(r[d]);
    std::sort(column.begin(), column.end());
    const std::size_t n = column.size();
    out[d] = n % 2 ? column[n / 2] : 0.5 * (column[n / 2 - 1] + column[n / 2]);
  }
  return out;
}

// Median of the slowest device's time per run: the run time as the devices see it.
double median_run_ms(const std::deque<std::vector<double>>& runs) {
  std::vector<double> t;
  for (const auto& r : runs) t.push_back(r.empty() ? 0.0 : *std::max_element(r.begin(), r.end()));
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

// Equal finish times from two measured points per device (t = a*share + b, SkePU's model): the
// shares that make every active device finish at the same time T. Empty when a device's two
// points do not give a usable line (same share, a non-positive slope, a share out of range).
std::vector<double> solve_linear(const Config& was, const std::vector<double>& was_ms, const Config& now,
                                 const std::vector<double>& now_ms) {
  const std::size_t n = now.shares.size();
  std::vector<double> a(n, 0.0), b(n, 0.0);
  double inv_a = 0, b_over_a = 0;
  for (std::size_t d = 0; d < n; ++d) {
    if (now.shares[d] <= 0) continue;
    const double ds = now.shares[d] - was.shares[d];
    if (was.shares[d] <= 0 || std::abs(ds) < 1e-6 || was_ms[d] <= 0 || now_ms[d] <= 0) return {};
    a[d] = (now_ms[d] - was_ms[d]) / ds;
    if (!(a[d] > 0)) return {};
    b[d] = now_ms[d] - a[d] * now.shares[d];
    inv_a += 1 / a[d];
    b_over_a += b[d] / a[d];
  }
  const double t = (1 + b_over_a) / inv_a;
  std::vector<double> shares(n, 0.0);
  for (std::size_t d = 0; d < n; ++d) {
    if (now.shares[d] <= 0) continue;
    shares[d] = (t - b[d]) / a[d];
    if (!(shares[d] > 0 && shares[d] < 1)) return {};
  }
  return shares;
}

}  // namespace

Balancer::Balancer(std::vector<DeviceInfo> devices, Config start, const BalancerSettings& settings)
    : devices_(std::move(devices)), config_(std::move(start)), s_(settings.with_defaults()) {
  if (config_.shares.size() != devices_.size())
    throw_error(errc::invalid_argument, "the plan to balance has " + std::to_string(config_.shares.size()) +
                                            " shares for " + std::to_string(devices_.size()) + " devices",
                {.argument = "Config::shares", .fix = "give one share per runtime device"});
}

double Balancer::deviation(const Config& c, const std::vector<double>& device_ms) {
  double lo = 0, hi = 0;
  int active = 0;
  for (std::size_t d = 0; d < c.shares.size() && d < device_ms.size(); ++d) {
    if (c.shares[d] <= 0 || device_ms[d] <= 0) continue;
    lo = active ? std::min(lo, device_ms[d]) : device_ms[d];
    hi = active ? std::max(hi, device_ms[d]) : device_ms[d];
    ++active;
  }
  return active < 2 ? 0.0 : 1.0 - lo / hi;
}

Config Balancer::level1(const std::vector<double>& device_ms) const {
  Config after = config_;
  // From the second move on, the points before and after the last move give each device's line.
  if (last_) after.shares = solve_linear(last_->first, last_->second, config_, device_ms);
  if (after.shares.empty() || !last_) after.shares = rebalance(devices_, config_.shares, device_ms);
  // Shares on a grid of 1%: a sliver (below half a percent) is not worth a device, and moves
  // that come back to a share they had before meet partition sizes the drivers have compiled for
  // already (PoCL builds a kernel for each new work-group size: hundreds of ms).
  double sum = 0;
  for (auto& v : after.shares) sum += (v = std::round(v * 100) / 100);
  if (sum > 0)
    for (auto& v : after.shares) v /= sum;
  return after;
}

bool Balancer::noisy() const {
  if (changes_.size() < 3) return true;  // not known yet: as if it were
  std::vector<double> c(changes_.begin(), changes_.end());
  std::nth_element(c.begin(), c.begin() + c.size() / 2, c.end());
  return c[c.size() / 2] > 0.5 * (1.0 - *s_.balanced_within);
}

void Balancer::begin_episode(double run_ms) {
  episode_.emplace(config_, run_ms);
  confirm_ = false;
}

BalanceEvent Balancer::move(int level, const Config& after, const std::vector<double>& device_ms, double deviation) {
  BalanceEvent e{.execution = executions_, .level = level, .before = config_, .after = after,
                 .device_ms = device_ms, .deviation = deviation, .lbt = lbt_};
  if (level == 1) {
    last_.emplace(config_, device_ms);
    std::vector<double> delta(after.shares.size(), 0.0);
    double dot = 0;
    for (std::size_t d = 0; d < delta.size() && d < config_.shares.size(); ++d) {
      delta[d] = after.shares[d] - config_.shares[d];
      if (d < last_delta_.size()) dot += delta[d] * last_delta_[d];
    }
    if (dot < 0) reversed_ = true;
    last_delta_ = std::move(delta);
  } else {
    last_.reset();
  }
  fresh_ = !(after == config_);
  last_ms_.clear();
  if (fresh_) {
    reference_ms_ = 0;
    reference_runs_.clear();
  }
  config_ = after;
  recent_.clear();  // times measured under the old plan say nothing about the new one
  return e;
}

BalanceEvent Balancer::level2(const std::vector<double>& device_ms, double deviation, const Retrain& retrain) {
  Config after = retrain ? retrain(config_) : config_;
  after.fission = config_.fission;
  after.overlap = config_.overlap;
  BalanceEvent e = move(2, after, device_ms, deviation);
  state_ = State::watching;
  lbt_ = 0;
  confirm_ = true;
  hold_ = backoff_;
  backoff_ = backoff_ ? std::min<std::size_t>(backoff_ * 2, 512) : 8;
  return e;
}

BalanceStep Balancer::observe(const std::vector<double>& device_ms, const Retrain& retrain) {
  BalanceStep step;
  step.execution = ++executions_;
  // A dynamic plan deals its work out while it runs, so each run balances itself: there is
  // nothing to move between runs (its devices' times are reported, never judged).
  if (config_.schedule == Schedule::dynamic) {
    step.deviation = deviation(config_, device_ms);
    return step;
  }
  const double bound = 1.0 - *s_.balanced_within;
  const double run_ms = device_ms.empty() ? 0.0 : *std::max_element(device_ms.begin(), device_ms.end());
  if (!fresh_) {
    recent_.push_back(device_ms);
    while (recent_.size() > *s_.window) recent_.pop_front();
    // How much a device's time changes from one run of the same plan to the next: the
    // balancer's own measure of the machine's noise.
    if (!last_ms_.empty())
      for (std::size_t d = 0; d < device_ms.size() && d < last_ms_.size(); ++d)
        if (device_ms[d] > 0 && last_ms_[d] > 0) changes_.push_back(std::abs(std::log(device_ms[d] / last_ms_[d])));
    while (changes_.size() > 16) changes_.pop_front();
    last_ms_ = device_ms;
  }
  // Judged on the element-wise median of the runs since the plan changed (at most `window`): on
  // a busy machine single device times swing by 30-50% from run to run, which says nothing
  // about the plan.
  const std::vector<double> judged = fresh_ ? device_ms : median_times(recent_);
  step.deviation = deviation(config_, judged);
  int active = 0;
  for (std::size_t d = 0; d < config_.shares.size() && d < device_ms.size(); ++d)
    active += config_.shares[d] > 0 && device_ms[d] > 0;
  const double judged_ms = judged.empty() ? 0.0 : *std::max_element(judged.begin(), judged.end());
  // A plan on one device has no partner to compare with: it is judged against its own time once
  // settled (the median of its first judged runs); a drift beyond twice the bound either way
  // means the machine changed (a load arrived or left), which only retraining can answer.
  auto judge = [&] {
    if (active >= 2) return step.deviation > bound + 1e-12;
    if (reference_ms_ <= 0) return false;
    // Twice the bound: one device's own time swings more than the gap between two devices that
    // wait on the same noise (a CPU device alone varied by +-15% run to run on the GPU machine);
    // a load that matters doubles it.
    const double keep = 1.0 - 2 * bound;
    return judged_ms * keep > reference_ms_ || judged_ms < reference_ms_ * keep;
  };
  if (fresh_) {
    // The first run of a new plan pays one-off costs (drivers such as PoCL compile a kernel for
    // each new partition size): it is reported, not judged.
    fresh_ = false;
    step.unbalanced = judge();
    step.lbt = lbt_;
    return step;
  }
  step.unbalanced = judge();
  lbt_ = (step.unbalanced ? *s_.weight : 0.0) + lbt_ * (1.0 - *s_.weight);
  step.lbt = lbt_;
  if (active < 2 && reference_ms_ <= 0) {
    reference_runs_.push_back(run_ms);
    if (reference_runs_.size() >= *s_.window) {
      std::vector<double> r = reference_runs_;
      std::sort(r.begin(), r.end());
      reference_ms_ = r[r.size() / 2];
    }
  }
  if (!step.unbalanced) backoff_ = 0;

  if (state_ == State::level1) {
    // On a noisy machine a move waits for `window` runs of the plan: their median, not one run.
    if (noisy() && recent_.size() < *s_.window) return step;
    // Level 1 aims at the middle of the allowed interval, not its edge, where noise would soon
    // push runs out again; within the interval but off the middle, it settles when its moves run out.
    const bool centred = step.deviation <= 0.5 * bound;
    if (!step.unbalanced && (centred || level1_moves_ >= *s_.level1_steps)) {  // converged: the plan holds
      state_ = State::watching;
      lbt_ = step.lbt = 0;
      step.settled = true;
      confirm_ = true;
    } else if (level1_moves_ < *s_.level1_steps && active >= 2) {
      ++level1_moves_;
      const std::vector<double> times = median_times(recent_);
      step.event = move(1, level1(times), times, step.deviation);
    } else if (active >= 2 && (step.deviation <= 2 * bound || reversed_)) {
      // Close, but noise keeps it from the interval: retraining (tens of runs) would cost more
      // than it could win. Or the moves went back and forth: the balanced distribution lies
      // between them and the device times swing by more than the gap (on the GPU machine a CPU
      // device's time varies by 30% from run to run); a load that moved the balance makes every
      // move point the same way. Settle; lbt decides again.
      state_ = State::watching;
      lbt_ = step.lbt = 0;
      step.settled = true;
      confirm_ = true;
    } else {
      // Level 1 did not converge: retrain the distribution at this fission/overlap.
      step.event = level2(device_ms, step.deviation, retrain);
      step.settled = true;
    }
    return step;
  }

  if (confirm_ && recent_.size() >= *s_.window) {
    // The episode's plan has its runs: it stays only if it is not slower than the plan it
    // replaced was when the episode began.
    confirm_ = false;
    const double now_ms = median_run_ms(recent_);
    if (episode_ && !(episode_->first == config_) && now_ms * (1.0 - bound) > episode_->second) {
      const Config back = episode_->first;
      episode_.reset();
      step.event = move(1, back, median_times(recent_), step.deviation);
      lbt_ = step.lbt = 0;
      step.settled = true;
      hold_ = backoff_;
      backoff_ = backoff_ ? std::min<std::size_t>(backoff_ * 2, 512) : 8;
      return step;
    }
    episode_.reset();
  }
  if (hold_ > 0) {
    --hold_;
    return step;
  }
  if (lbt_ >= *s_.trigger) {
    begin_episode(median_run_ms(recent_));
    if (active < 2) {  // nothing to move between: straight to level 2
      step.event = level2(device_ms, step.deviation, retrain);
      step.settled = true;
      return step;
    }
    state_ = State::level1;
    level1_moves_ = 1;
    last_.reset();  // a new episode: the load may have changed since the last moves
    last_delta_.clear();
    reversed_ = false;
    const std::vector<double> times = median_times(recent_);
    step.event = move(1, level1(times), times, step.deviation);
  }
  return step;
}

}  // namespace sinew::detail
