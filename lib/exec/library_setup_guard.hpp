// exec/library_setup_guard.hpp — a guard around a library whose first call for a key (a routine
// on a device) sets up shared state without a lock (CLBlast's tuning database): that call runs
// alone, later calls side by side (docs/decisions/032).
#pragma once

#include <mutex>
#include <set>
#include <shared_mutex>

namespace sinew::detail {

template <class Key>
class LibrarySetupGuard {
 public:
  // Runs f(); while no call for `key` has succeeded (`ok(result)`), calls run one at a time, and
  // no other call runs beside them; once one has, calls for `key` run unlocked beside each other.
  template <class F, class Ok>
  auto call(const Key& key, F&& f, Ok&& ok) {
    {
      std::shared_lock read(mutex_);
      if (done_.count(key)) return f();
    }
    std::unique_lock write(mutex_);
    auto result = f();
    if (ok(result)) done_.insert(key);
    return result;
  }

 private:
  std::shared_mutex mutex_;
  std::set<Key> done_;
};

}  // namespace sinew::detail
