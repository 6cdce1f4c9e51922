// schedule/trainer_registry.cpp — the trainers by name: one registration line per built-in
// trainer; others (a test's) through register_trainer().
#include "schedule/trainer.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace sinew::detail {

// Defined in schedule/train_<name>.cpp.
std::unique_ptr<const Trainer> even_split_trainer();
std::unique_ptr<const Trainer> cpu_assisted_trainer();
std::unique_ptr<const Trainer> model_trainer();
std::unique_ptr<const Trainer> divide_and_conquer_trainer();

namespace {

class Registry {
 public:
  Registry() {
    add(even_split_trainer());
    add(cpu_assisted_trainer());
    add(model_trainer());
    add(divide_and_conquer_trainer());
  }

  void add(std::unique_ptr<const Trainer> trainer) {
    std::lock_guard lock(mutex_);
    const std::string name(trainer->name());
    if (trainers_.count(name))
      throw_error(errc::invalid_argument, "a trainer named '" + name + "' is registered already",
                  {.argument = "trainer '" + name + "'", .fix = "give the new trainer a name of its own"});
    trainers_.emplace(name, std::move(trainer));
  }

  const Trainer& find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    auto it = trainers_.find(std::string(name));
    if (it == trainers_.end())
      throw_error(errc::invalid_argument, "no trainer is registered as '" + std::string(name) + "'",
                  {.argument = "trainer '" + std::string(name) + "'", .fix = "use one of " + listed()});
    return *it->second;
  }

  std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, t] : trainers_) out.push_back(name);
    return out;
  }

 private:
  std::string listed() const {  // (under the lock)
    std::string out;
    for (const auto& [name, t] : trainers_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<const Trainer>, std::less<>> trainers_;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_trainer(std::unique_ptr<const Trainer> trainer) { registry().add(std::move(trainer)); }

const Trainer& find_trainer(std::string_view name) { return registry().find(name); }

std::vector<std::string> trainer_names() { return registry().names(); }

const Trainer& trainer_for(const TrainingOptions& options, std::string_view tree_trainer) {
  if (!tree_trainer.empty() && options.purpose != TrainingPurpose::screen_device) return find_trainer(tree_trainer);
  return find_trainer(to_string(options.strategy));
}

}  // namespace sinew::detail
