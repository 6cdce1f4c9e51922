// runtime/cluster_split.cpp — the rank split stage of Cluster::run: the rank shares from a chain
// of sources (runtime/source_chain.hpp; the root asks, every rank is told), then the units per
// rank in whole granules, checked alike on every rank. Built only with SINEW_MPI.
//
// The chain, in order: the blocks of distributed bindings (they lie where they lie), the given
// ClusterOptions::rank_shares, the plan of the tree's rank balancer in this runtime's store
// (measured by this Cluster's runs), the root's knowledge base (stored for this input, else
// derived from the tree's other inputs), else even shares.
#include "runtime/cluster_run.hpp"

#include "runtime/runtime_impl.hpp"
#include "runtime/source_chain.hpp"
#include "schedule/balancer.hpp"
#include "tree/nodes/divide_and_conquer.hpp"

#include <sinew/version.hpp>

#include <algorithm>

namespace sinew::detail {

const char* to_string(ShareSource source) {
  static constexpr const char* names[] = {"even", "given", "measured", "stored", "distributed", "derived"};
  return names[static_cast<int>(source)];
}

namespace {

class RankShareSource {
 public:
  virtual ~RankShareSource() = default;
  virtual std::string_view name() const = 0;
  virtual std::optional<RankShares> offer(const ClusterRun& run) const = 0;
};

class DistributedBlocks final : public RankShareSource {
 public:
  std::string_view name() const override { return "distributed"; }
  std::optional<RankShares> offer(const ClusterRun& run) const override {
    if (run.pinned.empty()) return std::nullopt;
    const std::size_t all = run.analysis().units;
    std::vector<double> shares(run.pinned.size());
    for (std::size_t r = 0; r < shares.size(); ++r) shares[r] = all ? static_cast<double>(run.pinned[r]) / all : 0;
    return RankShares{shares, ShareSource::distributed};
  }
};

class GivenShares final : public RankShareSource {
 public:
  std::string_view name() const override { return "given"; }
  std::optional<RankShares> offer(const ClusterRun& run) const override {
    if (run.c.options.rank_shares.empty()) return std::nullopt;
    return RankShares{run.c.options.rank_shares, ShareSource::given};
  }
};

class MeasuredShares final : public RankShareSource {
 public:
  std::string_view name() const override { return "measured"; }
  std::optional<RankShares> offer(const ClusterRun& run) const override {
    const auto split = run.c.runtime->impl().learned().rank_splits().find(run.rank_key());
    if (!split) return std::nullopt;
    return RankShares{split->balancer->config().shares, ShareSource::measured};
  }
};

// The root's knowledge base's rank shares for the tree and input, else derived from its other
// inputs' shares by the Runtime's interpolator (the cost model needs per-device runs; ranks have
// their nearest). The knowledge base never stops a run: a failure is a warning, and the next source answers.
class KnowledgeBaseShares final : public RankShareSource {
 public:
  std::string_view name() const override { return "knowledge base"; }
  std::optional<RankShares> offer(const ClusterRun& run) const override {
    const RuntimeOptions& o = run.c.runtime->options();
    try {
      auto& k = run.c.runtime->impl().knowledge_base();
      const KbKey key{Cluster::Impl::cluster_tree(run.prepared->signature), run.c.device_set, version};
      if (auto e = k.find(key, run.prepared->features)) return RankShares{e->config.shares, ShareSource::stored};
      const auto known = k.entries(key);
      if (known.empty()) return std::nullopt;
      const auto interpolator = make_interpolator(o.interpolation.value_or(Interpolation::nearest));
      auto d = interpolator->derive(known, run.prepared->features);
      if (d && d->config.shares.size() == static_cast<std::size_t>(run.c.ranks))
        return RankShares{d->config.shares, ShareSource::derived};
    } catch (const Error& e) {
      o.log(LogLevel::warning, std::string("cluster: the knowledge base failed: ") + e.what());
    }
    return std::nullopt;
  }
};

class EvenShares final : public RankShareSource {
 public:
  std::string_view name() const override { return "even"; }
  std::optional<RankShares> offer(const ClusterRun& run) const override {
    return RankShares{std::vector<double>(static_cast<std::size_t>(run.c.ranks), 1.0 / run.c.ranks), ShareSource::even};
  }
};

const SourceChain<RankShareSource>& rank_share_sources() {
  static const SourceChain<RankShareSource> chain = [] {
    SourceChain<RankShareSource> c;
    c.add(std::make_unique<DistributedBlocks>())
        .add(std::make_unique<GivenShares>())
        .add(std::make_unique<MeasuredShares>())
        .add(std::make_unique<KnowledgeBaseShares>())
        .add(std::make_unique<EvenShares>());
    return c;
  }();
  return chain;
}

// The fewest units a rank of a joined tree runs (every exchange is every rank's; a rank's halo
// units are its neighbours' alone), and the vector whose halo asks for more than one.
std::pair<std::size_t, std::string> joined_minimum(const Analysis& an) {
  std::pair<std::size_t, std::string> most{1, ""};
  for (const auto& u : an.vectors)
    if (u.read_halo && std::max(u.halo_before, u.halo_after) > most.first)
      most = {std::max(u.halo_before, u.halo_after), u.vector->name};
  return most;
}

// Shares the Cluster chose itself (measured by the balancer, stored or derived) may leave a rank of a
// joined tree idle (one rank alone is fastest): it gets the fewest units it must run, in whole
// granules, taken from the rank with the most. Shares the user gave are checked as given.
void lift_idle_ranks(std::vector<std::size_t>& units, std::size_t granule, std::size_t least) {
  const std::size_t need = (least + granule - 1) / granule * granule;
  for (auto& u : units) {
    if (u >= least) continue;
    auto& most = *std::max_element(units.begin(), units.end());
    const std::size_t moved = std::min(need - u, most > need ? most - need : 0);
    most -= moved;
    u += moved;
  }
}

// A joined tree: every rank runs units (each exchange is every rank's), at least a halo's width
// (a rank's halo units are its neighbours' alone), and MPI may be called from the worker that
// does an exchange.
void check_joined(const Analysis& an, const std::vector<std::size_t>& units, int thread_level, bool pinned) {
  if (thread_level < MPI_THREAD_SERIALIZED)
    throw_error(errc::invalid_tree,
                "cannot split this tree over ranks: its partitions exchange data as it runs, from the Runtime's "
                "threads, and MPI was initialised without MPI_THREAD_SERIALIZED",
                {.node = "cluster", .fix = "let the Cluster initialise MPI, or call MPI_Init_thread with "
                                           "MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE"});
  const auto [widest, widest_vector] = joined_minimum(an);
  for (std::size_t r = 0; r < units.size(); ++r)
    if (units[r] < widest)
      throw_error(errc::invalid_argument,
                  "cannot split this tree over ranks: rank " + std::to_string(r) + " gets " + std::to_string(units[r]) +
                      " units, and in a tree whose partitions meet every rank runs at least " +
                      (widest_vector.empty() ? std::string("one unit")
                                             : std::to_string(widest) + " (the halo of vector '" + widest_vector + "')"),
                  {.node = "cluster", .argument = "rank shares",
                   .fix = pinned ? "give every rank a larger block of the distributed vectors, or run fewer ranks"
                                 : "give every rank a larger share (ClusterOptions::rank_shares), or run fewer ranks"});
}

// The shares, chosen by the root (only it reads the knowledge base) and sent to every rank.
void choose_shares(ClusterRun& run) {
  run.shares.shares.assign(static_cast<std::size_t>(run.c.ranks), 1.0 / run.c.ranks);
  int from = static_cast<int>(ShareSource::even);
  if (run.root) {
    run.shares = rank_share_sources().first(run).answer;
    from = static_cast<int>(run.shares.from);
  }
  run.bcast(run.shares.shares.data(), run.c.ranks, MPI_DOUBLE, "the rank shares");
  run.bcast(&from, 1, MPI_INT, "the rank shares");
  run.shares.from = static_cast<ShareSource>(from);
  run.report.shares_from = to_string(run.shares.from);
}

// Whole granules per rank, the last active rank taking the rest, by the same rounding that splits
// a rank's units over its devices (decompose over stand-ins for the ranks).
void split_units(ClusterRun& run) {
  const Analysis& an = run.analysis();
  run.rank_plan = Config{run.shares.shares};
  if (run.crossover) set_crossover_item(run.rank_plan, *run.crossover);
  if (!run.pinned.empty()) {
    run.units = run.pinned;
  } else {
    const auto dec = decompose(an.units, run.granule, run.rank_plan, rank_stand_ins(static_cast<std::size_t>(run.c.ranks)));
    for (const auto& p : dec.parts) run.units[p.device] = p.units;
    const ShareSource from = run.shares.from;
    const bool chosen = from == ShareSource::measured || from == ShareSource::stored || from == ShareSource::derived;
    if (run.joined && chosen) lift_idle_ranks(run.units, run.granule, joined_minimum(an).first);
  }
  for (std::size_t r = 0, at = 0; r < run.units.size(); at += run.units[r++]) run.first[r] = at;  // ranks in order
  if (run.joined) check_joined(an, run.units, run.c.thread_level, !run.pinned.empty());
  // What one MPI message carries, checked here so no rank fails between collectives.
  for (int r = 0; r < run.c.ranks; ++r) as_int(run.first[r] + run.units[r], "units of rank " + std::to_string(r));
  for (const auto& u : an.vectors) {
    as_int(u.vector->unit * u.vector->type.size, "bytes per unit of vector '" + u.vector->name + "'");
    if (u.read_whole) as_int(u.elements, "elements of vector '" + u.vector->name + "'");
  }
}

}  // namespace

void split_ranks(ClusterRun& run) {
  const std::size_t ranks = static_cast<std::size_t>(run.c.ranks);
  run.first.assign(ranks, 0);
  run.units.assign(ranks, 0);
  choose_shares(run);
  run.c.together("splitting the units over the ranks", [&] { split_units(run); });
  run.counts.resize(ranks);
  run.displs.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    run.counts[r] = static_cast<int>(run.units[r]);
    run.displs[r] = static_cast<int>(run.first[r]);
  }
}

}  // namespace sinew::detail
