// decompose/schedules/dynamic/run.hpp — one run of a dynamic plan: the cursor its queues take
// chunks from, what the stop rule knows of each slot, and what the run leaves the plan's next.
#pragma once

#include "decompose/schedules/dynamic/chunks.hpp"

#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace sinew::detail {

// The run starts from the rates the plan's earlier runs measured (DynamicChunks::for_run). Where
// they leave one discrete device alone, the run is that device's static split, cut before the
// run, and only its queues take part; likewise any device whose slots would stop at their first
// ask takes no part, its slots stopped (DynamicChunks::taking_part; docs/decisions/024). Every
// unit is in exactly one chunk: the cursor only moves forward, under its lock.
class DynamicRun final : public ScheduleRun {
 public:
  // `memory`: the plan's; null: the run starts as a plan's first and leaves nothing.
  DynamicRun(const Decomposition& dec, DynamicMemory* memory);

  const std::vector<Partition>& queues() const override { return queues_; }
  bool takes_chunks() const override { return true; }
  // The probes first (a slot that takes everything left would leave them nothing), then each
  // queue's first chunk, in queue order; or the static split of the device left alone.
  std::vector<std::pair<std::size_t, Chunk>> chunks_before_run() override;
  bool all_cut_before_run() const override { return alone_.has_value(); }
  std::optional<Chunk> take(std::size_t queue) override;
  void chunk_done(std::size_t queue, std::size_t units, double busy_ms, double host_ms) override;
  void finished(double run_ms) override;
  // Devices kept out from the start (too slow to help by the rates the run starts from, or their
  // host thread costs the CPU what they add), devices probed, and slots the stop rule stopped
  // while the run went (their least chunk would have ended after the others had finished).
  std::string taken_notes(const std::vector<DeviceInfo>& devices) const override;

 private:
  // The slot's next chunk: `exactly` units (a probe's, a static split's), else as the stop rule
  // sizes it (under mutex_).
  std::optional<Chunk> cut(std::size_t slot, std::size_t exactly);

  const Decomposition& dec_;
  DynamicMemory own_memory_;  // where the run has no plan's memory
  DynamicMemory& memory_;
  DynamicChunks chunks_;  // the plan's, seeded from the memory
  std::set<std::size_t> taking_;
  std::optional<std::size_t> alone_;
  std::vector<Partition> queues_;
  std::vector<std::size_t> slot_of_queue_;
  std::mutex mutex_;
  std::size_t next_unit_ = 0;                     // units before it are taken (under mutex_)
  std::vector<DynamicChunks::Progress> progress_;  // per slot (under mutex_)
};

}  // namespace sinew::detail
