// tree/swap.cpp — loop copies that may swap buffers instead (Analysis::swap_copies).
#include "tree/analysis.hpp"
#include "tree/nodes/copy.hpp"
#include "tree/nodes/loop.hpp"
#include "tree/nodes/pipeline.hpp"

namespace sinew::detail {
namespace {

enum class First { none, written, other };

// How the leaves of `n`, in the order they run, first meet `v`: a leaf writing its slice (out)
// without reading it, anything else (a read, a halo, a whole read, a reduction's vector, a nested
// loop that may run no iteration), or not at all. (A kernel's range_of(v) only sizes its NDRange.)
First first_use(const NodeImpl& n, const VectorState* v) {
  if (n.extra_vector() == v) return First::other;
  if (n.is_leaf()) {
    bool writes = false, other = false;
    for (const auto& a : n.args) {
      if (a.vector.get() != v) continue;
      if (a.kind == Arg::Kind::partitioned && a.access == Access::write)
        writes = true;
      else if (a.kind != Arg::Kind::offset && a.kind != Arg::Kind::count && a.kind != Arg::Kind::size)
        other = true;
    }
    return other ? First::other : writes ? First::written : First::none;
  }
  for (const auto& child : n.children) {
    const First f = first_use(*child, v);
    if (f == First::none) continue;
    if (dynamic_cast<const LoopNode*>(&n)) return First::other;  // its body may not run
    return f;
  }
  return First::none;
}

}  // namespace

// A loop whose body ends with copy(src, dst) may swap the two vectors' buffers instead of
// copying, when every iteration overwrites src (an `out` slice of an earlier leaf) before
// anything reads it, and src is not read whole or with a halo (replicas and halo buffers of its
// own would go stale). The executor restores copy semantics when the loop ends (one copy then).
std::set<const NodeImpl*> swap_copies(const NodeImpl& root, const Analysis& an) {
  std::set<const NodeImpl*> out;
  visit(root, [&](const NodeImpl& n) {
    const auto* loop = dynamic_cast<const LoopNode*>(&n);
    if (!loop) return;
    const NodeImpl& body = loop->body();
    if (!dynamic_cast<const PipelineNode*>(&body) || body.children.size() < 2) return;
    const NodeImpl& last = *body.children.back();
    if (!dynamic_cast<const CopyNode*>(&last) || last.args.size() != 2) return;
    const VectorState* src = last.args[0].vector.get();
    const VectorState* dst = last.args[1].vector.get();
    if (!src || !dst || src == dst || !an.index.count(src) || !an.index.count(dst)) return;
    const VectorUse& s = an.use(src);
    if (s.read_whole || s.read_halo || !an.use(dst).partitioned) return;
    for (std::size_t i = 0; i + 1 < body.children.size(); ++i) {
      const First f = first_use(*body.children[i], src);
      if (f == First::none) continue;
      if (f == First::written) out.insert(&last);
      return;
    }
  });
  return out;
}

}  // namespace sinew::detail
