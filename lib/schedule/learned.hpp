// schedule/learned.hpp — what a runtime learns from run to run, in one store it owns, keyed by
// the tree's signature, the input's features and (where the state is one plan's) the plan.
//
// The kinds of state, each in its own slot:
// - plans() (PlanCache): the planner's plans found in the knowledge base, by tree and features
//   (a pinned device's best level: its Config::single text as the plan); the Planner's.
// - watches() (PlanWatch): the balancer watching a plan, by tree and features (a given plan:
//   its text as the plan; a planned one, whatever the knowledge base returns: none); the
//   runtime's balancer observer (runtime/balancer_observer.hpp).
// - rank_splits() (RankSplit): the balancer of a Cluster's rank split, by tree and the units it
//   splits (the feature "units"); the Cluster's rank observer (runtime/cluster_observe.cpp).
// - slot<T>(): any other kind, one slot per type (a schedule policy's run-to-run memory, by
//   tree, features and plan), its owner's.
//
// The store outlives every request of its runtime and is dropped with it: nothing here is
// written to the knowledge base (what outlives the process is stored there by its owner).
//
// Thread safety: every slot may be used from several threads at once (each has its own lock);
// an entry is shared (std::shared_ptr) and guards its own state where requests share it
// (PlanWatch::mutex). Entries are never evicted but by their owner (PlanCache's refresh).
#pragma once

#include <sinew/config.hpp>
#include <sinew/kb.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <utility>

namespace sinew::detail {

class OnlineBalancer;
class PlanCache;

// What learned state is about.
struct LearnedKey {
  std::string tree;     // the tree's signature (Node::signature()); a Cluster's: the same
  KbFeatures features;  // the input's features (input_features(): sizes, marked scalars, host.pinned)
  std::string plan;     // the plan the state is about (Config::str()); empty: any plan of the tree and input

  // A total order (a NaN feature equals a NaN one and sorts after every number).
  friend bool operator<(const LearnedKey& a, const LearnedKey& b);
  friend bool operator==(const LearnedKey& a, const LearnedKey& b) { return !(a < b) && !(b < a); }
};

// One kind of state: an entry per key, shared by those who use it.
template <class T>
class Keyed {
 public:
  // The entry for `key`, made by `make()` (a std::shared_ptr<T>, called under the slot's lock)
  // when there is none.
  template <class Make>
  std::shared_ptr<T> get_or_make(const LearnedKey& key, Make&& make) {
    std::lock_guard lock(mutex_);
    auto& entry = entries_[key];
    if (!entry) entry = make();
    return entry;
  }
  // The entry for `key`; null when there is none.
  std::shared_ptr<T> find(const LearnedKey& key) const {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }
  // `value` becomes the entry for `key` (those holding the old one keep it).
  void put(const LearnedKey& key, std::shared_ptr<T> value) {
    std::lock_guard lock(mutex_);
    entries_.insert_or_assign(key, std::move(value));
  }
  void erase(const LearnedKey& key) {
    std::lock_guard lock(mutex_);
    entries_.erase(key);
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<LearnedKey, std::shared_ptr<T>> entries_;
};

// The balancer watching one tree and input (and, for a given plan, that plan), shared by the
// requests that run it. Lock `mutex` to use `balancer` or `base`.
struct PlanWatch {
  PlanWatch(std::unique_ptr<OnlineBalancer> balancer, std::string label);
  ~PlanWatch();
  std::mutex mutex;
  std::unique_ptr<OnlineBalancer> balancer;
  Config base;        // the planner's plan it started from (then the balanced plan it stored)
  std::string label;  // the tree's, for the balancer's lines
};

// The balancer of a Cluster's rank split: the ranks as its devices, each rank's run time a
// device's. Its plan is the tree's next rank shares. Used from the thread that runs the Cluster.
struct RankSplit {
  explicit RankSplit(std::unique_ptr<OnlineBalancer> balancer);
  ~RankSplit();
  std::unique_ptr<OnlineBalancer> balancer;
};

class LearnedStore {
 public:
  LearnedStore();
  ~LearnedStore();
  LearnedStore(const LearnedStore&) = delete;
  LearnedStore& operator=(const LearnedStore&) = delete;

  PlanCache& plans() { return *plans_; }
  Keyed<PlanWatch>& watches() { return watches_; }
  Keyed<RankSplit>& rank_splits() { return rank_splits_; }

  // The slot of any other kind of state, one per type T, made on first use. (A schedule
  // policy's run-to-run memory: slot<ItsMemory>(), keyed by the tree, features and plan.)
  template <class T>
  Keyed<T>& slot() {
    std::lock_guard lock(mutex_);
    auto& s = others_[std::type_index(typeid(T))];
    if (!s) s = std::make_shared<Keyed<T>>();
    return *std::static_pointer_cast<Keyed<T>>(s);
  }

 private:
  std::unique_ptr<PlanCache> plans_;
  Keyed<PlanWatch> watches_;
  Keyed<RankSplit> rank_splits_;
  std::mutex mutex_;  // guards others_ (not the slots: each has its own lock)
  std::map<std::type_index, std::shared_ptr<void>> others_;
};

}  // namespace sinew::detail
