// exec/first_calls.hpp — calls made alone the first time for each key, concurrently after: for
// libraries whose first call sets up shared state without a lock (CLBlast's tuning database).
#pragma once

#include <mutex>
#include <set>
#include <shared_mutex>

namespace sinew::detail {

template <class Key>
class FirstCalls {
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
