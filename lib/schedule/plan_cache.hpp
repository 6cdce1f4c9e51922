// schedule/plan_cache.hpp — the planner's plans kept in memory (LearnedStore::plans()), so that a
// recurrent run's plan() stays off SQLite (schedule/planner.hpp's banner says when an entry is
// dropped and what staleness that accepts).
//
// A generation counts the forget() calls: a plan read from the knowledge base before a store
// (which forgets its key) must not be remembered after it, so remember() takes the generation
// read before the lookup and keeps the plan only when nothing was forgotten since.
//
// Thread safety: every member may be called from several threads.
#pragma once

#include "schedule/learned.hpp"
#include "schedule/planner.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace sinew::detail {

class PlanCache {
 public:
  // When a cached plan is read from the knowledge base again (PlannerSettings::refresh_uses,
  // refresh_interval): after this many uses or this long after it was read.
  struct Refresh {
    std::size_t uses = 1000;
    std::chrono::milliseconds interval{1000};
  };

  // The plan cached for `key`, counting one more use; none when there is none or it is due to be
  // read again (it is dropped then).
  std::optional<Plan> find(const LearnedKey& key, const Refresh& refresh);
  // Caches `plan` for `key` unless something was forgotten since `generation` was taken.
  void remember(const LearnedKey& key, const Plan& plan, std::uint64_t generation, const Refresh& refresh);
  // Drops `key`'s plan and starts a new generation.
  void forget(const LearnedKey& key);
  std::uint64_t generation() const;
  std::size_t size() const;

 private:
  struct Cached {
    Plan plan;
    std::chrono::steady_clock::time_point read;
    std::size_t uses = 0;
  };
  // Inputs that vary from run to run would grow the cache for good: from this many plans on, those
  // past their refresh time go (they would be read again anyway).
  static constexpr std::size_t kTrimAt = 256;

  mutable std::mutex mutex_;
  std::map<LearnedKey, Cached> plans_;
  std::uint64_t generation_ = 0;
};

}  // namespace sinew::detail
