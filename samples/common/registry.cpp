// samples/common/registry.cpp — the sample registry and what every descriptor shares.
#include "common/descriptors.hpp"

#include <functional>
#include <utility>

namespace sinew::samples {

Report SampleBase::run(Runtime& rt, const RunOptions& options) {
  if (tree_.empty()) throw std::logic_error(name() + ": run() before prepare()");
  auto b = bindings();
  return rt.execute(tree_, std::move(b), options);
}

Check SampleBase::check() {
  if (!ran_) {
    Check c;
    c.message = name() + ": nothing to check, the sample has not been run since prepare()";
    return c;
  }
  return compare();
}

void SampleBase::reset_state(std::size_t size) {
  size_ = size;
  ran_ = false;
}

namespace {
struct Entry {
  const char* name;
  std::function<std::unique_ptr<Sample>()> make;
};
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"filter_pipeline", [] { return std::make_unique<FilterPipeline>(); }},
      {"fft", [] { return std::make_unique<Fft>(); }},
      {"nbody", [] { return std::make_unique<Nbody>(); }},
      {"saxpy", [] { return std::make_unique<Saxpy>(); }},
      {"saxpy_blas", [] { return std::make_unique<Saxpy>(SaxpyParams{.mode = "blas"}); }},
      {"segmentation", [] { return std::make_unique<Segmentation>(); }},
  };
  return entries;
}
}  // namespace

std::unique_ptr<Sample> find(const std::string& name) {
  for (const auto& e : registry())
    if (name == e.name) return e.make();
  return nullptr;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : registry()) out.emplace_back(e.name);
  return out;
}

}  // namespace sinew::samples
