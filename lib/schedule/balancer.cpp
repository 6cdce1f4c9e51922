// schedule/balancer.cpp — the online two-level balancer (see balancer.hpp): its moves. The
// devices' models, steps and regimes are schedule/balancer_regimes.cpp; the split the models
// predict best is schedule/split_model.cpp.
#include "schedule/balancer.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sinew::detail {

namespace {

// Standard errors (of the estimates: a slow-drift move, besides lbt's persistence; a confirming
// move) a difference must exceed (a load step's each run: Balancer::kZStep). The watch's was 3:
// on the GPU machine a loaded CPU (noise 0.5) has a standard error of 0.09 over its 48 runs, and
// three of them held a plan losing 20% for 60 runs (r1f, replayed as k15: 11% lost at 2.5, 20% at
// 3); the noise-only tests still see no move at 2.5.
constexpr double kZWatch = 2.5;
constexpr double kZConfirm = 1.0;
constexpr double kZPay = 2.0;  // a plan that ends an episode slower goes back
// A plan whose earliest device finishes within this fraction of the latest one's time (medians
// over the window) is moved towards the model's target (observe()).
constexpr double kLopsided = 0.5;
constexpr std::size_t kLopsidedRuns = 3;
constexpr double kLopsidedShare = 0.25;  // ... where that device's share is at most this (fixed costs dominate)

// `shares` with device d given `share` of the work, the others scaled down to make room.
std::vector<double> giving(std::vector<double> shares, std::size_t d, double share) {
  for (auto& v : shares) v *= 1 - share;
  shares[d] = share;
  return shares;
}

double slowest(const std::vector<double>& ms) { return ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()); }

}  // namespace

Balancer::Balancer(std::vector<DeviceInfo> devices, Config start, const BalancerSettings& settings)
    : devices_(std::move(devices)), config_(std::move(start)), s_(settings.with_defaults()) {
  if (config_.shares.size() != devices_.size())
    throw_error(errc::invalid_argument,
                "the plan to balance has " + std::to_string(config_.shares.size()) + " shares for " +
                    std::to_string(devices_.size()) + " devices",
                {.argument = "Config::shares", .fix = "give one share per runtime device"});
  regime_.resize(devices_.size());
  changes_.resize(devices_.size());
  past_.resize(devices_.size());
  start_ = config_.shares;
  fixed_.assign(devices_.size(), 0.0);
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

double Balancer::plan_ms(std::size_t last) const {
  std::vector<double> t;
  const std::size_t from = last && last < runs_.size() ? runs_.size() - last : 0;
  for (std::size_t i = from; i < runs_.size(); ++i) t.push_back(slowest(runs_[i]));
  return median_of(std::move(t));
}

std::size_t Balancer::slowest_device(std::size_t last) const {
  const std::size_t from = last && last < runs_.size() ? runs_.size() - last : 0;
  std::size_t out = 0;
  double worst = -1;
  for (std::size_t d = 0; d < config_.shares.size(); ++d) {
    std::vector<double> t;
    for (std::size_t i = from; i < runs_.size(); ++i) t.push_back(runs_[i][d]);
    if (const double m = median_of(std::move(t)); m > worst) worst = m, out = d;
  }
  return out;
}

Balancer::Gain Balancer::gain(bool idle_too) const {
  std::vector<DeviceRate> rates(devices_.size());
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (config_.shares[d] > 0 || idle_too) rates[d] = rate(d);
  Gain g;
  double then = 0;
  g.target = hedged_split(rates, &then);
  if (g.target.empty()) return g;
  // Expected times, as the target was chosen: the runs to come pay each device's noise too.
  const double now = g.target == config_.shares ? then : expected_ms(rates, config_.shares);
  if (!(now > 0) || std::isinf(now)) return g;
  // In log terms, like the rates' standard errors it is held against (1 - then/now cannot pass
  // kZWatch of them where the noise is large, however far off the plan is).
  g.gain = std::log(now / then);
  double var = 0;
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (config_.shares[d] > 0 || g.target[d] > 0) var += rates[d].se * rates[d].se;
  g.se = std::sqrt(var);
  return g;
}

void Balancer::backoff() {
  hold_ = backoff_;
  backoff_ = backoff_ ? std::min<std::size_t>(backoff_ * 2, 512) : 8;
}

BalanceEvent Balancer::move(int level, Config after, const std::vector<double>& device_ms, double deviation) {
  after.fission = config_.fission;  // a move never rebuilds programs
  after.overlap = config_.overlap;
  BalanceEvent e{.execution = executions_,
                 .level = level,
                 .before = config_,
                 .after = after,
                 .device_ms = device_ms,
                 .deviation = deviation,
                 .lbt = lbt_};
  fresh_ = !(after == config_);
  if (fresh_) recalled_.clear();  // they were the plan's before this one
  config_ = std::move(after);
  runs_.clear();  // run-to-run changes and steps are judged within one plan
  lbt_ = 0;
  lopsided_ = 0;
  return e;
}

BalanceStep Balancer::observe(const std::vector<double>& device_ms, const Retrain& retrain) {
  BalanceStep step;
  step.execution = ++executions_;
  // A dynamic plan deals its work out while it runs, so each run balances itself: there is
  // nothing to move between runs (its devices' times are reported, never judged).
  if (config_.schedule == "dynamic") {
    step.deviation = deviation(config_, device_ms);
    return step;
  }
  std::vector<double> ms(config_.shares.size(), 0.0);
  for (std::size_t d = 0; d < ms.size() && d < device_ms.size(); ++d) ms[d] = device_ms[d];
  if (fresh_) {
    // The first run of a new plan may pay one-off costs (drivers such as PoCL compile a kernel
    // for each new partition size): it is reported, not judged, and its times count towards the
    // devices' rates only once the plan's later runs show that it paid none.
    fresh_ = false;
    for (std::size_t d = 0; d < ms.size(); ++d) {
      if (config_.shares[d] <= 0 || ms[d] <= 0) continue;
      regime_[d].push_back({config_.shares[d], ms[d], true});
      if (regime_[d].size() > kRegimeRuns) regime_[d].pop_front();
    }
    step.deviation = deviation(config_, ms);
    step.lbt = lbt_;
    return step;
  }
  std::size_t active = 0;
  for (std::size_t d = 0; d < ms.size(); ++d) {
    if (config_.shares[d] <= 0 || ms[d] <= 0) continue;
    ++active;
    if (!runs_.empty() && runs_.back()[d] > 0) {
      changes_[d].push_back(std::abs(std::log(ms[d] / runs_.back()[d])));
      if (changes_[d].size() > kNoiseRuns) changes_[d].pop_front();
    }
    regime_[d].push_back({config_.shares[d], ms[d]});
    if (regime_[d].size() > kRegimeRuns) regime_[d].pop_front();
  }
  runs_.push_back(ms);
  if (runs_.size() > 2 * kRegimeRuns) runs_.pop_front();
  const std::size_t window = *s_.window;
  std::vector<double> judged(ms.size(), 0.0);  // each device's median time over the window
  {
    std::deque<std::vector<double>> last(runs_.end() - std::min(runs_.size(), std::size_t{window}), runs_.end());
    for (std::size_t d = 0; d < ms.size(); ++d) {
      std::vector<double> v;
      for (const auto& r : last) v.push_back(r[d]);
      judged[d] = median_of(std::move(v));
    }
    step.deviation = deviation(config_, judged);
  }
  const double bound = 1.0 - *s_.balanced_within;

  // A load step: re-plan in one move from the new rates.
  if (const auto changed = stepped(); !changed.empty()) {
    step.step = step.unbalanced = true;
    // The plan's time since the step is what the new plan must beat.
    episode_ = Episode{config_, plan_ms(kStepRuns), slowest_device(kStepRuns)};
    for (auto [d, since] : changed) restart(d, since);
    recalled_.clear();  // the devices' rates before the step are not what the runs to come show
    const bool again = executions_ < young_until_;  // a step within a young regime
    young_until_ = executions_ + kYoungRuns;
    moves_ = 0;
    state_ = State::confirming;
    const Gain g = gain(true);
    bool idle_unknown = false;
    for (std::size_t d = 0; d < ms.size(); ++d)
      idle_unknown = idle_unknown || (config_.shares[d] <= 0 && !rate(d).known());
    if (active < 2 && idle_unknown && retrain) {
      // A device alone, the others never measured: nothing to plan from but a search.
      Config after = retrain(config_);
      after.shares = on_grid(after.shares.size() == config_.shares.size() ? after.shares : config_.shares);
      step.event = move(2, after, ms, step.deviation);
      moves_ = *s_.level1_steps;  // a measured search's answer is checked as it is, not moved
    } else if (!g.target.empty() && !(g.target == config_.shares) && g.gain > 0) {
      ++moves_;
      Config after = config_;
      after.shares = g.target;
      // A step seen within a young regime (whose noise is not known yet: a load's 2-5x swings
      // show as steps now and then) idles no device; it keeps a probe's share, so that the load
      // leaving shows in its runs.
      if (again)
        for (std::size_t d = 0; d < after.shares.size(); ++d)
          if (config_.shares[d] > 0 && after.shares[d] <= 0) after.shares = on_grid(giving(after.shares, d, kProbeShare));
      step.event = move(1, after, ms, step.deviation);
    }
    step.lbt = lbt_;
    return step;
  }

  if (state_ == State::confirming) {
    if (runs_.size() < window) return step;
    // A probe's runs that its device's model does not explain (the load that left it idle has
    // gone): its regime restarts from them, or from an earlier one they fit (restart()).
    if (probing_ && moves_ == 1) {
      // The probe plan's runs: its judged ones and its first (the regime holds both).
      const std::size_t d = probed_, since = std::min(regime_[d].size(), runs_.size() + 1);
      if (since >= kStepRuns && off_model(regime_[d], since, noise(d), fixed_[d]) > std::max(log_bound(), kZStep * noise(d)))
        restart(d, since);
    }
    // The moved device's estimate now has two shares: one more move where it is still clearly off.
    const Gain g = gain(false);
    // The first confirmation moves to the estimate whatever it says (a step's move was sized on
    // kStepRuns runs of the changed device, this one on twice as many, and the moved device's
    // line now has two shares); later ones only beyond the noise, or, while the regime a step
    // started is young (kYoungRuns), by at least kYoungMove of the work, idling no device: its
    // noise, and so the hedged optimum, are still coming in (on the GPU machine (k10) the loaded
    // CPU's noise grew from the prior's 0.3 to 0.5 over a dozen runs, its optimum from 26% to
    // 17%, a gain of two standard errors at most that the watch never took), and a device left
    // idle shows no runs when the load leaves.
    const bool young = executions_ < young_until_;
    bool follow = young && !g.target.empty();
    double apart = 0;
    for (std::size_t d = 0; d < g.target.size(); ++d) {
      apart = std::max(apart, std::abs(g.target[d] - config_.shares[d]));
      follow = follow && !(config_.shares[d] > 0 && g.target[d] <= 0);
    }
    follow = follow && apart >= kYoungMove;
    const double least = moves_ == 1 ? 0.0 : follow ? 0.25 * bound : std::max(0.25 * bound, kZConfirm * g.se);
    if (moves_ < *s_.level1_steps && !g.target.empty() && !(g.target == config_.shares) && g.gain > least) {
      ++moves_;
      Config after = config_;
      after.shares = g.target;
      step.unbalanced = true;
      step.event = move(1, after, ms, step.deviation);
      return step;
    }
    // A young regime's episode goes on.
    if (young && moves_ < *s_.level1_steps) return step;
    // The plan stands; it stays only if it is not slower than the plan the episode started from.
    state_ = State::watching;
    step.settled = true;
    // Slower beyond the noise of two medians of a few runs, that is: the noise of the device that
    // bounds each plan's runs (a plan that finishes both devices together pays the noisier one's
    // in every run, which three runs cannot tell from a plan a few percent slower).
    if (episode_ && !(episode_->plan == config_)) {
      const double now = plan_ms(), sigma = std::max(noise(slowest_device()), noise(episode_->slowest));
      const double se = kCentreEfficiency * sigma * std::sqrt(2.0 / static_cast<double>(runs_.size()));
      // A plan that gives work to a device the episode's plan left idle must be faster, beyond
      // no allowance: that plan's devices were chosen as the fastest set, and a split whose
      // extra device's fixed costs the model cannot see yet (one share, no line) looks as good as
      // equal finish times make it. Kept within the noise, it would be moved towards equal
      // finish times from there, never back to the device alone (Table 2: a sixth of the work
      // on the CPU where the GPU alone was fastest).
      bool grows = false;
      for (std::size_t d = 0; d < config_.shares.size(); ++d)
        grows = grows || (config_.shares[d] > 0 && episode_->plan.shares[d] <= 0);
      if (std::log(now / episode_->ms) <= (grows ? 0.0 : kMustPay + kZPay * se)) episode_.reset();
    }
    const bool probed = std::exchange(probing_, false);
    if (episode_ && !(episode_->plan == config_)) {
      Config back = episode_->plan;
      episode_.reset();
      step.event = move(1, back, ms, step.deviation);
      backoff();
      if (probed) probe_wait_ = std::min(2 * probe_wait_, kProbeLast);
      return step;
    }
    episode_.reset();
    backoff_ = 0;
    if (probed) probe_wait_ = kProbeFirst;
    return step;
  }

  // Watching. A device the balancer took all work from (the plan it started from gave it some)
  // is given a probe's share now and then: nothing else would ever show that it got faster again
  // (an idle device has no runs, and a plan of the others does not step when a load leaves it).
  // After kProbeFirst watched runs, then twice as long after each probe that did not pay.
  if (hold_ == 0 && runs_.size() >= window) {
    std::optional<std::size_t> idle;
    for (std::size_t d = 0; d < ms.size() && !idle; ++d)
      if (config_.shares[d] <= 0 && start_[d] > 0 && rate(d).known()) idle = d;
    idle_runs_ = idle ? idle_runs_ + 1 : 0;
    if (idle && idle_runs_ >= probe_wait_) {
      Config after = config_;
      after.shares = giving(after.shares, *idle, kProbeShare);
      episode_ = Episode{config_, plan_ms(), slowest_device()};
      moves_ = 1;
      state_ = State::confirming;
      probing_ = true;
      probed_ = *idle;
      idle_runs_ = 0;
      step.event = move(1, after, ms, step.deviation);
      step.lbt = lbt_;
      return step;
    }
  }
  // Slow drift, for plans with devices to move work between.
  if (active < 2 || runs_.size() < window) {
    step.lbt = lbt_;
    return step;
  }
  const Gain g = gain(false);
  step.unbalanced =
      !g.target.empty() && !(g.target == config_.shares) && g.gain > std::max(0.5 * bound, kZWatch * g.se);
  // Lopsided: over the window a device at a small share (kLopsidedShare) finishes in less than
  // half the time of another (the judged deviation beyond 1 - kLopsided), and the model's target
  // gives it more, for kLopsidedRuns windows in a row (a transient never lasts that long; a step
  // is seen by stepped()). Moved whatever the gain's noise says: a device that the model has seen
  // at that share alone (no line, no fixed cost) looks as slow per unit as its fixed cost makes
  // it, and the gain it predicts stays within the noise for good (on the GPU machine the CPU kept
  // 10% after a load left, finishing in 1.9 ms of the GPU's 7.8, for 100 executions: a = 19 ms
  // per input, where it takes 6.5 alone). The move gives the model a second share, and the
  // episode takes the plan back where it was slower.
  {
    std::size_t first = ms.size();  // the active device finishing first, by the window's medians
    for (std::size_t d = 0; d < ms.size(); ++d)
      if (config_.shares[d] > 0 && judged[d] > 0 && (first == ms.size() || judged[d] < judged[first])) first = d;
    const bool lopsided = first < ms.size() && config_.shares[first] <= kLopsidedShare &&
                          step.deviation > 1 - kLopsided && !g.target.empty() && g.target[first] > config_.shares[first];
    lopsided_ = lopsided ? lopsided_ + 1 : 0;
    if (lopsided_ >= kLopsidedRuns * window) {
      step.unbalanced = true;
      lbt_ = std::max(lbt_, *s_.trigger);
    }
  }
  lbt_ = (step.unbalanced ? *s_.weight : 0.0) + lbt_ * (1.0 - *s_.weight);
  step.lbt = lbt_;
  if (hold_ > 0) {
    --hold_;
    return step;
  }
  if (lbt_ >= *s_.trigger) {
    episode_ = Episode{config_, plan_ms(), slowest_device()};
    moves_ = 1;
    state_ = State::confirming;
    Config after = config_;
    after.shares = g.target;
    step.event = move(1, after, ms, step.deviation);
  }
  return step;
}

}  // namespace sinew::detail
