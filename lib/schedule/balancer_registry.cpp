// schedule/balancer_registry.cpp — the balancers by name: the library's own, one line each, and
// those a program registers (schedule/balancer_registry.hpp).
#include "schedule/balancer_registry.hpp"

#include "platform/error.hpp"
#include "schedule/balancer_two_level.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace sinew::detail {

namespace {

class Registry {
 public:
  Registry()
      : factories_{
            {"two_level", make_two_level_balancer},  // schedule/balancer_two_level.cpp
        } {}

  void add(const std::string& name, BalancerFactory factory) {
    if (name.empty() || !factory)
      throw_error(errc::invalid_argument, "a balancer is registered with a name and a factory",
                  {.argument = "register_balancer", .fix = "give a non-empty name and a factory"});
    std::lock_guard lock(mutex_);
    if (!factories_.emplace(name, std::move(factory)).second)
      throw_error(errc::invalid_argument, "a balancer named '" + name + "' is registered already",
                  {.argument = "register_balancer", .fix = "register each balancer once, under a name of its own"});
  }

  BalancerFactory find(const std::string& name) const {
    std::lock_guard lock(mutex_);
    if (auto it = factories_.find(name); it != factories_.end()) return it->second;
    std::string known;
    for (const auto& [n, f] : factories_) known += (known.empty() ? "" : ", ") + n;
    throw_error(errc::invalid_argument, "no balancer is registered as '" + name + "'",
                {.argument = "BalancerSettings::policy", .fix = "name one of the registered balancers: " + known});
  }

  std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, factory] : factories_) out.push_back(name);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, BalancerFactory> factories_;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_balancer(const std::string& name, BalancerFactory factory) { registry().add(name, std::move(factory)); }

BalancerRegistration::BalancerRegistration(const std::string& name, BalancerFactory factory) {
  register_balancer(name, std::move(factory));
}

std::vector<std::string> balancer_names() { return registry().names(); }

void require_balancer(const std::string& name) { registry().find(name); }

std::unique_ptr<OnlineBalancer> make_balancer(const std::vector<DeviceInfo>& devices, const Config& start,
                                              const BalancerSettings& settings) {
  const BalancerSettings resolved = settings.with_defaults();
  return registry().find(*resolved.policy)(devices, start, resolved);
}

}  // namespace sinew::detail
