// platform/balancer_tuning.cpp — the ranges of the balancer's tuned values
// (platform/balancer_tuning.hpp): counts of at least one run, fractions within [0, 1], numbers of
// deviations and errors that are finite and not negative. Wide enough for experiments, narrow
// enough that the balancer's arithmetic stays defined (no division by a zero count, no 2^n sets
// beyond what a run affords).
#include "platform/balancer_tuning.hpp"

#include "platform/checks.hpp"

#include <string>

namespace sinew::detail {

namespace {

const std::string kName = "BalancerSettings::tuning.";

void count(std::uint64_t v, const char* what, std::uint64_t min, std::uint64_t max) {
  check_count(v, kName + what, min, max);
}
void number(double v, const char* what, double min, double max, bool min_open = false) {
  check_number(v, kName + what, min, max, min_open);
}

void check_watch(const BalancerTuning::Watch& w) {
  count(w.regime_runs, "watch.regime_runs", 1, 100000);
  count(w.noise_runs, "watch.noise_runs", 1, 100000);
  number(w.unknown_noise, "watch.unknown_noise", 0, 10, true);
  number(w.unknown_noise_weight, "watch.unknown_noise_weight", 0, 1e6);
  number(w.least_noise, "watch.least_noise", 0, 10, true);
  count(w.spread_runs, "watch.spread_runs", 1, 100000);
  number(w.centre_efficiency, "watch.centre_efficiency", 0, 10, true);
  number(w.first_run_within, "watch.first_run_within", 0, 100);
  number(w.fit_span, "watch.fit_span", 0, 1);
  number(w.fit_slope_within, "watch.fit_slope_within", 0, 10);
  number(w.fitted_fixed_at_most, "watch.fitted_fixed_at_most", 0, 1);
  number(w.carried_fixed_at_most, "watch.carried_fixed_at_most", 0, 1);
}

void check_steps(const BalancerTuning::Steps& s) {
  count(s.runs, "steps.runs", 1, 1000);
  count(s.noisy_runs, "steps.noisy_runs", s.runs, 1000);
  number(s.deviations, "steps.deviations", 0, 100, true);
  number(s.chance, "steps.chance", 0, 1, true);
  number(s.few_runs_widening, "steps.few_runs_widening", 0, 1000);
  count(s.quiet_runs, "steps.quiet_runs", 1, 1000);
  number(s.quiet_noise, "steps.quiet_noise", 0, 10, true);
  number(s.quiet_edge_quantile, "steps.quiet_edge_quantile", 0, 0.5);
  count(s.recalled_runs, "steps.recalled_runs", 1, 1000);
  number(s.onset_band_fraction, "steps.onset_band_fraction", 0, 1, true);
}

void check_moves(const BalancerTuning::Moves& m) {
  number(m.drift_errors, "moves.drift_errors", 0, 100);
  number(m.drift_bound_fraction, "moves.drift_bound_fraction", 0, 100);
  number(m.confirm_errors, "moves.confirm_errors", 0, 100);
  number(m.confirm_bound_fraction, "moves.confirm_bound_fraction", 0, 100);
  number(m.must_pay, "moves.must_pay", 0, 10);
  number(m.pay_errors, "moves.pay_errors", 0, 100);
  count(m.young_runs, "moves.young_runs", 0, 1000000);
  number(m.young_move, "moves.young_move", 0, 1);
  number(m.lopsided_within, "moves.lopsided_within", 0, 1);
  number(m.lopsided_share, "moves.lopsided_share", 0, 1);
  count(m.lopsided_windows, "moves.lopsided_windows", 1, 1000);
  count(m.first_backoff, "moves.first_backoff", 1, 1000000);
  count(m.last_backoff, "moves.last_backoff", m.first_backoff, 1000000);
}

}  // namespace

void check_balancer_tuning(const BalancerTuning& t) {
  check_watch(t.watch);
  check_steps(t.steps);
  count(t.regimes.kept, "regimes.kept", 0, 100);
  number(t.regimes.current_off_ratio, "regimes.current_off_ratio", 0, 100);
  count(t.regimes.earlier_runs_ratio, "regimes.earlier_runs_ratio", 0, 100);
  number(t.probes.share, "probes.share", 0, 0.5, true);
  count(t.probes.first_wait, "probes.first_wait", 1, 1000000);
  count(t.probes.last_wait, "probes.last_wait", t.probes.first_wait, 1000000);
  check_moves(t.moves);
  number(t.split.least_share, "split.least_share", 0, 0.5);
  number(t.split.grid_steps, "split.grid_steps", 1, 1e6);
  number(t.split.tie, "split.tie", 0, 0.5);
  count(t.split.every_set_up_to, "split.every_set_up_to", 1, 16);
  count(t.split.hedged_up_to, "split.hedged_up_to", 0, 6);
}

}  // namespace sinew::detail
