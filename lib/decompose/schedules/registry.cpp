// decompose/schedules/registry.cpp — the schedule policies by name: the built-in ones, one line
// each (docs/ARCHITECTURE.md, "Adding a schedule policy"), then those a program registers.
#include "decompose/schedule_policy.hpp"
#include "platform/error.hpp"
#include "platform/plan_items.hpp"

#include <mutex>
#include <stdexcept>

namespace sinew::detail {

// Defined in decompose/schedules/<name>.cpp or <name>/policy.cpp.
const SchedulePolicy& static_schedule();
const SchedulePolicy& dynamic_schedule();
const SchedulePolicy& steal_schedule();

namespace {

// The built-in policies, in the order messages list them.
std::vector<const SchedulePolicy*> built_in() {
  return {
      &static_schedule(),
      &dynamic_schedule(),
      &steal_schedule(),
  };
}

struct Registry {
  std::mutex mutex;
  std::vector<const SchedulePolicy*> policies = built_in();
  std::vector<std::unique_ptr<const SchedulePolicy>> registered;  // owned for the process's life
};

Registry& registry() {
  static Registry r;
  return r;
}

// Plans name a policy (Config::schedule), and are parsed below this module: every registered
// policy's name is known there (platform/plan_items.hpp) before any plan is read.
void register_name(std::string_view name) {
  if (!is_schedule_name(name)) register_schedule_name(std::string(name));
}

const bool kBuiltInNames = [] {
  for (const SchedulePolicy* p : built_in()) register_name(p->name());
  return true;
}();

}  // namespace

std::vector<const SchedulePolicy*> schedule_policies() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.policies;
}

const SchedulePolicy* find_schedule_policy(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const SchedulePolicy* p : r.policies)
    if (p->name() == name) return p;
  return nullptr;
}

void register_schedule_policy(std::unique_ptr<const SchedulePolicy> policy) {
  if (!policy) throw std::logic_error("sinew: register_schedule_policy without a policy");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const SchedulePolicy* p : r.policies)
    if (p->name() == policy->name())
      throw std::logic_error("sinew: a schedule policy named '" + std::string(policy->name()) +
                             "' is registered already");
  register_name(policy->name());
  r.policies.push_back(policy.get());
  r.registered.push_back(std::move(policy));
}

}  // namespace sinew::detail
