// decompose/schedules/steal/ranges.cpp — the work-stealing schedule's arithmetic (see ranges.hpp).
#include "decompose/schedules/steal/ranges.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace sinew::detail {
namespace {

std::size_t round_up(std::size_t units, std::size_t granule) { return (units + granule - 1) / granule * granule; }
std::size_t round_down(std::size_t units, std::size_t granule) { return units / granule * granule; }

}  // namespace

std::size_t StealPlan::least_range(std::size_t queue, std::size_t granule) const {
  const std::size_t device = queues.at(queue).device;
  const std::size_t own = device < least_of_device.size() ? least_of_device[device] : 0;
  return std::max(granule, round_up(std::max(least_units, own), granule));
}

std::size_t StealPlan::most_range(std::size_t queue, std::size_t granule) const {
  const std::size_t device = queues.at(queue).device;
  const std::size_t most = device < most_of_device.size() ? most_of_device[device] : 0;
  return most ? std::max(granule, round_down(most, granule)) : 0;
}

std::size_t StealPlan::compute_group(std::size_t queue) const {
  return moves_data.at(queue) ? queues.at(queue).device : queues.size() + queue;
}

std::vector<double> StealPlan::device_weights() const {
  std::vector<double> out;
  for (std::size_t q = 0; q < queues.size(); ++q) {
    const std::size_t d = queues[q].device;
    if (out.size() <= d) out.resize(d + 1, 0);
    out[d] += weights[q];
  }
  return out;
}

std::vector<bool> StealPlan::too_slow_to_help(std::size_t total, std::size_t granule) const {
  const std::vector<double> w = device_weights();
  std::vector<bool> out(w.size(), false);
  const auto fastest = static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
  for (std::size_t q = 0; q < queues.size(); ++q) {
    const std::size_t d = queues[q].device;
    // Its least range at its planned rate (w of the devices' rates) against the units the
    // others run meanwhile at theirs, w / (1 - w) * total: under two least ranges, the run's end
    // hangs on its one range ending on time, for a gain under w (docs/decisions/184).
    if (d != fastest && w[d] < 1 &&
        w[d] / (1 - w[d]) * static_cast<double>(total) < 2.0 * static_cast<double>(least_range(q, granule)))
      out[d] = true;
  }
  return out;
}

std::vector<double> StealPlan::weights_for_run(std::vector<double> remembered, std::optional<std::size_t> left_out,
                                               std::size_t total, std::size_t granule) const {
  const std::vector<bool> too_slow = too_slow_to_help(total, granule);
  const bool any_too_slow = std::find(too_slow.begin(), too_slow.end(), true) != too_slow.end();
  if (remembered.empty() && !left_out && !any_too_slow) return weights;
  const std::vector<double> device_weight = device_weights();
  if (remembered.empty()) remembered = device_weight;
  remembered.resize(std::max(remembered.size(), device_weight.size()), 0);
  const double floor = total ? static_cast<double>(least_units + granule) / static_cast<double>(total) : 0;
  std::vector<double> out(queues.size());
  double sum = 0;
  for (std::size_t q = 0; q < queues.size(); ++q) {
    const std::size_t d = queues[q].device;
    const double share = d == left_out || too_slow[d] ? 0 : std::max(remembered[d], floor);
    out[q] = device_weight[d] > 0 ? share * weights[q] / device_weight[d] : 0;
    sum += out[q];
  }
  if (!(sum > 0)) return weights;
  for (double& w : out) w /= sum;
  return out;
}

LeaveOut::Settings StealPlan::leave_out_settings() const {
  return {.part = tuning.leave_out_part, .runs = tuning.leave_out_runs, .interval = tuning.leave_out_interval};
}

StealRanges::StealRanges(const StealPlan& plan, std::size_t total, std::size_t granule,
                         const std::vector<double>& weights)
    : plan_(plan), total_(total), granule_(std::max<std::size_t>(1, granule)), weights_(weights) {
  queues_.resize(plan.queues.size());
  std::size_t last = queues_.size();  // the last queue with a weight takes the rest
  for (std::size_t q = 0; q < queues_.size(); ++q)
    if (weights_.at(q) > 0) last = q;
  double before = 0;
  std::size_t at = 0;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    before += weights_[q];
    const auto boundary = static_cast<std::size_t>(std::llround(before * static_cast<double>(total_)));
    const std::size_t end = q >= last ? total_ : std::min(total_, std::max(at, round_down(boundary, granule_)));
    queues_[q].next = at;
    queues_[q].end = end;
    at = end;
  }
}

std::size_t StealRanges::piece(std::size_t queue) const {
  const Queue& me = queues_.at(queue);
  const std::size_t left = me.end - me.next;
  if (left == 0) return 0;
  const std::size_t least = plan_.least_range(queue, granule_);
  const std::size_t most = plan_.most_range(queue, granule_);
  if (me.rest) return std::min(me.rest, left);  // the rest of a range's first piece, cut in two
  const double fraction = piece_fraction(queue);
  std::size_t units =
      fraction >= 1 ? left : round_down(static_cast<std::size_t>(static_cast<double>(left) * fraction), granule_);
  units = std::max(units, least);
  if (most) units = std::min(units, most);
  // No sliver behind it: a rest under the least range goes with this piece (within its bound).
  if (units >= left || (left - units < least && (!most || left <= most))) return left;
  return units;
}

double StealRanges::piece_fraction(std::size_t queue) const {
  const double tuned = plan_.tuning.piece_fraction;
  if (tuned >= 1) return 1;
  // Each compute group's rate (StealPlan::compute_group: their queues' rates summed).
  const std::vector<double> r = rates();
  std::vector<std::pair<std::size_t, double>> groups;  // (group, rate)
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    const std::size_t g = plan_.compute_group(q);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == g; });
    if (it == groups.end()) groups.push_back({g, r[q]});
    else it->second += r[q];
  }
  const std::size_t mine = plan_.compute_group(queue);
  double own = 0, fastest_thief = 0;
  for (const auto& [g, rate] : groups) {
    if (g == mine) own = rate;
    else fastest_thief = std::max(fastest_thief, rate);
  }
  if (!(fastest_thief > 0)) return 1;  // no other group to steal from it: the range in one piece
  if (!(own > 0)) return tuned;
  // A piece of f of what is left leaves the rest stealable while the rest, at the thief's rate,
  // covers the thief's part of both: f / (1 - f) = tuned odds * own rate / thief's rate.
  const double odds = tuned / (1 - tuned) * own / fastest_thief;
  const double balanced = odds / (1 + odds);
  // A discrete device's piece costs its fixed cost (a launch, its transfers' latencies, the
  // host's wait): it cuts no finer than the tuned fraction, coarser where it is the faster. A
  // zero-copy queue's piece costs little: it cuts no coarser than the tuned fraction, a hedge
  // against rates that a load may change, finer where it is the slower.
  return plan_.moves_data.at(queue) ? std::max(tuned, balanced) : std::min(tuned, balanced);
}

std::vector<double> StealRanges::rates() const {
  // The units and time a queue's rate is measured on (0 units: not measured yet).
  auto measured_of = [&](const Queue& me) -> std::pair<double, double> {
    const double units = static_cast<double>(me.done - me.first_units), ms = me.busy_ms - me.first_ms;
    return units > 0 && ms > 0 ? std::pair{units, ms} : std::pair{0.0, 0.0};
  };
  double measured = 0, measured_weight = 0;
  for (std::size_t q = 0; q < queues_.size(); ++q)
    if (const auto [units, ms] = measured_of(queues_[q]); units > 0) {
      measured += units / ms;
      measured_weight += weights_[q];
    }
  const double scale = measured > 0 && measured_weight > 0 ? measured / measured_weight : 1;
  std::vector<double> r(queues_.size());
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    const auto [units, ms] = measured_of(queues_[q]);
    r[q] = units > 0 ? units / ms : weights_[q] * scale;
  }
  return r;
}

bool StealRanges::steal(std::size_t thief) {
  if (!(weights_.at(thief) > 0)) return false;  // a queue of the device the run leaves out
  std::size_t victim = queues_.size(), largest = 0;
  for (std::size_t q = 0; q < queues_.size(); ++q)
    if (q != thief && queues_[q].end - queues_[q].next > largest) {
      largest = queues_[q].end - queues_[q].next;
      victim = q;
    }
  if (victim == queues_.size()) return false;
  Queue& v = queues_[victim];
  Queue& t = queues_[thief];
  // The thief's part s ends both together: (t.held + s) / thief's rate = (v.held + rest - s) /
  // victim's rate. Equal rates and nothing held: half, Tascell's split.
  const std::vector<double> r = rates();
  const double rest = static_cast<double>(largest);
  double part = rest / 2;
  if (r[thief] + r[victim] > 0)
    part = (r[thief] * (static_cast<double>(v.held) + rest) - r[victim] * static_cast<double>(t.held)) /
           (r[thief] + r[victim]);
  part = std::clamp(part, 0.0, rest);
  // The victim keeps whole granules from its next unit, so that the split lies on a granule.
  std::size_t keep = round_up(largest - static_cast<std::size_t>(part), granule_);
  if (const std::size_t most = plan_.most_range(thief, granule_); most && largest > most)
    keep = std::max(keep, round_up(largest - most, granule_));
  if (keep >= largest) return false;
  const std::size_t units = largest - keep;
  if (units < plan_.least_range(thief, granule_)) return false;  // never under its least range (a granule at least)
  const std::size_t split = v.next + keep;
  handovers_.push_back({thief, victim, Chunk{split, v.end - split}});
  t.next = split;
  t.end = v.end;
  t.begun = false;
  t.rest = 0;
  v.rest = std::min(v.rest, v.end - v.next);
  v.end = split;
  return true;
}

std::optional<Chunk> StealRanges::first_piece(std::size_t queue) {
  std::size_t units = piece(queue);
  if (units == 0) return std::nullopt;
  Queue& me = queues_[queue];
  me.rest = me.rest > units ? me.rest - units : 0;
  if (!me.begun && plan_.moves_data.at(queue) && !group_busy(queue)) {
    // A discrete device's queue begins a range on an idle device with first_piece_fraction of it
    // and takes the rest of that piece next: its next upload overlaps the first piece's kernel,
    // and the pieces after those two are the same as without the cut. Where another queue of
    // its device holds a piece, that piece's kernel overlaps this upload: no cut.
    const std::size_t least = plan_.least_range(queue, granule_);
    const std::size_t range = me.end - me.next;
    const std::size_t small = std::max(
        least, round_down(static_cast<std::size_t>(static_cast<double>(range) * plan_.tuning.first_piece_fraction), granule_));
    if (small < units && units - small >= least) {
      me.rest = units - small;
      units = small;
      me.cut_first = me.done == 0 && me.held == 0;  // the queue's first piece of the run
    }
  }
  const Chunk c{me.next, units};
  me.next += units;
  me.held += units;
  me.begun = true;
  return c;
}

bool StealRanges::group_busy(std::size_t queue) const {
  const std::size_t group = plan_.compute_group(queue);
  for (std::size_t q = 0; q < queues_.size(); ++q)
    if (q != queue && plan_.compute_group(q) == group && queues_[q].held > 0) return true;
  return false;
}

std::optional<Chunk> StealRanges::take(std::size_t queue) {
  Queue& me = queues_.at(queue);
  if (me.stopped) return std::nullopt;
  if (me.next == me.end && !steal(queue)) {
    // A queue that holds pieces asks again once one ends: what a thief steals is sized by what
    // it holds, so an ask ahead may find nothing that a later ask would find worth taking.
    me.stopped = me.held == 0;
    return std::nullopt;
  }
  return first_piece(queue);
}

void StealRanges::done(std::size_t queue, std::size_t units, double busy_ms) {
  Queue& me = queues_.at(queue);
  if (me.done == 0 && me.cut_first) {
    me.first_units = units;
    me.first_ms = busy_ms;
  }
  me.held -= std::min(me.held, units);
  me.done += units;
  me.busy_ms = busy_ms;
}

std::vector<std::size_t> StealRanges::done_per_device() const {
  std::vector<std::size_t> out;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    const std::size_t d = plan_.queues.at(q).device;
    if (out.size() <= d) out.resize(d + 1, 0);
    out[d] += queues_[q].done;
  }
  return out;
}

const StealPlan& steal_plan(const Decomposition& dec) {
  const auto* plan = dynamic_cast<const StealPlan*>(dec.plan.get());
  if (!plan) throw std::logic_error("sinew: a decomposition without the steal schedule's ranges");
  return *plan;
}

}  // namespace sinew::detail
