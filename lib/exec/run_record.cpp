// exec/run_record.cpp — what a run did, for its Report (see run_record.hpp).
#include "exec/run_record.hpp"

#include <algorithm>

namespace sinew::detail {

void RunRecord::count_copy(const Worker& w, CopyKind kind, std::uint64_t bytes) {
  count_copy(w.zero_copy, w.loop_depth > 0, kind, bytes);
}

void RunRecord::count_copy(bool on_host, bool in_loop, CopyKind kind, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  for (Copies* c : {&copies_, in_loop ? &loop_copies_ : nullptr}) {
    if (!c) continue;
    CopyCount& n = kind == CopyKind::value       ? c->values
                   : on_host                     ? c->host
                   : kind == CopyKind::to_device ? c->to_device
                   : kind == CopyKind::to_host   ? c->to_host
                                                 : c->device;
    ++n.count;
    n.bytes += bytes;
  }
}

void RunRecord::count_transfer(CopyKind kind, std::uint64_t bytes) {
  if (!bytes) return;
  std::lock_guard lock(mutex_);
  CopyCount& n = kind == CopyKind::to_device ? copies_.to_device : copies_.to_host;
  ++n.count;
  n.bytes += bytes;
}

void RunRecord::note_level(const LevelReport& part) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(levels_.begin(), levels_.end(),
                         [&](const LevelReport& l) { return l.node == part.node && l.level == part.level; });
  if (it == levels_.end()) {
    LevelReport l = part;
    l.devices.clear();
    l.ms = 0;
    l.bytes = 0;
    levels_.push_back(std::move(l));
    it = levels_.end() - 1;
  }
  for (std::size_t device : part.devices)
    if (std::find(it->devices.begin(), it->devices.end(), device) == it->devices.end()) it->devices.push_back(device);
  std::sort(it->devices.begin(), it->devices.end());
  it->ms = std::max(it->ms, part.ms);  // the slowest device's time
  it->bytes += part.bytes;
}

void RunRecord::reset() {
  std::lock_guard lock(mutex_);
  copies_ = {};
  loop_copies_ = {};
  levels_.clear();
  exchanges.clear();
  iterations = 0;
  prepared_ms = 0;
}

Copies RunRecord::copies() const {
  std::lock_guard lock(mutex_);
  return copies_;
}

Copies RunRecord::loop_copies() const {
  std::lock_guard lock(mutex_);
  return loop_copies_;
}

std::vector<LevelReport> RunRecord::levels() const {
  std::lock_guard lock(mutex_);
  return levels_;
}

}  // namespace sinew::detail
