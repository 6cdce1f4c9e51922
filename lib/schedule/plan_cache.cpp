// schedule/plan_cache.cpp — the planner's plans kept in memory.
#include "schedule/plan_cache.hpp"

namespace sinew::detail {

std::optional<Plan> PlanCache::find(const LearnedKey& key, const Refresh& refresh) {
  std::lock_guard lock(mutex_);
  auto it = plans_.find(key);
  if (it == plans_.end()) return std::nullopt;
  Cached& c = it->second;
  if (++c.uses > refresh.uses || std::chrono::steady_clock::now() - c.read >= refresh.interval) {
    plans_.erase(it);  // time to see what other processes stored meanwhile
    return std::nullopt;
  }
  return c.plan;
}

void PlanCache::remember(const LearnedKey& key, const Plan& plan, std::uint64_t generation, const Refresh& refresh) {
  std::lock_guard lock(mutex_);
  if (generation != generation_) return;
  const auto now = std::chrono::steady_clock::now();
  if (plans_.size() >= kTrimAt)
    std::erase_if(plans_, [&](const auto& kv) { return now - kv.second.read >= refresh.interval; });
  plans_.insert_or_assign(key, Cached{plan, now, 0});
}

void PlanCache::forget(const LearnedKey& key) {
  std::lock_guard lock(mutex_);
  ++generation_;
  plans_.erase(key);
}

std::uint64_t PlanCache::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

std::size_t PlanCache::size() const {
  std::lock_guard lock(mutex_);
  return plans_.size();
}

}  // namespace sinew::detail
