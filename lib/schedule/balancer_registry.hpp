// schedule/balancer_registry.hpp — balancers by name (BalancerSettings::policy). The library's
// own are registered in schedule/balancer_registry.cpp, one line each; a program (a test) adds
// one with one BalancerRegistration. Thread-safe.
//
// A new balancer is new files plus one registration: a class implementing OnlineBalancer
// (schedule/balancer.hpp) and a factory for it.
#pragma once

#include "schedule/balancer.hpp"

#include <sinew/device.hpp>
#include <sinew/options.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sinew::detail {

// Makes a balancer for `devices` starting from `start`, with resolved settings
// (BalancerSettings::with_defaults()).
using BalancerFactory = std::function<std::unique_ptr<OnlineBalancer>(
    const std::vector<DeviceInfo>& devices, const Config& start, const BalancerSettings& settings)>;

// Adds a balancer under `name`; throws sinew::Error (invalid_argument) for an empty name, an empty
// factory or a name already registered.
void register_balancer(const std::string& name, BalancerFactory factory);

// Registers at static initialisation: `const BalancerRegistration mine{"mine", make_mine};`.
struct BalancerRegistration {
  BalancerRegistration(const std::string& name, BalancerFactory factory);
};

// The registered names, sorted.
std::vector<std::string> balancer_names();

// Throws as make_balancer() does where no balancer is registered as `name`.
void require_balancer(const std::string& name);

// The balancer `settings.policy` names (the default where unset), made by its factory; throws
// sinew::Error (invalid_argument) for an unknown name, listing the registered ones.
std::unique_ptr<OnlineBalancer> make_balancer(const std::vector<DeviceInfo>& devices, const Config& start,
                                              const BalancerSettings& settings);

}  // namespace sinew::detail
