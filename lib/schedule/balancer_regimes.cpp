// schedule/balancer_regimes.cpp — the online balancer's view of each device (see balancer.hpp):
// its model t = a*share + b and noise over its current regime, the steps that start a new regime
// (a load arriving or leaving, a device back in a regime it left), and the regimes it keeps.
#include "schedule/balancer.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinew::detail {

namespace {

// A device's noise before it has shown any: as noisy as a CPU device on the GPU machine, so that
// nothing moves on the first few runs' differences.
constexpr double kUnknownNoise = 0.3;
constexpr double kNoisePrior = 8;
constexpr std::size_t kSpreadRuns = 24;  // runs whose spread a device's expected time is taken over
// A fixed cost carried over from an earlier regime leaves at least this much of the regime's
// fastest time to the work (see Balancer::rate).
constexpr double kCarriedFixed = 0.5;

// Interquartile mean (the median up to four values): robust to a run in four that swings 3x,
// and closer to the mean's efficiency than the median on the many runs of a long regime.
double centre(std::vector<double> v) {
  if (v.size() <= 4) return median_of(std::move(v));
  std::sort(v.begin(), v.end());
  const std::size_t cut = v.size() / 4;
  double sum = 0;
  for (std::size_t i = cut; i < v.size() - cut; ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - 2 * cut);
}

}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  return n % 2 ? *mid : 0.5 * (*std::max_element(v.begin(), mid) + *mid);
}

double Balancer::noise(std::size_t d) const { return noise_of(changes_[d]); }

double Balancer::noise_of(const std::deque<double>& c) {
  // |X - Y| of two normal runs has the median 0.954 sigma. A few changes say little (the median
  // of 8 is often half the noise): the estimate is drawn towards kUnknownNoise as if that had
  // been seen kNoisePrior times.
  const double n = static_cast<double>(c.size());
  const double seen = c.empty() ? 0.0 : median_of({c.begin(), c.end()}) / 0.954;
  return std::max(0.01, (n * seen + kNoisePrior * kUnknownNoise) / (n + kNoisePrior));
}

DeviceRate Balancer::rate(std::size_t d) const { return model(regime_[d], noise(d), fixed_[d]); }

DeviceRate Balancer::model(const std::deque<Sample>& regime, double sigma, double& fixed) {
  // A plan's first run counts where it is no slower than the plan's later runs at that share
  // (their centre and two standard deviations): a compilation or an allocation in it would be
  // far out; without it the run is as good as any, and right after a step every run counts.
  std::vector<Sample> runs;
  for (const auto& s : regime) {
    if (!s.first) {
      runs.push_back(s);
      continue;
    }
    std::vector<double> later;
    for (const auto& o : regime)
      if (!o.first && o.share == s.share) later.push_back(std::log(o.ms));
    if (later.size() >= 2 && std::log(s.ms) <= centre(later) + 2 * sigma) runs.push_back(s);
  }
  DeviceRate r;
  if (runs.empty()) return r;
  // The fixed cost: a line t = a*s + b fitted (least squares, each share's centre weighted by
  // its runs) through the shares the regime ran at, once they span enough and the device is
  // steady enough for the slope to be known within a tenth of the proportional rate (b then within a tenth of the
  // time). Otherwise the last one fitted (0: the time is taken as proportional), but at most
  // kCarriedFixed of the regime's fastest share centre: that b was fitted in another regime, and
  // a load changes fixed costs too. On the GPU machine (k4) a CPU's b fitted to its loaded runs
  // (1.3 ms) exceeded its whole time at 5% once the load left (0.55 ms): every run of the new
  // regime fell below it, the CPU had no rate, and the step it showed moved nothing.
  std::vector<std::pair<double, std::vector<double>>> at;  // share -> log times
  for (const auto& s : runs) {
    auto it = std::find_if(at.begin(), at.end(), [&](const auto& p) { return p.first == s.share; });
    if (it == at.end()) at.push_back({s.share, {}}), it = at.end() - 1;
    it->second.push_back(std::log(s.ms));
  }
  {
    double fastest = std::numeric_limits<double>::infinity();
    for (const auto& [share, logs] : at) fastest = std::min(fastest, std::exp(centre(logs)));
    r.b = std::min(fixed, kCarriedFixed * fastest);
  }
  if (at.size() >= 2) {
    double w = 0, sx = 0, sy = 0, lo = 1, hi = 0, least = std::numeric_limits<double>::infinity();
    std::vector<double> m(at.size());
    for (std::size_t g = 0; g < at.size(); ++g) {
      m[g] = std::exp(centre(at[g].second));
      const double n = static_cast<double>(at[g].second.size());
      w += n, sx += n * at[g].first, sy += n * m[g];
      lo = std::min(lo, at[g].first), hi = std::max(hi, at[g].first), least = std::min(least, m[g]);
    }
    const double mx = sx / w, my = sy / w;
    double sxx = 0, sxy = 0;
    for (std::size_t g = 0; g < at.size(); ++g) {
      const double n = static_cast<double>(at[g].second.size());
      sxx += n * (at[g].first - mx) * (at[g].first - mx);
      sxy += n * (at[g].first - mx) * (m[g] - my);
    }
    if (hi - lo >= 0.05 && sxx > 0) {
      const double a = sxy / sxx, se_a = kCentreEfficiency * sigma * my / std::sqrt(sxx);
      if (se_a < 0.1 * my / mx) r.b = fixed = std::clamp(my - a * mx, 0.0, 0.9 * least);
    }
  }
  std::vector<double> logs;
  std::vector<Sample> used;
  for (const auto& s : runs)
    if (s.ms > r.b) logs.push_back(std::log((s.ms - r.b) / s.share)), used.push_back(s);
  if (logs.empty()) return r;
  r.a = std::exp(centre(logs));
  r.runs = logs.size();
  r.se = kCentreEfficiency * sigma / std::sqrt(static_cast<double>(r.runs));
  // The latest kSpreadRuns runs (the noise as it is now), each as a factor of the model's whole
  // time at its share, sorted for expected_ms(). Of the whole time, not of its part beyond b: the
  // noise is the run's (b's too), and at a small share, where b is most of the time, a factor of
  // the rest would blow +-30% up to 3x and hedge a device out of the work it should take back.
  for (std::size_t i = used.size() - std::min(kSpreadRuns, used.size()); i < used.size(); ++i)
    r.spread.push_back(used[i].ms / r.at(used[i].share));
  std::sort(r.spread.begin(), r.spread.end());
  return r;
}

namespace {

// The other way round: a noisy regime that ended (a load leaving a CPU: 2-5x swings, then runs
// within a few percent). Held against the earlier runs' own spread, the new runs are inside it;
// held against theirs, the earlier runs' median is far out. A step when the new runs' median is
// beyond kZStep of their own spread (at least kQuietNoise: five runs can agree by chance) from
// the earlier median, widened for few runs as stepped() widens its band, and every new run lies
// beyond the earlier runs' 10% quantile on that side (the quiet runs are not the noisy regime's
// usual fast ones). Seen over kQuietRuns runs: fewer would let the low end of +-50% noise pass.
// A step is taken where its runs, without one, would lie where they do with less than this chance.
constexpr double kStepChance = 1e-3;
constexpr double kQuietNoise = 0.15;
constexpr std::size_t kQuietRuns = 5;
bool quieted(const std::vector<double>& before, const std::vector<double>& last, double bound) {
  const double ref = median_of(before), now = median_of(last);
  std::vector<double> spread;
  for (double v : last) spread.push_back(std::abs(v - now));
  const double sigma = std::max(kQuietNoise, 1.4826 * median_of(std::move(spread)));
  const double band = std::max(bound, Balancer::kZStep * sigma * (1 + 3.0 / static_cast<double>(last.size())));
  if (std::abs(ref - now) <= band) return false;
  const bool up = now > ref;
  std::vector<double> sorted = before;
  std::sort(sorted.begin(), sorted.end());
  const double edge = sorted[up ? sorted.size() - 1 - sorted.size() / 10 : sorted.size() / 10];
  return std::all_of(last.begin(), last.end(), [&](double v) { return up ? v > edge : v < edge; });
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> Balancer::stepped() const {
  auto out = stepped_within_plan();
  for (std::size_t d = 0; d < config_.shares.size(); ++d) {
    if (config_.shares[d] <= 0 || std::any_of(out.begin(), out.end(), [&](const auto& c) { return c.first == d; }))
      continue;
    if (const std::size_t m = returned(d))
      out.push_back({d, m});
    else if (const std::size_t k = above_recalled(d))
      out.push_back({d, k});
  }
  return out;
}

void Balancer::recall(const std::vector<double>& plan_ms) {
  if (executions_ > 0)
    throw_error(errc::invalid_argument, "a balancer recalls its plan's earlier runs before it observes one",
                {.argument = "plan_ms", .fix = "call recall() before the first observe()"});
  recalled_.clear();
  for (std::size_t i = plan_ms.size() - std::min(plan_ms.size(), kRegimeRuns); i < plan_ms.size(); ++i)
    if (plan_ms[i] > 0 && std::isfinite(plan_ms[i])) recalled_.push_back(std::log(plan_ms[i]));
}

std::size_t Balancer::above_recalled(std::size_t d) const {
  // A load present from the first run (on the GPU machine, 16 load threads took the CPU's time at
  // the trained plan from 4-5 ms to 10-50 ms, 2.3-10x, in every run, while the rules above had
  // no earlier run to hold them against; the watch took 11-41 runs to move). The recalled runs
  // bound each device's time from above, so only slower is seen: the median of its last
  // kRecalledRuns runs beyond kZStep standard errors of the difference of the two medians (the
  // device's noise for both: the recalled runs' own cannot be told from a handful), each of them
  // beyond the balance bound.
  if (recalled_.empty() || runs_.size() < kRecalledRuns) return 0;
  const double ref = median_of(recalled_), bound = log_bound();
  std::vector<double> last;
  for (std::size_t i = runs_.size() - kRecalledRuns; i < runs_.size(); ++i) {
    if (runs_[i][d] <= 0) return 0;
    last.push_back(std::log(runs_[i][d]));
  }
  const double se = kCentreEfficiency * noise(d) *
                    std::sqrt(1.0 / static_cast<double>(kRecalledRuns) + 1.0 / static_cast<double>(recalled_.size()));
  const double band = std::max(bound, kZStep * se);
  if (median_of(last) <= ref + band || std::any_of(last.begin(), last.end(), [&](double v) { return v <= ref + bound; }))
    return 0;
  // Its runs before these that lie beyond the band belong to the new regime too.
  std::size_t since = kRecalledRuns;
  while (since < runs_.size() && runs_[runs_.size() - 1 - since][d] > 0 &&
         std::log(runs_[runs_.size() - 1 - since][d]) > ref + band)
    ++since;
  return since;
}

std::vector<std::pair<std::size_t, std::size_t>> Balancer::stepped_within_plan() const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const std::size_t n = runs_.size();
  if (n < 2 * kStepRuns) return out;
  const double bound = log_bound();
  for (std::size_t d = 0; d < config_.shares.size(); ++d) {
    if (config_.shares[d] <= 0) continue;
    const double noise_d = noise(d);
    std::vector<double> logs;
    for (std::size_t i = n - std::min<std::size_t>(n, kRegimeRuns); i < n; ++i)
      if (runs_[i][d] > 0) logs.push_back(std::log(runs_[i][d]));
    // The plan's earlier runs (all but the last m) and the last m, each one's reference (the
    // earlier runs' median) and band.
    struct Split {
      std::vector<double> before, last;
      double ref = 0, band = 0;
    };
    auto split = [&](std::size_t m) {
      Split sp;
      if (logs.size() < m + kStepRuns) return sp;
      sp.before.assign(logs.begin(), logs.end() - static_cast<std::ptrdiff_t>(m));
      sp.last.assign(logs.end() - static_cast<std::ptrdiff_t>(m), logs.end());
      // Beyond kZStep of the device's noise from the plan's earlier median. The noise as the
      // larger of two estimates (run-to-run changes, the spread of the plan's earlier runs):
      // each alone is now and then half the truth, which would let noise through.
      sp.ref = median_of(sp.before);
      std::vector<double> spread;
      for (double v : sp.before) spread.push_back(std::abs(v - sp.ref));
      const double sigma = std::max(noise_d, 1.4826 * median_of(std::move(spread)));
      // Wider while the plan's earlier runs are few (as Student's t is): their median and spread
      // are themselves uncertain then.
      sp.band = std::max(bound, kZStep * sigma * (1 + 3.0 / static_cast<double>(sp.before.size())));
      return sp;
    };
    auto beyond = [](const Split& sp, bool up, double v, double by) { return up ? v > sp.ref + by : v < sp.ref - by; };
    // The chance that one run of the plan lies beyond the band on that side, from its earlier
    // runs themselves (Laplace's rule: never 0): a device with a heavy tail of its own (a CPU
    // 2-3x slow one run in ten) gets there often without a step.
    auto chance = [&](const Split& w, bool up) {
      const auto n = std::count_if(w.before.begin(), w.before.end(), [&](double v) { return beyond(w, up, v, w.band); });
      return (static_cast<double>(n) + 1) / (static_cast<double>(w.before.size()) + 2);
    };
    // Every one of the last kStepRuns runs beyond the band, on the same side: under normal noise
    // a chance of about 1e-7 per run, where one outlier or a median pushed by noise never
    // suffices. A load that matters (2-3x) clears it at once.
    const Split sp = split(kStepRuns);
    if (sp.last.empty()) continue;
    const bool up = sp.last.front() > sp.ref;
    if (std::all_of(sp.last.begin(), sp.last.end(), [&](double v) { return beyond(sp, up, v, sp.band); })) {
      // The step may have come a run or two before these (a first run under the load that noise
      // kept inside the band): runs just before them that lie beyond half the band belong to it,
      // and nearer the new runs than the old. Not half the band alone: a load leaving takes the
      // time down 3-5x, and a loaded run that noise put half a band low would join the quiet runs
      // (one such run in four made the CPU's spread 3.5x and hedged it out of its work).
      const double half = std::max(sp.band, std::abs(median_of(sp.last) - sp.ref)) / 2;
      std::size_t since = kStepRuns;
      while (since < sp.before.size() && beyond(sp, up, sp.before[sp.before.size() - 1 - (since - kStepRuns)], half))
        ++since;
      out.push_back({d, since});
      continue;
    }
    // The end of a noisy regime, over kQuietRuns runs.
    if (const Split q = split(kQuietRuns);
        sp.before.size() >= kQuietRuns + kStepRuns && quieted(q.before, q.last, bound)) {
      out.push_back({d, kQuietRuns});
      continue;
    }
    // The start of a noisy regime (a load arriving on a CPU: 2-5x swings, now and then a run as
    // fast as before): of the last m runs (kStepRuns < m <= kNoisyStepRuns) all but a third
    // beyond the band on one side, the first and the latest among them, where that is no more
    // likely than kStepChance without a step (C(m, inside) * p^(m - inside), p the chance above:
    // after 45 runs none beyond, 3 of 4 pass; with one in ten beyond, 6 of 9 only just). On the
    // GPU machine (k1) the load's first ten runs had one such fast run in every three, and the
    // rule of three in a row saw the load after thirteen executions; the step's own runs, once
    // among the earlier ones, also raise their median and spread.
    for (std::size_t m = kStepRuns + 1; m <= kNoisyStepRuns; ++m) {
      const Split w = split(m);
      if (w.last.empty()) break;
      const bool side = w.last.back() > w.ref;
      const auto in = static_cast<std::size_t>(
          std::count_if(w.last.begin(), w.last.end(), [&](double v) { return !beyond(w, side, v, w.band); }));
      double ways = 1;  // C(m, in)
      for (std::size_t k = 0; k < in; ++k) ways = ways * static_cast<double>(m - k) / static_cast<double>(k + 1);
      if (in <= m / 3 && beyond(w, side, w.last.front(), w.band) && beyond(w, side, w.last.back(), w.band) &&
          ways * std::pow(chance(w, side), static_cast<double>(m - in)) < kStepChance) {
        out.push_back({d, m});
        break;
      }
    }
  }
  return out;
}

void Balancer::restart(std::size_t d, std::size_t since) {
  // The regime it leaves: its runs before the step, and their noise (a load brings its own, and
  // takes it away again).
  Past left{.fixed = fixed_[d]};
  while (regime_[d].size() > since) left.runs.push_back(regime_[d].front()), regime_[d].pop_front();
  while (changes_[d].size() + 1 > since && !changes_[d].empty())
    left.changes.push_back(changes_[d].front()), changes_[d].pop_front();
  // The regime it is in now, if it showed it before: of the kept regimes whose band holds each
  // run since the step (Past::off), the one whose model they are nearest by their median.
  std::optional<std::size_t> recalled;
  double nearest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < past_[d].size(); ++i) {
    std::vector<double> off;
    for (const auto& s : regime_[d]) off.push_back(std::abs(past_[d][i].off(s.share, s.ms)));
    const bool fits = std::all_of(off.begin(), off.end(), [&](double v) { return v <= past_[d][i].band; });
    if (const double by = median_of(off); fits && by < nearest) nearest = by, recalled = i;
  }
  if (recalled) {
    Past p = std::move(past_[d][*recalled]);
    past_[d].erase(past_[d].begin() + static_cast<std::ptrdiff_t>(*recalled));
    for (auto it = p.runs.rbegin(); it != p.runs.rend() && regime_[d].size() < kRegimeRuns; ++it)
      regime_[d].push_front(*it);
    for (auto it = p.changes.rbegin(); it != p.changes.rend() && changes_[d].size() < kNoiseRuns; ++it)
      changes_[d].push_front(*it);
    fixed_[d] = p.fixed;
  }
  if (left.runs.size() >= kStepRuns) {
    double fixed = left.fixed;
    left.rate = model(left.runs, noise_of(left.changes), fixed);
    left.band = std::max(log_bound(), kZStep * noise_of(left.changes));
    if (left.rate.known()) past_[d].push_front(std::move(left));
    if (past_[d].size() > kPastRegimes) past_[d].pop_back();
  }
}

std::size_t Balancer::returned(std::size_t d) const {
  // Back in a regime it showed before (a load that left a device at a small share, whose runs
  // there are quiet and fast again, but within the loaded regime's spread of 2-5x, which the
  // rules of stepped_within_plan() do not see through). Its last m runs (kStepRuns <= m <=
  // kNoisyStepRuns), across plans as the regime spans them:
  // - each lie within that regime's band of its model at their shares;
  // - lie, by their median, beyond the current regime's band of its own model (fitted without
  //   them): the current regime does not explain them;
  // - and the current regime's earlier runs (at least 2 * kNoisyStepRuns), held against the same
  //   band at their shares, make the first less likely than kStepChance.
  std::deque<Sample> runs;
  for (const auto& s : regime_[d])
    if (!s.first) runs.push_back(s);
  const double bound = log_bound(), sigma = noise(d);
  for (const Past& p : past_[d]) {
    auto inside = [&](const Sample& s) { return std::abs(p.off(s.share, s.ms)) <= p.band; };
    for (std::size_t m = kStepRuns; m <= kNoisyStepRuns && m + 2 * kNoisyStepRuns <= runs.size(); ++m) {
      const auto split = runs.end() - static_cast<std::ptrdiff_t>(m);
      if (!std::all_of(split, runs.end(), inside)) break;
      const auto n = std::count_if(runs.begin(), split, inside);
      const double p_in = (static_cast<double>(n) + 1) / (static_cast<double>(split - runs.begin()) + 2);
      if (!(std::pow(p_in, static_cast<double>(m)) < kStepChance)) continue;
      const double by_now = off_model(runs, m, sigma, fixed_[d]);
      if (by_now < 0) continue;
      std::vector<double> off_then;
      for (auto it = split; it != runs.end(); ++it) off_then.push_back(std::abs(p.off(it->share, it->ms)));
      if (by_now > std::max(bound, 2 * median_of(std::move(off_then)))) return m;
    }
  }
  return 0;
}

double Balancer::off_model(const std::deque<Sample>& runs, std::size_t last, double sigma, double fixed) {
  const auto split = runs.end() - static_cast<std::ptrdiff_t>(std::min(last, runs.size()));
  const DeviceRate before = model({runs.begin(), split}, sigma, fixed);
  if (!before.known()) return -1;
  std::vector<double> off;
  for (auto it = split; it != runs.end(); ++it) off.push_back(std::abs(std::log(it->ms / before.at(it->share))));
  return median_of(std::move(off));
}

double Balancer::log_bound() const { return std::log(1.0 / *s_.balanced_within); }

}  // namespace sinew::detail
