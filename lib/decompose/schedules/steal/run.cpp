// decompose/schedules/steal/run.cpp — one run of a steal plan (see run.hpp).
#include "decompose/schedules/steal/run.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace sinew::detail {

StealRun::StealRun(const Decomposition& dec, StealMemory* memory)
    : plan_(steal_plan(dec)),
      memory_(memory),
      total_(dec.total_units),
      start_(start_of(memory)),
      weights_(plan_.weights_for_run(start_.shares, start_.left_out, dec.total_units, dec.granule)),
      ranges_(plan_, dec.total_units, dec.granule, weights_) {
  // A queue without a weight (its device left out, or too slow to help) takes no range and
  // steals none: it gets no worker. (Where no device had any, the plan's weights are kept.)
  for (std::size_t q = 0; q < plan_.queues.size(); ++q) {
    if (!(weights_[q] > 0)) continue;
    queues_.push_back(plan_.queues[q]);
    taking_.push_back(q);
  }
  one_group_ = std::all_of(taking_.begin(), taking_.end(), [&](std::size_t q) {
    return plan_.compute_group(q) == plan_.compute_group(taking_.front());
  });
}

std::size_t StealRun::position(std::size_t plan_queue) const {
  return static_cast<std::size_t>(std::find(taking_.begin(), taking_.end(), plan_queue) - taking_.begin());
}

StealRun::Start StealRun::start_of(StealMemory* memory) {
  if (!memory) return {};
  std::lock_guard lock(memory->mutex);
  const LeaveOut& l = memory->leave_out;
  std::vector<double> shares = memory->shares;
  // A trial that takes a left-out device back starts it at its least range: stealing gives it
  // more where it is fast, and where its work still slows the others the trial run costs little.
  if (const auto back = l.kept(); back && !l.for_next_run() && *back < shares.size() && shares[*back] < 1) {
    const double rest = 1 - shares[*back];
    shares[*back] = 0;
    for (double& x : shares) x /= rest;
  }
  return {.shares = std::move(shares),
          .left_out = l.for_next_run(),
          .trial = l.for_next_run() != l.kept(),
          .kept = l.kept(),
          .kept_ms = l.kept_best_ms(),
          .other_ms = l.other_best_ms()};
}

std::vector<std::pair<std::size_t, Chunk>> StealRun::chunks_before_run() {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::size_t, Chunk>> out;
  for (std::size_t at = 0; at < taking_.size(); ++at)
    while (const auto c = ranges_.first_piece(taking_[at])) {
      out.emplace_back(at, *c);
      if (!one_group_) break;
    }
  return out;
}

std::optional<Chunk> StealRun::take(std::size_t queue) {
  std::lock_guard lock(mutex_);
  return ranges_.take(taking_.at(queue));
}

void StealRun::chunk_done(std::size_t queue, std::size_t units, double busy_ms, double host_ms) {
  (void)host_ms;
  std::lock_guard lock(mutex_);
  ranges_.done(taking_.at(queue), units, busy_ms);
}

void StealRun::finished(double run_ms) {
  if (!memory_ || total_ == 0) return;
  std::vector<double> parts;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t units : ranges_.done_per_device())
      parts.push_back(static_cast<double>(units) / static_cast<double>(total_));
  }
  std::lock_guard lock(memory_->mutex);
  // The device left out keeps the part it ran before; the others share the rest as they ran.
  std::vector<double> shares = parts;
  if (const auto d = start_.left_out; d && *d < memory_->shares.size()) {
    shares.resize(std::max(shares.size(), *d + 1), 0);
    const double kept = memory_->shares[*d];
    for (double& s : shares) s *= 1 - kept;
    shares[*d] = kept;
  }
  memory_->shares = std::move(shares);
  memory_->leave_out.ran(plan_.leave_out_settings(), start_.left_out, parts, run_ms);
}

std::vector<Handover> StealRun::handovers() const {
  std::lock_guard lock(mutex_);
  std::vector<Handover> out = ranges_.handovers();
  for (Handover& h : out) {  // (a left-out queue holds no range: it is neither thief nor victim)
    h.thief = position(h.thief);
    h.victim = position(h.victim);
  }
  return out;
}

std::string StealRun::taken_notes(const std::vector<DeviceInfo>& devices) const {
  constexpr std::size_t kListed = 8;  // ranges listed per pair of devices; the others counted
  // Per (thief, victim) device: the ranges stolen, their units, and the ranges themselves.
  struct Stolen {
    std::size_t ranges = 0, units = 0;
    std::string which;
  };
  std::map<std::pair<std::size_t, std::size_t>, Stolen> by_pair;
  for (const Handover& h : handovers()) {
    Stolen& s = by_pair[{queues_.at(h.thief).device, queues_.at(h.victim).device}];
    ++s.ranges;
    s.units += h.range.units;
    std::ostringstream range;
    if (s.ranges <= kListed) range << (s.ranges > 1 ? " [" : "[") << h.range.first << ", " << h.range.first + h.range.units << ")";
    else if (s.ranges == kListed + 1) range << " ...";
    s.which += range.str();
  }
  std::ostringstream notes;
  std::set<std::size_t> kept_out;  // devices with no worker, but the one left out
  for (const Partition& p : plan_.queues) kept_out.insert(p.device);
  for (const Partition& p : queues_) kept_out.erase(p.device);
  if (start_.left_out) kept_out.erase(*start_.left_out);
  for (std::size_t d : kept_out)
    notes << " " << devices.at(d).id() << " kept out (too slow to help: its least range would end after the others ran every unit);";
  if (start_.left_out && start_.trial)
    notes << " " << devices.at(*start_.left_out).id() << " left out, to measure the runs without it;";
  else if (start_.left_out)
    notes << " " << devices.at(*start_.left_out).id() << " left out: the runs without it took " << std::fixed
          << std::setprecision(3) << start_.kept_ms << " ms at best, with it " << start_.other_ms << ";";
  else if (start_.trial && start_.kept)
    notes << " every device, to measure the runs with " << devices.at(*start_.kept).id() << " again;";
  if (by_pair.empty()) notes << " nothing stolen;";
  for (const auto& [pair, s] : by_pair)
    notes << " " << devices.at(pair.first).id() << " stole " << s.ranges << " range(s), " << s.units << " units, from "
          << devices.at(pair.second).id() << ": " << s.which << ";";
  return notes.str();
}

}  // namespace sinew::detail
