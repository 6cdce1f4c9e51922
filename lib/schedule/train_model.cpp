// schedule/train_model.cpp — the model strategy (SkePU's tuning): a linear time model per
// device from a few measured plans, the split it predicts, the platform levels screened at it.
#include "schedule/train_search.hpp"

#include "schedule/model/equal_finish.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

// ----- The model strategy: SkePU's tuning ----------------------------------------------------
//
// Per device a linear model of its time in its share of the work, t = fixed + ms_per_unit * share
// (the paper's t = a * n + b with n = share * N), fitted by least squares to the device times of a
// few measured plans; the split that makes the modelled devices finish together; one device
// alone where the models say that is faster. Each plan runs twice and the faster run counts
// (see point()), whatever `quality` says: the fit over several shares does the averaging that
// the median of `quality` runs does for the searches, and kModelExecutions affords no more.

// What else a device's time depends on: a discrete device's overlap level, a CPU's fission.
std::string Search::setting(std::size_t d, const Config& c) const {
  return devices_[d].discrete ? "overlap=" + std::to_string(c.overlap) : "fission=" + c.fission;
}

Search::Line Search::least_squares(const std::vector<std::pair<double, double>>& pts) {
  Line l;
  if (pts.empty()) return l;
  std::vector<CostPoint> points;
  for (const auto& [s, t] : pts) points.push_back({.units = s, .ms = t});
  l.distinct = distinct_units(points);
  // One share: proportional, SkePU's model with no fixed cost. Times that do not grow with the
  // share are noise over a fixed cost: nearly free work (a thousandth of the mean time per whole
  // input), which the next prediction gives this device, and whose measurement corrects the
  // slope. A negative fixed cost is noise too: the best line through 0.
  l.cost = fit_positive(points, 1e-3);
  l.squares = relative_squares(l.cost, points);
  l.freedom = pts.size() - std::min(pts.size(), std::size_t{l.distinct < 2 ? 1u : 2u});
  return l;
}

// Device d's model at `c`'s setting, from every point measured there. A setting measured at
// one share only (a screened overlap level or fission) borrows the device's model at another
// setting, scaled through that point: the level changes the device's speed, not its shape.
Search::Line Search::fit(std::size_t d, const Config& c, bool borrow) const {
  std::vector<std::pair<double, double>> pts;
  const std::string here = setting(d, c);
  for (const auto& p : points_)
    if (setting(d, p.config) == here && p.config.shares[d] > 0 && p.device_ms[d] > 0)
      pts.emplace_back(p.config.shares[d], p.device_ms[d]);
  Line l = least_squares(pts);
  if (!borrow || l.distinct != 1) return l;
  for (const auto& p : points_) {
    if (setting(d, p.config) == here) continue;
    const Line other = fit(d, p.config, false);
    if (other.distinct < 2) continue;
    double predicted = 0, measured = 0;
    for (const auto& [s, t] : pts) predicted += other.cost.at(s), measured += t;
    const double k = measured / predicted;
    return Line{{.fixed_ms = other.cost.fixed_ms * k, .ms_per_unit = other.cost.ms_per_unit * k}, 1, true};
  }
  return l;
}

// The active devices S finish together (schedule/model/equal_finish.hpp). The best S holds
// exactly the devices whose fixed cost is below the finish time T (adding one lowers T; one at
// or above T would get no share), so the prefixes of the devices ordered by fixed cost are the
// candidates; a share below half the precision step is within the model's noise and drops its
// prefix. Each device alone (T = its fixed cost + its whole-input time) is a candidate too.
Search::Prediction Search::predict(const std::vector<Line>& lines) const {
  std::vector<std::size_t> order;
  for (std::size_t d = 0; d < lines.size(); ++d)
    if (lines[d].distinct > 0) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto x, auto y) { return lines[x].cost.fixed_ms < lines[y].cost.fixed_ms; });
  Prediction best;
  auto consider = [&](const std::vector<std::size_t>& set) {
    std::vector<LinearCost> costs;
    for (auto d : set) costs.push_back(lines[d].cost);
    const auto together = finish_together(costs);
    if (!together) return;
    std::vector<double> shares(lines.size(), 0.0);
    for (std::size_t i = 0; i < set.size(); ++i) {
      shares[set[i]] = set.size() == 1 ? 1.0 : together->shares[i];
      if (shares[set[i]] < o_.precision / 2) return;
    }
    if (together->finish_ms < best.ms) best = {shares, together->finish_ms};
  };
  for (std::size_t n = 1; n <= order.size(); ++n) consider({order.begin(), order.begin() + static_cast<long>(n)});
  for (auto d : order) consider({d});
  normalise(best.shares);
  return best;
}

// The time the models give a plan: its slowest working device's.
double Search::modelled_ms(const std::vector<Line>& lines, const std::vector<double>& shares) {
  double t = 0;
  for (std::size_t d = 0; d < lines.size(); ++d)
    if (shares[d] > 0) t = std::max(t, lines[d].distinct ? lines[d].cost.at(shares[d]) : 1e300);
  return t;
}

// The second plan at a platform configuration: `p`'s shares rebalanced by the measured rates
// (the closed form for b = 0, often near the answer) when that moves every device's share by a
// fifth or more; else shares in proportion to 1, 2, 4, ... by measured rate, slowest first (no
// device keeps an even share: a mean of distinct powers of two is none of them).
std::vector<double> Search::skewed(const TrainingPoint& p) const {
  const auto& s = p.config.shares;
  auto r = rebalance(devices_, s, p.device_ms);
  bool apart = true;
  for (std::size_t d = 0; d < s.size(); ++d) apart &= s[d] <= 0 || std::fabs(r[d] - s[d]) >= 0.2 * s[d];
  if (apart) return r;
  std::vector<std::size_t> order(s.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto rate = [&](std::size_t d) { return p.device_ms[d] > 0 ? s[d] / p.device_ms[d] : 0.0; };
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return rate(x) < rate(y); });
  double weight = 1;
  for (auto d : order) r[d] = s[d] * weight, weight *= 2;
  normalise(r);
  return r;
}

std::string Search::describe(const std::vector<Line>& lines, const Prediction& p, const Config& c) const {
  std::ostringstream line;
  line << std::setprecision(4) << "model at fission=" << c.fission << " overlap=" << c.overlap << ":";
  for (std::size_t d = 0; d < lines.size(); ++d) {
    line << (d ? "," : "") << " " << devices_[d].id() << " ";
    if (lines[d].distinct == 0)
      line << "unmeasured";
    else
      line << "t = " << lines[d].cost.ms_per_unit << " * share + " << lines[d].cost.fixed_ms << " ms";
  }
  line << "; predicts shares " << shares_str(p.shares) << " -> " << std::setprecision(4) << p.ms << " ms";
  return line.str();
}

// The model at `c`'s fission and overlap: a first plan (c's shares), a second one skewed so
// that every device has two shares, then predictions measured until one confirms (the devices
// finish within the precision of each other, no slower than predicted) or stops moving (a
// measured plan is modelled within a quarter of the precision of it), or `until` executions
// are spent. Returns the fastest plan measured at this configuration.
Config Search::model(Config c, std::size_t until) {
  auto here = [&](const Config& x) { return x.fission == c.fission && x.overlap == c.overlap; };
  auto all_working = [&]() -> const TrainingPoint* {  // the last plan here that gave every device work
    for (auto it = points_.rbegin(); it != points_.rend(); ++it)
      if (here(it->config) && std::all_of(it->config.shares.begin(), it->config.shares.end(),
                                           [](double x) { return x > 0; }))
        return &*it;
    return nullptr;
  };
  // Whether some device lacks a model here (no point at its setting), or has one point only
  // and no model at another setting to borrow the shape of.
  auto lacking = [&](bool one_point) {
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      const Line l = fit(d, c);
      if (l.distinct == 0 || (one_point && l.distinct == 1 && !l.borrowed)) return true;
    }
    return false;
  };
  // A first plan where every device works, unless the points here (a screened plan, the
  // devices alone) already give each device a model.
  if (lacking(false) || (devices_.size() > 1 && lacking(true) && !all_working())) {
    if (std::any_of(c.shares.begin(), c.shares.end(), [](double x) { return x <= 0; })) c.shares = even_shares();
    point(c, 1);
  }
  // A new plan costs two runs (see point()).
  if (devices_.size() > 1 && executions_ + 2 <= until && lacking(true)) {
    Config skew = c;
    skew.shares = skewed(*all_working());
    point(skew, 1);
  }
  while (devices_.size() > 1 && executions_ + 2 <= until) {
    std::vector<Line> lines;
    for (std::size_t d = 0; d < devices_.size(); ++d) lines.push_back(fit(d, c));
    const Prediction p = predict(lines);
    note(describe(lines, p, c));
    if (p.shares.empty()) break;
    Config next = c;
    next.shares = p.shares;
    // Measured already: a plan here that the models time within a quarter of the precision of
    // the prediction (in time, not in shares: a steep device turns a small share into much time).
    const bool known = std::any_of(points_.begin(), points_.end(), [&](const TrainingPoint& q) {
      return here(q.config) && modelled_ms(lines, q.config.shares) <= p.ms * (1 + o_.precision / 4);
    });
    if (known) break;
    const TrainingPoint q = point(next, 1);
    double lo = 1e300, hi = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d)
      if (next.shares[d] > 0) lo = std::min(lo, q.device_ms[d]), hi = std::max(hi, q.device_ms[d]);
    if (hi <= lo * (1 + o_.precision) && q.time_ms <= p.ms * (1 + o_.precision)) break;
  }
  // The model's plan: the measured plan here nearest to its last prediction; and the scatter
  // of the times about the models (see decide()).
  if (devices_.size() > 1) {
    std::vector<Line> lines;
    double squares = 0, freedom = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      lines.push_back(fit(d, c));
      if (lines.back().borrowed) continue;
      squares += lines.back().squares;
      freedom += static_cast<double>(lines.back().freedom);
    }
    // At most twice the precision: on the H100 machine clFFT's times scattered so far about the
    // lines (a plan per new size) that an fft split 1.6x slower than the GPU alone was kept.
    model_margin_ = std::clamp(freedom > 0 ? 2 * std::sqrt(squares / freedom) : 0.0, o_.precision, 2 * o_.precision);
    const Prediction p = predict(lines);
    double nearest = 1e300;
    for (std::size_t i = 0; i < points_.size() && !p.shares.empty(); ++i) {
      if (!here(points_[i].config)) continue;
      double distance = 0;
      for (std::size_t d = 0; d < p.shares.size(); ++d)
        distance = std::max(distance, std::fabs(p.shares[d] - points_[i].config.shares[d]));
      if (distance < nearest) nearest = distance, model_plan_ = points_[i].config;
    }
  }
  const TrainingPoint* best = nullptr;
  for (const auto& p : points_)
    if (here(p.config) && (!best || p.time_ms < best->time_ms)) best = &p;
  return best->config;
}

// The model strategy's training: two plans at the base configuration (even, skewed) give every
// device a model; the other overlap levels and fissions are run at the split those models
// predict, as many as the runs allow beside a last prediction — the deepest overlap level, one
// fission, the shallowest level, then the rest. The full screening (three overlap levels, up to
// five fissions) does not fit beside the model, every plan costing two runs (see point()). Each
// screened run gives the device it changes a model at that level (borrowed, rescaled), and the
// other devices a point near their predicted share; the configuration whose models predict
// the fastest split leads, and its prediction is run with the runs left.
void Search::model_training(const Config& base, std::size_t reserved) {
  // Each device alone is measured last, at the level its models predict it fastest alone, with
  // runs kept for it: on the H100 machine the models alone chose CPU+GPU splits of N-Body 65x
  // slower than the GPU alone (the devices of a tree whose partitions meet every iteration finish
  // together, so their times say nothing of their own speeds), and segmentation 8 MB 2.4x slower.
  const std::size_t alone = groups_.size() > 1 ? 2 * groups_.size() : 0;
  const std::size_t total = o_.max_executions - std::min(o_.max_executions, reserved);
  within(reserved + (total > 2 * alone ? alone : 0), [&] { model_search(base); });
  within(reserved, [&] { model_singles(best_point().config); });
}

// Within the model strategy's ten runs each group alone gets one plan, not one per level: the
// level whose models (measured there, or borrowed and rescaled through a screened run) predict
// the group alone fastest. Where no model speaks for another level than `c`'s, a discrete group
// runs at its deepest overlap level: alone it carries every transfer of the input, which the
// deepest level hides most of (saxpy 100M from pageable memory on the H100 alone: ~56 ms at
// overlap 4, 139-236 ms at 1); a CPU group at `c`'s fission.
void Search::model_singles(Config c) {
  if (groups_.size() < 2) return;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    Config pick = one_group(c, g);
    double pick_ms = 1e300;
    const auto levels = group_levels(c, g);
    const bool known = std::any_of(levels.begin() + 1, levels.end(), [&](const Config& level) {
      return std::all_of(groups_[g].begin(), groups_[g].end(),
                         [&](std::size_t d) { return fit(d, one_group(level, g)).distinct > 0; });
    });
    if (!known && discrete_group(g)) {
      pick.overlap = overlaps_.back();
      point(pick);
      continue;
    }
    for (const auto& level : levels) {
      const Config one = one_group(level, g);
      double ms = 0;
      for (auto d : groups_[g]) {
        const Line l = fit(d, one);
        ms = std::max(ms, l.distinct ? l.cost.at(one.shares[d]) : 1e300);
      }
      if (ms < pick_ms) pick = one, pick_ms = ms;
    }
    point(pick);
  }
}

void Search::model_search(const Config& base) {
  const std::size_t budget = o_.max_executions;
  std::vector<unsigned> overlaps;  // the deepest, the shallowest, then the rest
  for (std::size_t i = 0; i < overlaps_.size(); ++i) {
    const unsigned ov = i == 0 ? overlaps_.back() : i == 1 ? overlaps_.front() : overlaps_[overlaps_.size() - i];
    if (ov != base.overlap && std::find(overlaps.begin(), overlaps.end(), ov) == overlaps.end())
      overlaps.push_back(ov);
  }
  std::vector<std::string> fissions;
  for (const auto& f : fissions_)
    if (f != base.fission) fissions.push_back(f);
  const bool screening = devices_.size() > 1 && !(overlaps.empty() && fissions.empty());
  model(base, screening ? std::min<std::size_t>(budget, 4) : budget);
  if (!screening) return;
  auto predicted = [&](const Config& c) {
    std::vector<Line> lines;
    for (std::size_t d = 0; d < devices_.size(); ++d) lines.push_back(fit(d, c));
    return predict(lines);
  };
  Config at = base;
  {
    std::vector<Line> lines;
    for (std::size_t d = 0; d < devices_.size(); ++d) lines.push_back(fit(d, base));
    const Prediction p = predict(lines);
    note(describe(lines, p, base));
    at.shares = p.shares;
  }
  if (at.shares.empty()) return;
  bool gpu_work = false, cpu_work = false;
  for (const auto& d : devices_) (d.discrete ? gpu_work : cpu_work) |= at.shares[d.index] > 0;
  if (!gpu_work) overlaps.clear();
  if (!cpu_work) fissions.clear();
  std::size_t levels = (budget - std::min(budget, executions_ + 2)) / 2;
  std::vector<Config> screened;
  std::size_t o = 0, f = 0;
  while (levels > 0 && o + f < overlaps.size() + fissions.size()) {
    Config c = at;
    // Interleaved: overlap, fission, overlap, then the rest of each.
    if (f < fissions.size() && (o == overlaps.size() || (o == 1 && f == 0)))
      c.fission = fissions[f++];
    else
      c.overlap = overlaps[o++];
    screened.push_back(c);
    --levels;
  }
  if (!screened.empty()) {
    std::ostringstream line;
    line << "model: screening at the predicted split " << shares_str(at.shares) << ":";
    for (const auto& c : screened)
      line << (c.overlap != at.overlap ? " overlap=" + std::to_string(c.overlap) : " fission=" + c.fission);
    line << " (what the budget of " << budget << " executions leaves room for)";
    note(line.str());
  }
  for (const auto& c : screened) point(c);
  Config leader = base;
  double leader_ms = predicted(base).ms;
  for (const auto& c : screened)
    if (const double ms = predicted(c).ms; ms < leader_ms) leader = c, leader_ms = ms;
  model(leader, budget);
}

}  // namespace sinew::detail
