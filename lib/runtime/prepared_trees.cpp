// runtime/prepared_trees.cpp — the runtime's prepared trees, kept per tree and binding shapes.
#include "runtime/prepared_trees.hpp"

#include "tree/node.hpp"

#include <algorithm>

namespace sinew::detail {

std::shared_ptr<const PreparedTree> PreparedTrees::find_or_prepare(const Node& tree,
                                                                  const std::vector<Binding>& bindings) {
  const auto& root = tree.impl();
  const std::uint64_t version = tree_version(*root);
  const bool discrete = any_discrete();
  std::vector<BindingShape> shapes = shapes_of(bindings, discrete);
  if (auto found = kept(root, version, shapes)) return found;
  std::optional<double> pinned;
  if (discrete) pinned = pinned_fraction(bindings, shapes);
  auto made = prepare_tree(tree, bindings, env_.infos, pinned, chunk_bytes_, env_.schedule_tuning);
  keep(root, version, std::move(shapes), made);
  return made;
}

bool PreparedTrees::any_discrete() const {
  return std::any_of(env_.infos.begin(), env_.infos.end(), [](const DeviceInfo& d) { return d.discrete; });
}

std::vector<PreparedTrees::BindingShape> PreparedTrees::shapes_of(const std::vector<Binding>& bindings,
                                                                  bool any_discrete) const {
  std::vector<BindingShape> shapes;
  shapes.reserve(bindings.size());
  for (const auto& b : bindings)
    shapes.push_back({b.vector.get(), b.result.get(), b.elements, b.type, b.read_only, b.data == nullptr,
                      // Whether host data is pinned changes what a discrete device costs: a feature
                      // (docs/decisions/062).
                      any_discrete && b.vector && env_.is_pinned(b.data, b.elements * b.type.size),
                      // Resident data is planned apart from host data (docs/decisions/148).
                      b.array != nullptr});
  return shapes;
}

double PreparedTrees::pinned_fraction(const std::vector<Binding>& bindings, const std::vector<BindingShape>& shapes) {
  double bytes = 0, pinned = 0;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    if (!bindings[i].vector) continue;
    const double n = static_cast<double>(bindings[i].elements * bindings[i].type.size);
    bytes += n;
    if (shapes[i].pinned) pinned += n;
  }
  return bytes > 0 ? pinned / bytes : 0.0;
}

std::shared_ptr<const PreparedTree> PreparedTrees::kept(const std::shared_ptr<NodeImpl>& root, std::uint64_t version,
                                                        const std::vector<BindingShape>& shapes) {
  std::lock_guard lock(mutex_);
  if (auto it = kept_.find(root.get()); it != kept_.end())
    for (const auto& k : it->second)
      if (k.version == version && k.shapes == shapes && k.root.lock() == root) return k.tree;
  return nullptr;
}

void PreparedTrees::keep(const std::shared_ptr<NodeImpl>& root, std::uint64_t version, std::vector<BindingShape> shapes,
                         std::shared_ptr<const PreparedTree> made) {
  std::lock_guard lock(mutex_);
  if (kept_.size() >= kTrees) kept_.clear();
  auto& list = kept_[root.get()];
  std::erase_if(list, [&](const Kept& k) { return k.version != version || k.root.lock() != root; });
  if (list.size() >= kShapesPerTree) list.erase(list.begin());
  list.push_back({root, version, std::move(shapes), std::move(made)});
}

}  // namespace sinew::detail
