// schedule/train_model.cpp — the model trainer (SkePU's tuning): a linear time model per device
// from a few measured plans, the split it predicts, the platform levels screened at it, each
// device alone at the level its models predict fastest.
#include "schedule/train_search.hpp"

#include "schedule/model/equal_finish.hpp"
#include "schedule/model/linear_cost.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

namespace {

// Per device a linear model of its time in its share of the work, t = fixed + ms_per_unit * share
// (the paper's t = a * n + b with n = share * N), fitted by least squares to the device times of a
// few measured plans; the split that makes the modelled devices finish together; one device
// alone where the models say that is faster. Each plan runs twice and the faster run counts
// (ModelTrainer::measuring), whatever `quality` says: the fit over several shares does the
// averaging that the median of `quality` runs does for the searches, and the model's own budget
// (TrainingTuning::model_executions) affords no more.
class LinearModels {
 public:
  explicit LinearModels(PlanSearch& s) : s_(s) {}

  // The models at `c`'s fission and overlap until a prediction confirms or `until` executions
  // are spent; returns the fastest plan measured there.
  Config fit_and_split(Config c, std::size_t until);
  // The other overlap levels and fissions screened at the split the base's models predict.
  void search_levels(const Config& base);
  // Each group alone at the level of its own dimension whose model predicts it fastest alone.
  // By value: measuring may move the point `c` came from.
  void each_group_alone_at_predicted_level(Config c);

 private:
  struct Line {
    LinearCost cost;           // the device's time in its share: fixed ms + ms per whole input
    std::size_t distinct = 0;  // distinct shares behind it (0: no point, the device is unknown)
    bool borrowed = false;     // the shape of the device's model at another setting
    double squares = 0;        // the sum of the squared relative residuals
    std::size_t freedom = 0;   // points beyond the line's parameters
  };
  struct Prediction {
    std::vector<double> shares;
    double ms = 1e300;
  };

  std::string setting(std::size_t d, const Config& c) const;
  static Line least_squares(const std::vector<std::pair<double, double>>& pts);
  Line fit(std::size_t d, const Config& c, bool borrow = true) const;
  std::vector<Line> fit_every_device(const Config& c) const;
  Prediction predict(const std::vector<Line>& lines) const;
  static double modelled_ms(const std::vector<Line>& lines, const std::vector<double>& shares);
  std::vector<double> skewed(const TrainingPoint& p) const;
  std::string describe(const std::vector<Line>& lines, const Prediction& p, const Config& c) const;
  static bool same_levels(const Config& x, const Config& c) { return x.fission == c.fission && x.overlap == c.overlap; }
  const TrainingPoint* last_with_every_device_working(const Config& c) const;
  bool lacking(const Config& c, bool one_point) const;
  bool measure_first_plans(Config& c, std::size_t until);
  bool follow_predictions(const Config& c, std::size_t until);
  void settle_own_plan(const Config& c);
  std::pair<std::vector<unsigned>, std::vector<std::string>> other_levels(const Config& base) const;
  static std::vector<Config> interleaved(const Config& at, const std::vector<unsigned>& overlaps,
                                         const std::vector<std::string>& fissions, std::size_t count);

  PlanSearch& s_;
};

// What else a device's time depends on: a discrete device's overlap level, a CPU's fission.
std::string LinearModels::setting(std::size_t d, const Config& c) const {
  return s_.devices()[d].discrete ? "overlap=" + std::to_string(c.overlap) : "fission=" + c.fission;
}

LinearModels::Line LinearModels::least_squares(const std::vector<std::pair<double, double>>& pts) {
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
LinearModels::Line LinearModels::fit(std::size_t d, const Config& c, bool borrow) const {
  std::vector<std::pair<double, double>> pts;
  const std::string here = setting(d, c);
  for (const auto& p : s_.ledger().points())
    if (setting(d, p.config) == here && p.config.shares[d] > 0 && p.device_ms[d] > 0)
      pts.emplace_back(p.config.shares[d], p.device_ms[d]);
  Line l = least_squares(pts);
  if (!borrow || l.distinct != 1) return l;
  for (const auto& p : s_.ledger().points()) {
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

std::vector<LinearModels::Line> LinearModels::fit_every_device(const Config& c) const {
  std::vector<Line> lines;
  for (std::size_t d = 0; d < s_.devices().size(); ++d) lines.push_back(fit(d, c));
  return lines;
}

// The active devices S finish together (schedule/model/equal_finish.hpp). The best S holds
// exactly the devices whose fixed cost is below the finish time T (adding one lowers T; one at
// or above T would get no share), so the prefixes of the devices ordered by fixed cost are the
// candidates; a share below half the precision step is within the model's noise and drops its
// prefix. Each device alone (T = its fixed cost + its whole-input time) is a candidate too.
LinearModels::Prediction LinearModels::predict(const std::vector<Line>& lines) const {
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
      if (shares[set[i]] < s_.options().precision / 2) return;
    }
    if (together->finish_ms < best.ms) best = {shares, together->finish_ms};
  };
  for (std::size_t n = 1; n <= order.size(); ++n) consider({order.begin(), order.begin() + static_cast<long>(n)});
  for (auto d : order) consider({d});
  PlanSearch::normalise(best.shares);
  return best;
}

// The time the models give a plan: its slowest working device's.
double LinearModels::modelled_ms(const std::vector<Line>& lines, const std::vector<double>& shares) {
  double t = 0;
  for (std::size_t d = 0; d < lines.size(); ++d)
    if (shares[d] > 0) t = std::max(t, lines[d].distinct ? lines[d].cost.at(shares[d]) : 1e300);
  return t;
}

// The second plan at a platform configuration: `p`'s shares rebalanced by the measured rates
// (the closed form for b = 0, often near the answer) when that moves every device's share by
// TrainingTuning::model_rebalanced_move or more; else shares in proportion to 1, 2, 4, ... by
// measured rate, slowest first (no device keeps an even share: a mean of distinct powers of two
// is none of them).
std::vector<double> LinearModels::skewed(const TrainingPoint& p) const {
  const auto& s = p.config.shares;
  auto r = rebalance(s_.devices(), s, p.device_ms);
  bool apart = true;
  for (std::size_t d = 0; d < s.size(); ++d)
    apart &= s[d] <= 0 || std::fabs(r[d] - s[d]) >= s_.tuning().model_rebalanced_move * s[d];
  if (apart) return r;
  std::vector<std::size_t> order(s.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto rate = [&](std::size_t d) { return p.device_ms[d] > 0 ? s[d] / p.device_ms[d] : 0.0; };
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return rate(x) < rate(y); });
  double weight = 1;
  for (auto d : order) r[d] = s[d] * weight, weight *= 2;
  PlanSearch::normalise(r);
  return r;
}

std::string LinearModels::describe(const std::vector<Line>& lines, const Prediction& p, const Config& c) const {
  std::ostringstream line;
  line << std::setprecision(4) << "model at fission=" << c.fission << " overlap=" << c.overlap << ":";
  for (std::size_t d = 0; d < lines.size(); ++d) {
    line << (d ? "," : "") << " " << s_.devices()[d].id() << " ";
    if (lines[d].distinct == 0)
      line << "unmeasured";
    else
      line << "t = " << lines[d].cost.ms_per_unit << " * share + " << lines[d].cost.fixed_ms << " ms";
  }
  line << "; predicts shares " << shares_str(p.shares) << " -> " << std::setprecision(4) << p.ms << " ms";
  return line.str();
}

// The last plan at `c`'s levels that gave every device work.
const TrainingPoint* LinearModels::last_with_every_device_working(const Config& c) const {
  const auto& points = s_.ledger().points();
  for (auto it = points.rbegin(); it != points.rend(); ++it)
    if (same_levels(it->config, c) &&
        std::all_of(it->config.shares.begin(), it->config.shares.end(), [](double x) { return x > 0; }))
      return &*it;
  return nullptr;
}

// Whether some device lacks a model at `c`'s levels (no point at its setting), or has one point
// only and no model at another setting to borrow the shape of.
bool LinearModels::lacking(const Config& c, bool one_point) const {
  for (std::size_t d = 0; d < s_.devices().size(); ++d) {
    const Line l = fit(d, c);
    if (l.distinct == 0 || (one_point && l.distinct == 1 && !l.borrowed)) return true;
  }
  return false;
}

// A first plan where every device works, unless the points at `c`'s levels (a screened plan, the
// devices alone) already give each device a model; then a second one skewed so that every device
// has two shares. False where the phase stopped.
bool LinearModels::measure_first_plans(Config& c, std::size_t until) {
  const bool several = s_.devices().size() > 1;
  if (lacking(c, false) || (several && lacking(c, true) && !last_with_every_device_working(c))) {
    if (std::any_of(c.shares.begin(), c.shares.end(), [](double x) { return x <= 0; })) c.shares = s_.even_shares();
    if (!s_.measure(c, 1)) return false;
  }
  // A new plan costs two runs (ModelTrainer::measuring).
  if (several && s_.ledger().spent() + 2 <= until && lacking(c, true)) {
    Config skew = c;
    skew.shares = skewed(*last_with_every_device_working(c));
    if (!s_.measure(skew, 1)) return false;
  }
  return true;
}

// Predictions measured until one confirms (the devices finish within the precision of each
// other, no slower than predicted) or stops moving (a measured plan is modelled within a quarter
// of the precision of it), or `until` executions are spent. False where the phase stopped.
bool LinearModels::follow_predictions(const Config& c, std::size_t until) {
  const double precision = s_.options().precision;
  while (s_.devices().size() > 1 && s_.ledger().spent() + 2 <= until) {
    const std::vector<Line> lines = fit_every_device(c);
    const Prediction p = predict(lines);
    s_.note(describe(lines, p, c));
    if (p.shares.empty()) break;
    Config next = c;
    next.shares = p.shares;
    // Measured already: a plan here that the models time within a quarter of the precision of
    // the prediction (in time, not in shares: a steep device turns a small share into much time).
    const auto& points = s_.ledger().points();
    const bool known = std::any_of(points.begin(), points.end(), [&](const TrainingPoint& q) {
      return same_levels(q.config, c) && modelled_ms(lines, q.config.shares) <= p.ms * (1 + precision / 4);
    });
    if (known) break;
    const TrainingPoint* measured = s_.measure(next, 1);
    if (!measured) return false;
    const TrainingPoint q = *measured;
    double lo = 1e300, hi = 0;
    for (std::size_t d = 0; d < s_.devices().size(); ++d)
      if (next.shares[d] > 0) lo = std::min(lo, q.device_ms[d]), hi = std::max(hi, q.device_ms[d]);
    if (hi <= lo * (1 + precision) && q.time_ms <= p.ms * (1 + precision)) break;
  }
  return true;
}

// The model's plan: the measured plan at `c`'s levels nearest to its last prediction; and the
// scatter of the times about the models (a fraction: the precision, or twice the fits' scatter,
// at most TrainingTuning::model_margin_precisions: docs/decisions/048). Among splits at the
// model's platform configuration a faster measured one must beat it by more than that to be
// taken (PlanSearch::choose_fastest).
void LinearModels::settle_own_plan(const Config& c) {
  std::vector<Line> lines;
  double squares = 0, freedom = 0;
  for (std::size_t d = 0; d < s_.devices().size(); ++d) {
    lines.push_back(fit(d, c));
    if (lines.back().borrowed) continue;
    squares += lines.back().squares;
    freedom += static_cast<double>(lines.back().freedom);
  }
  const double precision = s_.options().precision;
  const double margin = std::clamp(freedom > 0 ? 2 * std::sqrt(squares / freedom) : 0.0, precision,
                                   s_.tuning().model_margin_precisions * precision);
  const Prediction p = predict(lines);
  double nearest = 1e300;
  const auto& points = s_.ledger().points();
  for (std::size_t i = 0; i < points.size() && !p.shares.empty(); ++i) {
    if (!same_levels(points[i].config, c)) continue;
    double distance = 0;
    for (std::size_t d = 0; d < p.shares.size(); ++d)
      distance = std::max(distance, std::fabs(p.shares[d] - points[i].config.shares[d]));
    if (distance < nearest) nearest = distance, s_.prefer(points[i].config);
  }
  s_.prefer_within(margin);
}

Config LinearModels::fit_and_split(Config c, std::size_t until) {
  if (!measure_first_plans(c, until) || !follow_predictions(c, until)) return c;
  if (s_.devices().size() > 1) settle_own_plan(c);
  const TrainingPoint* best = nullptr;
  for (const auto& p : s_.ledger().points())
    if (same_levels(p.config, c) && (!best || p.time_ms < best->time_ms)) best = &p;
  // (None where every plan measured here was one device alone at a level it does not use: named
  // at its own levels, without_idle_levels.)
  return best ? best->config : c;
}

// The overlap levels other than the base's (the deepest, the shallowest, then the rest) and its
// other fissions.
std::pair<std::vector<unsigned>, std::vector<std::string>> LinearModels::other_levels(const Config& base) const {
  const auto& all = s_.overlaps();
  std::vector<unsigned> overlaps;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const unsigned ov = i == 0 ? all.back() : i == 1 ? all.front() : all[all.size() - i];
    if (ov != base.overlap && std::find(overlaps.begin(), overlaps.end(), ov) == overlaps.end()) overlaps.push_back(ov);
  }
  std::vector<std::string> fissions;
  for (const auto& f : s_.fissions())
    if (f != base.fission) fissions.push_back(f);
  return {overlaps, fissions};
}

// At most `count` plans at `at`'s split, each with one level changed: overlap, fission, overlap,
// then the rest of each.
std::vector<Config> LinearModels::interleaved(const Config& at, const std::vector<unsigned>& overlaps,
                                              const std::vector<std::string>& fissions, std::size_t count) {
  std::vector<Config> screened;
  std::size_t o = 0, f = 0;
  while (count > 0 && o + f < overlaps.size() + fissions.size()) {
    Config c = at;
    if (f < fissions.size() && (o == overlaps.size() || (o == 1 && f == 0)))
      c.fission = fissions[f++];
    else
      c.overlap = overlaps[o++];
    screened.push_back(c);
    --count;
  }
  return screened;
}

// Two plans at the base configuration (even, skewed) give every device a model; the other
// overlap levels and fissions are run at the split those models predict, as many as the runs
// allow beside a last prediction. The full screening (three overlap levels, up to five fissions)
// does not fit beside the model, every plan costing two runs. Each screened run gives the device
// it changes a model at that level (borrowed, rescaled), and the other devices a point near
// their predicted share; the configuration whose models predict the fastest split leads, and its
// prediction is run with the runs left.
void LinearModels::search_levels(const Config& base) {
  const std::size_t budget = s_.ledger().limit();
  auto [overlaps, fissions] = other_levels(base);
  const bool screening = s_.devices().size() > 1 && !(overlaps.empty() && fissions.empty());
  fit_and_split(base, screening ? std::min(budget, s_.tuning().model_first_fit_executions) : budget);
  if (!screening || s_.stopped()) return;
  Config at = base;
  {
    const std::vector<Line> lines = fit_every_device(base);
    const Prediction p = predict(lines);
    s_.note(describe(lines, p, base));
    at.shares = p.shares;
  }
  if (at.shares.empty()) return;
  bool gpu_work = false, cpu_work = false;
  for (const auto& d : s_.devices()) (d.discrete ? gpu_work : cpu_work) |= at.shares[d.index] > 0;
  if (!gpu_work) overlaps.clear();
  if (!cpu_work) fissions.clear();
  const std::vector<Config> screened =
      interleaved(at, overlaps, fissions, (budget - std::min(budget, s_.ledger().spent() + 2)) / 2);
  if (!screened.empty()) {
    std::ostringstream line;
    line << "model: screening at the predicted split " << shares_str(at.shares) << ":";
    for (const auto& c : screened)
      line << (c.overlap != at.overlap ? " overlap=" + std::to_string(c.overlap) : " fission=" + c.fission);
    line << " (what the budget of " << budget << " executions leaves room for)";
    s_.note(line.str());
  }
  for (const auto& c : screened)
    if (!s_.measure(c) && s_.stopped()) return;
  Config leader = base;
  double leader_ms = predict(fit_every_device(base)).ms;
  for (const auto& c : screened)
    if (const double ms = predict(fit_every_device(c)).ms; ms < leader_ms) leader = c, leader_ms = ms;
  fit_and_split(leader, budget);
}

// Within the model's own budget each group alone gets one plan, not one per level: the level
// whose models (measured there, or borrowed and rescaled through a screened run) predict the
// group alone fastest. Where no model speaks for another level than `c`'s, a discrete group runs
// at its deepest overlap level (alone it carries every transfer of the input, which the deepest
// level hides most of: docs/decisions/049); a CPU group at `c`'s fission.
void LinearModels::each_group_alone_at_predicted_level(Config c) {
  const auto& groups = s_.groups();
  if (groups.size() < 2) return;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Config pick = s_.group_alone(c, g);
    double pick_ms = 1e300;
    const auto levels = s_.group_levels(c, g);
    const bool known = std::any_of(levels.begin() + 1, levels.end(), [&](const Config& level) {
      return std::all_of(groups[g].begin(), groups[g].end(),
                         [&](std::size_t d) { return fit(d, s_.group_alone(level, g)).distinct > 0; });
    });
    if (!known && s_.discrete_group(g)) {
      pick.overlap = s_.overlaps().back();
    } else {
      for (const auto& level : levels) {
        const Config one = s_.group_alone(level, g);
        double ms = 0;
        for (auto d : groups[g]) {
          const Line l = fit(d, one);
          ms = std::max(ms, l.distinct ? l.cost.at(one.shares[d]) : 1e300);
        }
        if (ms < pick_ms) pick = one, pick_ms = ms;
      }
    }
    if (!s_.measure(pick) && s_.stopped()) return;
  }
}

class ModelTrainer final : public SearchTrainer {
 public:
  std::string_view name() const override { return "model"; }
  Config distribute(PlanSearch& s, const Config& at) const override {
    return LinearModels(s).fit_and_split(at, s.ledger().limit());
  }
  // Each group alone is measured last, at the level its models predict it fastest alone, with
  // runs kept for it (the devices of a tree whose partitions meet every iteration finish
  // together, so their times in a split say nothing of their own speeds: docs/decisions/047).
  void train_plan(PlanSearch& s, const Config& base, std::size_t reserved) const override {
    TrainingLedger& ledger = s.ledger();
    const std::size_t alone = s.groups().size() > 1 ? 2 * s.groups().size() : 0;
    const std::size_t total = ledger.limit() - std::min(ledger.limit(), reserved);
    ledger.phase(reserved + (total > 2 * alone ? alone : 0), [&] { LinearModels(s).search_levels(base); });
    ledger.phase(reserved, [&] { LinearModels(s).each_group_alone_at_predicted_level(ledger.fastest().config); });
  }
  MeasuringRule measuring() const override { return {.runs = 2, .fastest_run_counts = true}; }
  std::size_t own_executions(const TrainingTuning& tuning) const override { return tuning.model_executions; }
};

}  // namespace

std::unique_ptr<const Trainer> model_trainer() { return std::make_unique<ModelTrainer>(); }

}  // namespace sinew::detail
