// decompose/schedules/steal/run.cpp — one run of a steal plan (see run.hpp).
#include "decompose/schedules/steal/run.hpp"

#include <map>
#include <sstream>
#include <utility>

namespace sinew::detail {

StealRun::StealRun(const Decomposition& dec, StealMemory* memory)
    : plan_(steal_plan(dec)),
      memory_(memory),
      total_(dec.total_units),
      ranges_(plan_, dec.total_units, dec.granule, plan_.weights_for_run(memory, dec.total_units, dec.granule)) {}

std::vector<std::pair<std::size_t, Chunk>> StealRun::chunks_before_run() {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::size_t, Chunk>> out;
  for (std::size_t q = 0; q < plan_.queues.size(); ++q)
    if (const auto c = ranges_.first_piece(q)) out.emplace_back(q, *c);
  return out;
}

std::optional<Chunk> StealRun::take(std::size_t queue) {
  std::lock_guard lock(mutex_);
  return ranges_.take(queue);
}

void StealRun::chunk_done(std::size_t queue, std::size_t units, double busy_ms, double host_ms) {
  (void)host_ms;
  std::lock_guard lock(mutex_);
  ranges_.done(queue, units, busy_ms);
}

void StealRun::finished() {
  if (!memory_ || total_ == 0) return;
  std::vector<double> shares;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t units : ranges_.done_per_device())
      shares.push_back(static_cast<double>(units) / static_cast<double>(total_));
  }
  std::lock_guard lock(memory_->mutex);
  memory_->shares = std::move(shares);
}

std::vector<Handover> StealRun::handovers() const {
  std::lock_guard lock(mutex_);
  return ranges_.handovers();
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
    Stolen& s = by_pair[{plan_.queues.at(h.thief).device, plan_.queues.at(h.victim).device}];
    ++s.ranges;
    s.units += h.range.units;
    std::ostringstream range;
    if (s.ranges <= kListed) range << (s.ranges > 1 ? " [" : "[") << h.range.first << ", " << h.range.first + h.range.units << ")";
    else if (s.ranges == kListed + 1) range << " ...";
    s.which += range.str();
  }
  std::ostringstream notes;
  if (by_pair.empty()) notes << " nothing stolen;";
  for (const auto& [pair, s] : by_pair)
    notes << " " << devices.at(pair.first).id() << " stole " << s.ranges << " range(s), " << s.units << " units, from "
          << devices.at(pair.second).id() << ": " << s.which << ";";
  return notes.str();
}

}  // namespace sinew::detail
