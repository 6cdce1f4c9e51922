// kb/trees.cpp — the trees the knowledge base knows: their descriptions (a label and the tree's
// Node::dump() text) and a summary of each (counts of entries, runs and events, last activity).
#include <sinew/kb.hpp>

#include "kb/check.hpp"
#include "kb/store.hpp"
#include "kb/utc.hpp"

namespace sinew {

using namespace detail::kb;  // this module's internals (kb/*.hpp)

void KnowledgeBase::describe_tree(const std::string& tree, const std::string& label, const std::string& description) {
  if (tree.empty()) invalid("describe_tree: no tree signature");
  impl_->locked("describing a tree", [&] {
    {
      // Called for every request: a read when nothing changed, so no write lock is taken.
      auto known = impl_->db.prepare("SELECT 1 FROM trees WHERE tree = ? AND label = ? AND description = ?");
      known.bind_all(tree, label, description);
      if (known.step()) return;
    }
    auto s = impl_->db.prepare(
        "INSERT INTO trees (tree, label, description, created) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (tree) DO UPDATE SET label = excluded.label, description = excluded.description");
    s.bind_all(tree, label, description, utc_now());
    s.run();
  });
}

namespace {
constexpr const char* kAllTrees = "SELECT tree FROM entries UNION SELECT tree FROM runs UNION SELECT tree FROM trees";
}

std::vector<KbTreeSummary> KnowledgeBase::trees() const {
  return impl_->locked("listing trees", [&] {
    auto s = impl_->db.prepare(std::string("WITH t (tree) AS (") + kAllTrees +
                               ") SELECT t.tree, coalesce(d.label, ''), coalesce(d.description, ''), "
                               "(SELECT count(*) FROM entries e WHERE e.tree = t.tree), "
                               "(SELECT count(*) FROM runs r WHERE r.tree = t.tree), "
                               "(SELECT count(*) FROM events v JOIN entries e ON v.entry = e.id WHERE e.tree = t.tree), "
                               "max(coalesce((SELECT max(updated) FROM entries e WHERE e.tree = t.tree), ''), "
                               "    coalesce((SELECT max(created) FROM runs r WHERE r.tree = t.tree), '')) AS last "
                               "FROM t LEFT JOIN trees d ON d.tree = t.tree ORDER BY last DESC, t.tree");
    std::vector<KbTreeSummary> out;
    while (s.step())
      out.push_back({s.text(0), s.text(1), s.text(2), s.integer(3), s.integer(4), s.integer(5), s.text(6)});
    return out;
  });
}

std::vector<std::string> KnowledgeBase::match_trees(std::string_view prefix) const {
  return impl_->locked("listing trees", [&] {
    auto s = impl_->db.prepare(std::string("SELECT tree FROM (") + kAllTrees +
                               ") WHERE substr(tree, 1, length(?1)) = ?1 ORDER BY tree");
    s.bind(1, prefix);
    std::vector<std::string> out;
    while (s.step()) out.push_back(s.text(0));
    return out;
  });
}

}  // namespace sinew
