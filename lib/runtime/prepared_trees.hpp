// runtime/prepared_trees.hpp — the runtime's prepared trees (schedule/prepared.hpp), kept per tree
// and binding shapes. Recurrent requests (the framework's use: one tree run again and again on
// bindings of the same shapes) find theirs made: checking a tree anew costs more than the rest of
// a small request's host work (docs/decisions/061). A builder call on the tree (tree_version) or
// other shapes make it anew.
//
// Thread safety: find_or_prepare may be called from several threads.
#pragma once

#include "exec/environment.hpp"
#include "schedule/prepared.hpp"

#include <sinew/binding.hpp>
#include <sinew/tree.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace sinew::detail {

class PreparedTrees {
 public:
  // `chunk_bytes`: the streaming chunk for discrete devices (RuntimeOptions::chunk_mb; 0: by size).
  PreparedTrees(const Environment& env, std::size_t chunk_bytes) : env_(env), chunk_bytes_(chunk_bytes) {}

  // The prepared tree for `tree` over bindings of these shapes (checked: a sinew::Error for a bad
  // tree or binding, before any device work).
  std::shared_ptr<const PreparedTree> find_or_prepare(const Node& tree, const std::vector<Binding>& bindings);

 private:
  // A binding as the prepared tree sees it: which vector or result, how many elements of which
  // type, const or not, null or not, pinned or not, a resident array or not (the host address
  // itself does not matter).
  struct BindingShape {
    const VectorState* vector;
    const ResultState* result;
    std::size_t elements;
    ElementType type;
    bool read_only, null, pinned, resident;
    bool operator==(const BindingShape&) const = default;
  };
  struct Kept {
    std::weak_ptr<NodeImpl> root;  // held weakly: a new tree at a freed one's address is not taken for it
    std::uint64_t version = 0;     // tree_version() when it was made
    std::vector<BindingShape> shapes;
    std::shared_ptr<const PreparedTree> tree;
  };
  // Bounds for long-lived runtimes: trees kept at most, shapes kept per tree.
  static constexpr std::size_t kTrees = 64, kShapesPerTree = 8;

  bool any_discrete() const;
  std::vector<BindingShape> shapes_of(const std::vector<Binding>& bindings, bool any_discrete) const;
  // The share of the bound vectors' bytes in pinned memory (a feature where a device is discrete).
  static double pinned_fraction(const std::vector<Binding>& bindings, const std::vector<BindingShape>& shapes);
  std::shared_ptr<const PreparedTree> kept(const std::shared_ptr<NodeImpl>& root, std::uint64_t version,
                                           const std::vector<BindingShape>& shapes);
  void keep(const std::shared_ptr<NodeImpl>& root, std::uint64_t version, std::vector<BindingShape> shapes,
            std::shared_ptr<const PreparedTree> made);

  const Environment& env_;
  std::size_t chunk_bytes_;
  std::mutex mutex_;
  std::map<const NodeImpl*, std::vector<Kept>> kept_;
};

}  // namespace sinew::detail
