// decompose/schedules/dynamic/run.cpp — one run of a dynamic plan (see run.hpp).
#include "decompose/schedules/dynamic/run.hpp"

#include <algorithm>
#include <sstream>

namespace sinew::detail {

DynamicRun::DynamicRun(const Decomposition& dec, DynamicMemory* memory)
    : dec_(dec), memory_(memory ? *memory : own_memory_), chunks_(dynamic_chunks(dec).for_run(memory_)) {
  taking_ = chunks_.taking_part(dec.total_units, dec.granule);
  alone_ = chunks_.alone_device(taking_);
  progress_.assign(chunks_.slots.size(), {});
  for (std::size_t s = 0; s < chunks_.slots.size(); ++s) {
    const Partition& slot = chunks_.slots[s];
    const bool in = taking_.empty() || taking_.count(slot.device);
    progress_[s].stopped = !in;
    if (!in) continue;
    queues_.push_back(slot);
    slot_of_queue_.push_back(s);
  }
}

std::optional<Chunk> DynamicRun::cut(std::size_t slot, std::size_t exactly) {
  const std::size_t total = dec_.total_units;
  DynamicChunks::Progress& mine = progress_.at(slot);
  if (next_unit_ >= total || mine.stopped) return std::nullopt;
  const std::size_t left = total - next_unit_;
  const std::size_t units = exactly ? std::min(left, exactly) : chunks_.take(slot, left, dec_.granule, progress_);
  if (units == 0) {
    mine.stopped = true;  // the others finish the rest sooner than it would finish its least chunk
    return std::nullopt;
  }
  mine.held += units;
  const Chunk c{next_unit_, units};
  next_unit_ += units;
  return c;
}

std::vector<std::pair<std::size_t, Chunk>> DynamicRun::chunks_before_run() {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::size_t, Chunk>> out;
  auto add = [&](std::size_t q, std::size_t exactly) {
    if (const auto c = cut(slot_of_queue_[q], exactly)) out.emplace_back(q, *c);
  };
  if (alone_) {
    // One discrete device takes everything: its static split's chunks, in order (the other
    // devices' slots are stopped: taking_ is {*alone_}).
    for (const Partition& p : chunks_.alone[*alone_])
      for (std::size_t q = 0; q < queues_.size(); ++q)
        if (queues_[q].device == p.device && queues_[q].queue == p.queue) add(q, p.units);
    return out;
  }
  for (std::size_t q = 0; q < queues_.size(); ++q)
    if (chunks_.probes.at(slot_of_queue_[q])) add(q, chunks_.probe(slot_of_queue_[q], dec_.granule));
  for (std::size_t q = 0; q < queues_.size(); ++q)
    if (!chunks_.probes[slot_of_queue_[q]]) add(q, 0);
  return out;
}

std::optional<Chunk> DynamicRun::take(std::size_t queue) {
  std::lock_guard lock(mutex_);
  return cut(slot_of_queue_.at(queue), 0);
}

void DynamicRun::chunk_done(std::size_t queue, std::size_t units, double busy_ms, double host_ms) {
  std::lock_guard lock(mutex_);
  DynamicChunks::Progress& mine = progress_.at(slot_of_queue_.at(queue));
  mine.held -= std::min(mine.held, units);
  mine.done += units;
  mine.busy_ms = busy_ms;
  mine.host_ms = host_ms;
}

void DynamicRun::finished(double run_ms) {
  (void)run_ms;  // the rates it keeps are each slot's own
  std::lock_guard lock(mutex_);
  chunks_.remember(memory_, progress_);
}

std::string DynamicRun::taken_notes(const std::vector<DeviceInfo>& devices) const {
  std::set<std::size_t> working, out, probed;
  for (const auto& q : queues_) working.insert(q.device);
  std::size_t stopped = 0;
  for (std::size_t s = 0; s < progress_.size(); ++s) {
    const std::size_t d = chunks_.slots.at(s).device;
    if (!working.count(d)) out.insert(d);
    else stopped += progress_[s].stopped;
    if (s < chunks_.probes.size() && chunks_.probes[s]) probed.insert(d);
  }
  std::ostringstream notes;
  for (std::size_t d : out) notes << " " << devices[d].id() << " kept out (too slow to help at the start);";
  for (std::size_t d : probed) notes << " " << devices[d].id() << " probed (kept out by its last rate);";
  if (stopped) notes << " " << stopped << " slot(s) stopped taking chunks early (stop rule);";
  return notes.str();
}

}  // namespace sinew::detail
