// schedule/balancer_two_level.cpp — the two-level balancer's observe(): a run recorded, then the
// path it takes (a step, an episode's confirmation, or the watch: probes and slow drift); see
// schedule/balancer_two_level.hpp.
#include "schedule/balancer_two_level.hpp"

#include "decompose/schedule_policy.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sinew::detail {

namespace {

// `shares` with device d given `share` of the work, the others scaled down to make room.
std::vector<double> giving(std::vector<double> shares, std::size_t d, double share) {
  for (auto& v : shares) v *= 1 - share;
  shares[d] = share;
  return shares;
}

}  // namespace

TwoLevelBalancer::TwoLevelBalancer(std::vector<DeviceInfo> devices, Config start, const BalancerSettings& settings)
    : devices_(std::move(devices)),
      config_(std::move(start)),
      settings_(settings.with_defaults()),
      tuning_(*settings_.tuning),
      watches_(devices_.size()),
      probes_(config_.shares, tuning_.probes) {
  if (config_.shares.size() != devices_.size())
    throw_error(errc::invalid_argument,
                "the plan to balance has " + std::to_string(config_.shares.size()) + " shares for " +
                    std::to_string(devices_.size()) + " devices",
                {.argument = "Config::shares", .fix = "give one share per runtime device"});
}

void TwoLevelBalancer::recall(const std::vector<double>& plan_ms) {
  if (executions_ > 0)
    throw_error(errc::invalid_argument, "a balancer recalls its plan's earlier runs before it observes one",
                {.argument = "plan_ms", .fix = "call recall() before the first observe()"});
  plan_.recall(plan_ms, tuning_.watch.regime_runs);
}

double TwoLevelBalancer::log_bound() const { return std::log(1.0 / *settings_.balanced_within); }

double TwoLevelBalancer::balance_bound() const { return 1.0 - *settings_.balanced_within; }

EpisodeOrigin TwoLevelBalancer::origin(std::size_t last) const {
  return {config_, plan_.slowest_median(last), plan_.slowest_device(config_.shares.size(), last)};
}

TwoLevelBalancer::Gain TwoLevelBalancer::gain(bool idle_too) const {
  std::vector<DeviceRate> rates(devices_.size());
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (config_.shares[d] > 0 || idle_too) rates[d] = rate(d);
  Gain g;
  double then = 0;
  g.target = hedged_split(rates, &then, tuning_.split);
  if (g.target.empty()) return g;
  // Expected times, as the target was chosen: the runs to come pay each device's noise too.
  const double now = g.target == config_.shares ? then : expected_ms(rates, config_.shares, tuning_.split);
  if (!(now > 0) || std::isinf(now)) return g;
  // In log terms, like the rates' standard errors it is held against (1 - then/now cannot pass
  // drift_errors of them where the noise is large, however far off the plan is).
  g.gain = std::log(now / then);
  double var = 0;
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (config_.shares[d] > 0 || g.target[d] > 0) var += rates[d].se * rates[d].se;
  g.se = std::sqrt(var);
  return g;
}

BalanceEvent TwoLevelBalancer::move(int level, Config after, const std::vector<double>& ms, double deviation) {
  after.fission = config_.fission;  // a move never rebuilds programs
  after.overlap = config_.overlap;
  BalanceEvent e{.execution = executions_,
                 .level = level,
                 .before = config_,
                 .after = after,
                 .device_ms = ms,
                 .deviation = deviation,
                 .lbt = drift_.lbt()};
  plan_.start_plan(!(after == config_));
  config_ = std::move(after);
  drift_.restart();
  return e;
}

BalanceStep TwoLevelBalancer::observe(const std::vector<double>& device_ms, const Retrain& retrain) {
  BalanceStep step;
  step.execution = ++executions_;
  // A plan whose schedule deals its work out while it runs (its shares only weigh what it deals
  // out) balances itself in each run: there is nothing to move between runs (its devices' times
  // are reported, never judged).
  if (!schedule_policy_of(config_).places_shares()) {
    step.deviation = deviation(config_, device_ms);
    return step;
  }
  std::vector<double> ms(config_.shares.size(), 0.0);
  for (std::size_t d = 0; d < ms.size() && d < device_ms.size(); ++d) ms[d] = device_ms[d];
  if (plan_.take_first_run()) return first_run_of_plan(std::move(step), ms);
  const std::size_t active = record(ms);
  const std::vector<double> judged = plan_.window_medians(ms.size(), *settings_.window);
  step.deviation = deviation(config_, judged);
  if (const auto changed = detect_steps(config_.shares, plan_, watches_, log_bound(), tuning_); !changed.empty())
    return on_step(std::move(step), changed, active, ms, retrain);
  if (episode_.in_progress()) return confirm(std::move(step), ms);
  return watch(std::move(step), ms, judged, active);
}

BalanceStep TwoLevelBalancer::first_run_of_plan(BalanceStep step, const std::vector<double>& ms) {
  // The first run of a new plan may pay one-off costs (drivers such as PoCL compile a kernel for
  // each new partition size): it is reported, not judged, and its times count towards the
  // devices' rates only once the plan's later runs show that it paid none (docs/decisions/011).
  for (std::size_t d = 0; d < ms.size(); ++d)
    if (config_.shares[d] > 0 && ms[d] > 0) watches_[d].record_first_run(config_.shares[d], ms[d], tuning_.watch);
  step.deviation = deviation(config_, ms);
  step.lbt = drift_.lbt();
  return step;
}

std::size_t TwoLevelBalancer::record(const std::vector<double>& ms) {
  std::size_t active = 0;
  for (std::size_t d = 0; d < ms.size(); ++d) {
    if (config_.shares[d] <= 0 || ms[d] <= 0) continue;
    ++active;
    watches_[d].record(config_.shares[d], ms[d], plan_.empty() ? 0.0 : plan_.back()[d], tuning_.watch);
  }
  plan_.add(ms, 2 * tuning_.watch.regime_runs);
  return active;
}

BalanceStep TwoLevelBalancer::on_step(BalanceStep step, const std::vector<DeviceStep>& changed, std::size_t active,
                                      const std::vector<double>& ms, const Retrain& retrain) {
  step.step = step.unbalanced = true;
  // The plan's time since the step is what the new plan must beat.
  const bool again = episode_.young(executions_);  // a step within a young regime
  episode_.begin_after_step(origin(tuning_.steps.runs), executions_ + tuning_.moves.young_runs);
  for (const DeviceStep& s : changed) watches_[s.device].restart(s.since, log_bound(), tuning_);
  plan_.forget_recalled();  // the devices' rates before the step are not what the runs to come show
  const Gain g = gain(true);
  bool idle_unknown = false;
  for (std::size_t d = 0; d < ms.size(); ++d)
    idle_unknown = idle_unknown || (config_.shares[d] <= 0 && !rate(d).known());
  if (active < 2 && idle_unknown && retrain) {
    // A device alone, the others never measured: nothing to plan from but a search.
    Config after = retrain(config_);
    after.shares = on_grid(after.shares.size() == config_.shares.size() ? after.shares : config_.shares, tuning_.split);
    step.event = move(2, after, ms, step.deviation);
    episode_.end_moves(*settings_.level1_steps);  // a measured search's answer is checked as it is
  } else if (!g.target.empty() && !(g.target == config_.shares) && g.gain > 0) {
    episode_.count_move();
    Config after = config_;
    after.shares = g.target;
    // A step seen within a young regime (whose noise is not known yet: a load's swings show as
    // steps now and then) idles no device; it keeps a probe's share, so that the load leaving
    // shows in its runs.
    if (again)
      for (std::size_t d = 0; d < after.shares.size(); ++d)
        if (config_.shares[d] > 0 && after.shares[d] <= 0)
          after.shares = on_grid(giving(after.shares, d, tuning_.probes.share), tuning_.split);
    step.event = move(1, after, ms, step.deviation);
  }
  step.lbt = drift_.lbt();
  return step;
}

void TwoLevelBalancer::restart_probed_device() {
  // A probe's runs that its device's model does not explain (the load that left it idle has
  // gone): its regime restarts from them, or from a kept one they fit. The probe plan's runs: its
  // judged ones and its first (the regime holds both).
  const std::size_t d = probes_.device(), since = std::min(watches_[d].regime().size(), plan_.size() + 1);
  if (since >= tuning_.steps.runs &&
      off_model(watches_[d].regime(), since, noise(d), watches_[d].fixed_ms(), tuning_.watch) >
          std::max(log_bound(), tuning_.steps.deviations * noise(d)))
    watches_[d].restart(since, log_bound(), tuning_);
}

BalanceStep TwoLevelBalancer::confirm(BalanceStep step, const std::vector<double>& ms) {
  const unsigned level1_steps = *settings_.level1_steps;
  if (plan_.size() < *settings_.window) return step;
  if (probes_.probing() && episode_.moves() == 1) restart_probed_device();
  // The moved device's estimate now has two shares: one more move where it is still clearly off.
  // While the regime a step started is young, the episode follows the optimum by at least
  // young_move of the work, idling no device: its noise, and so the hedged optimum, are still
  // coming in, and a device left idle shows no runs when the load leaves (docs/decisions/008).
  const Gain g = gain(false);
  const bool young = episode_.young(executions_);
  bool follow = young && !g.target.empty();
  double apart = 0;
  for (std::size_t d = 0; d < g.target.size(); ++d) {
    apart = std::max(apart, std::abs(g.target[d] - config_.shares[d]));
    follow = follow && !(config_.shares[d] > 0 && g.target[d] <= 0);
  }
  follow = follow && apart >= tuning_.moves.young_move;
  const double least = episode_.least_gain(follow, g.se, balance_bound(), tuning_.moves);
  if (episode_.moves() < level1_steps && !g.target.empty() && !(g.target == config_.shares) && g.gain > least) {
    episode_.count_move();
    Config after = config_;
    after.shares = g.target;
    step.unbalanced = true;
    step.event = move(1, after, ms, step.deviation);
    return step;
  }
  if (young && episode_.moves() < level1_steps) return step;  // a young regime's episode goes on
  return settle(std::move(step), ms);
}

BalanceStep TwoLevelBalancer::settle(BalanceStep step, const std::vector<double>& ms) {
  // The plan stands; it stays only if it pays against the plan the episode started from.
  step.settled = true;
  std::optional<Config> back;
  if (const auto& o = episode_.origin(); o && !(o->plan == config_)) {
    const double sigma = std::max(noise(plan_.slowest_device(config_.shares.size())), noise(o->slowest));
    bool grows = false;
    for (std::size_t d = 0; d < config_.shares.size(); ++d)
      grows = grows || (config_.shares[d] > 0 && o->plan.shares[d] <= 0);
    if (!episode_.pays(plan_.slowest_median(), sigma, plan_.size(), grows, tuning_)) back = o->plan;
  }
  episode_.close(back.has_value(), tuning_.moves);
  probes_.end(!back, tuning_.probes);
  if (back) step.event = move(1, *back, ms, step.deviation);
  return step;
}

std::optional<BalanceEvent> TwoLevelBalancer::probe(const BalanceStep& step, const std::vector<double>& ms) {
  const auto d = probes_.due(config_.shares, [&](std::size_t i) { return rate(i).known(); });
  if (!d) return std::nullopt;
  Config after = config_;
  after.shares = giving(after.shares, *d, tuning_.probes.share);
  episode_.begin(origin(), 1);
  probes_.begin(*d);
  return move(1, after, ms, step.deviation);
}

bool TwoLevelBalancer::lopsided(const BalanceStep& step, const std::vector<double>& judged, const Gain& g) const {
  const std::size_t n = judged.size();
  std::size_t first = n;  // the active device finishing first, by the window's medians
  for (std::size_t d = 0; d < n; ++d)
    if (config_.shares[d] > 0 && judged[d] > 0 && (first == n || judged[d] < judged[first])) first = d;
  return first < n && config_.shares[first] <= tuning_.moves.lopsided_share &&
         step.deviation > 1 - tuning_.moves.lopsided_within && !g.target.empty() &&
         g.target[first] > config_.shares[first];
}

BalanceStep TwoLevelBalancer::watch(BalanceStep step, const std::vector<double>& ms, const std::vector<double>& judged,
                                    std::size_t active) {
  const std::size_t window = *settings_.window;
  if (!episode_.holding() && plan_.size() >= window)
    if (auto event = probe(step, ms)) {
      step.event = std::move(event);
      step.lbt = drift_.lbt();
      return step;
    }
  // Slow drift, for plans with devices to move work between.
  if (active < 2 || plan_.size() < window) {
    step.lbt = drift_.lbt();
    return step;
  }
  const Gain g = gain(false);
  step.unbalanced =
      !g.target.empty() && !(g.target == config_.shares) &&
      g.gain > std::max(tuning_.moves.drift_bound_fraction * balance_bound(), tuning_.moves.drift_errors * g.se);
  if (drift_.lopsided_for_long(lopsided(step, judged, g), window, tuning_.moves)) {
    step.unbalanced = true;
    drift_.force(*settings_.trigger);
  }
  step.lbt = drift_.update(step.unbalanced, *settings_.weight);
  if (episode_.holding()) {
    episode_.pass_held_run();
    return step;
  }
  if (drift_.lbt() >= *settings_.trigger) {
    episode_.begin(origin(), 1);
    Config after = config_;
    after.shares = g.target;
    step.event = move(1, after, ms, step.deviation);
  }
  return step;
}

std::unique_ptr<OnlineBalancer> make_two_level_balancer(const std::vector<DeviceInfo>& devices, const Config& start,
                                                        const BalancerSettings& settings) {
  return std::make_unique<TwoLevelBalancer>(devices, start, settings);
}

}  // namespace sinew::detail
