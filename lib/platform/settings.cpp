// platform/settings.cpp — the defaults of the training and balancer settings, and their checks.
#include "platform/settings.hpp"

#include "platform/balancer_tuning.hpp"

namespace sinew {

using namespace detail;

TrainingSettings TrainingSettings::with_defaults() const {
  TrainingSettings t = *this;
  if (!t.strategy) t.strategy = Strategy::even_split;
  if (!t.precision) t.precision = 0.05;
  if (!t.quality) t.quality = 3;
  if (!t.exhaustive) t.exhaustive = false;
  if (!t.max_executions) t.max_executions = 40;
  if (!t.derive_executions) t.derive_executions = 24;
  if (!t.time_budget_s) t.time_budget_s = 2;
  rule::precision.check(*t.precision, "TrainingSettings::precision");
  rule::quality.check(*t.quality, "TrainingSettings::quality");
  rule::max_executions.check(*t.max_executions, "TrainingSettings::max_executions");
  rule::derive_executions.check(*t.derive_executions, "TrainingSettings::derive_executions");
  rule::time_budget_s.check(*t.time_budget_s, "TrainingSettings::time_budget_s");
  return t;
}

BalancerSettings BalancerSettings::with_defaults() const {
  BalancerSettings b = *this;
  if (!b.enabled) b.enabled = true;
  if (!b.balanced_within) b.balanced_within = 0.88;
  if (!b.weight) b.weight = 0.5;
  if (!b.trigger) b.trigger = 0.85;
  if (!b.level1_steps) b.level1_steps = 4;
  if (!b.window) b.window = 3;
  if (!b.level2_executions) b.level2_executions = 16;
  if (!b.policy || b.policy->empty()) b.policy = "two_level";
  if (!b.tuning) b.tuning = BalancerTuning{};
  rule::balanced_within.check(*b.balanced_within, "BalancerSettings::balanced_within");
  rule::weight.check(*b.weight, "BalancerSettings::weight");
  rule::trigger.check(*b.trigger, "BalancerSettings::trigger");
  rule::level1_steps.check(*b.level1_steps, "BalancerSettings::level1_steps");
  rule::window.check(*b.window, "BalancerSettings::window");
  rule::level2_executions.check(*b.level2_executions, "BalancerSettings::level2_executions");
  check_balancer_tuning(*b.tuning);
  return b;
}

}  // namespace sinew
