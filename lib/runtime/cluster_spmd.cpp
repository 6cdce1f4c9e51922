// runtime/cluster_spmd.cpp — that every rank runs the same thing (Cluster::run is SPMD): each
// rank's tree and bindings as a few hashes, gathered to every rank and compared with the root's
// before any device work, so that ranks running different trees or bindings are refused on every
// rank, naming them, instead of computing something nobody asked for. Values in the tree (scalar
// arguments, node settings) may differ on purpose (a rank's own tuning for its devices): the
// root's log says which ranks have others. Built only with SINEW_MPI.
#include "platform/hash.hpp"
#include "runtime/cluster_run.hpp"

#include <map>
#include <sstream>

namespace sinew::detail {

namespace {

// Which of the tree's vectors each binding names: the vectors by order of first appearance in the
// tree's arguments (names may differ between ranks; the order does not).
std::map<const VectorState*, std::size_t> tree_vectors(const NodeImpl& root) {
  std::map<const VectorState*, std::size_t> order;
  visit(root, [&](const NodeImpl& n) {
    for (const auto& a : n.args)
      if (a.vector) order.emplace(a.vector.get(), order.size());
  });
  return order;
}

RunFingerprint fingerprint(const ClusterRun& run) {
  RunFingerprint f;
  f.tree = Hasher().add(run.tree.signature()).value();
  std::map<const VectorState*, std::size_t> order;
  if (const auto root = run.tree.impl()) {
    // The values the signature leaves out: scalar arguments and every node's settings.
    std::ostringstream values;
    visit(*root, [&](const NodeImpl& n) {
      n.dump_settings(values);
      for (const auto& a : n.args)
        if (a.kind == Arg::Kind::scalar)
          values << "|" << std::string(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
      values << ";";
    });
    f.values = Hasher().add(values.str()).value();
    order = tree_vectors(*root);
  }
  std::ostringstream bindings;
  bindings << run.bindings.size() << ";";
  for (const auto& b : run.bindings) {
    if (b.vector) {
      const auto at = order.find(b.vector.get());
      bindings << "v" << (at == order.end() ? std::string("?") : std::to_string(at->second));
    } else if (b.result) {
      bindings << "r" << b.result->name;
    }
    bindings << ":" << b.type.name << "/" << b.type.size << ";";
  }
  f.bindings = Hasher().add(bindings.str()).value();
  return f;
}

}  // namespace

std::vector<RunFingerprint> gather_fingerprints(ClusterRun& run) {
  const RunFingerprint mine = fingerprint(run);
  const std::uint64_t words[3] = {mine.tree, mine.values, mine.bindings};
  std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(run.c.ranks));
  run.c.timed("comparing every rank's tree", [&](MPI_Request* r) {
    return MPI_Iallgather(words, 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, run.c.comm, r);
  });
  std::vector<RunFingerprint> out;
  for (std::size_t r = 0; r < all.size(); r += 3) out.push_back({all[r], all[r + 1], all[r + 2]});
  return out;
}

void check_same_run(const std::vector<RunFingerprint>& all) {
  std::string differences;
  for (std::size_t r = 1; r < all.size(); ++r) {
    std::string parts;
    if (all[r].tree != all[0].tree) parts = "the tree's structure or kernels";
    if (all[r].bindings != all[0].bindings)
      parts += (parts.empty() ? "" : ", ") + std::string("the bindings (which vectors and results, in which order, of "
                                                         "which type)");
    if (!parts.empty()) differences += (differences.empty() ? "" : "; ") + ("rank " + std::to_string(r) + ": " + parts);
  }
  if (differences.empty()) return;
  throw_error(errc::invalid_argument,
              "the ranks do not run the same tree: every rank calls Cluster::run with the same tree and bindings, "
              "and these differ from the root's (" + differences + ")",
              {.node = "cluster",
               .fix = "build the same tree on every rank (the same kernels in the same nodes) and bind the same "
                      "vectors and results in the same order; only the root's data are read"});
}

std::string ranks_with_other_values(const std::vector<RunFingerprint>& all) {
  std::string ranks;
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r].values != all[0].values) ranks += (ranks.empty() ? "rank " : ", ") + std::to_string(r);
  return ranks;
}

}  // namespace sinew::detail
