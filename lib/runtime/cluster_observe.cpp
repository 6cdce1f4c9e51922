// runtime/cluster_observe.cpp — the observe stage of Cluster::run: every rank's time and devices
// to every rank, for the report and the next run's shares. The rank split's balancer (kept in the
// rank Runtime's store, LearnedStore::rank_splits()) is the device balancer, made by the one
// make_balancer (schedule/balancer_registry.hpp) with the rank Runtime's BalancerSettings, each
// rank one of its devices and the rank's own run time that device's: one rule moves work between
// ranks and between a rank's devices. Where the shares that
// ran are not its plan (given shares, stored ones, distributed data, a new Cluster), it starts over
// from them: its models are of the plan it watched. The root stores the shares it plans in its
// knowledge base (tree "cluster:<signature>", provenance balanced), with the run. Nothing is
// stored for a failed run. Built only with SINEW_MPI.
#include "runtime/cluster_run.hpp"
#include "runtime/runtime_impl.hpp"
#include "schedule/balancer_registry.hpp"

#include <sinew/version.hpp>

#include <algorithm>

namespace sinew::detail {

namespace {

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const auto& d : devices) s += (s.empty() ? "" : ", ") + d.id() + " (" + d.name + ")";
  return s;
}

// This rank's own time: its busiest device's. A joined run's waits for the other ranks in
// exchanges are taken out, or every rank would measure the slowest one's time.
double own_time(const ClusterRun& run) {
  const auto& d = run.report.local.device_ms;
  double busy = d.empty() ? run.report.local.wall_ms : *std::max_element(d.begin(), d.end());
  if (busy <= 0) busy = run.report.local.wall_ms;
  if (run.exchanger) busy = std::max(busy - run.exchanger->waited_ms, 0.01 * busy);
  return busy;
}

// After a run in which every rank finished: each rank's time (ms, 0 for a rank without units)
// observed by the tree's rank balancer (a new one where the shares that ran are not its plan);
// its plan for the next run. No level-2 retraining: a search over the ranks would make every rank
// follow it.
std::vector<double> next_shares(ClusterRun& run, const std::vector<double>& rank_ms) {
  Cluster::Impl& c = run.c;
  const std::vector<double>& ran = run.rank_plan.shares;
  auto& splits = c.runtime->impl().learned().rank_splits();
  auto rank_split = splits.find(run.rank_key());
  if (!rank_split || rank_split->balancer->config().shares != ran) {
    rank_split = std::make_shared<RankSplit>(
        make_balancer(rank_stand_ins(ran.size()), Config{ran}, c.runtime->options().balancer));
    splits.put(run.rank_key(), rank_split);
  }
  const auto step = rank_split->balancer->observe(rank_ms, {});
  const RuntimeOptions& o = c.runtime->options();
  if (step.event && run.root && o.log && !o.quiet.value_or(false))
    o.log(LogLevel::info, "cluster: the rank shares move from " + step.event->before.str() + " to " +
                              step.event->after.str() + " for the next run");
  return rank_split->balancer->config().shares;
}

// The run (each rank's time as a partition time) and the shares its throughput suggests, in the
// root's knowledge base. The knowledge base never stops a run: a failure is a warning.
void store_shares(const ClusterRun& run) {
  const RuntimeOptions& o = run.c.runtime->options();
  try {
    auto& k = run.c.runtime->impl().knowledge_base();
    const KbKey key{Cluster::Impl::cluster_tree(run.prepared->signature), run.c.device_set, version};
    double slowest = 0;
    std::vector<double> ms;
    for (const auto& r : run.report.shares) {
      ms.push_back(r.ms);
      slowest = std::max(slowest, r.ms);
    }
    const KbFeatures& features = run.prepared->features;
    k.record_run(KbRun{.key = key, .features = features, .config = run.rank_plan, .time_ms = slowest,
                       .partition_ms = ms, .purpose = "execution"});
    k.store_entry(KbEntry{.key = key, .features = features, .config = Config{run.report.next_shares},
                          .time_ms = slowest, .provenance = Provenance::balanced, .strategy = "cluster throughput"});
    k.describe_tree(key.tree, "cluster(" + run.tree.label() + ")", run.tree.dump());
  } catch (const Error& e) {
    o.log(LogLevel::warning, std::string("cluster: the knowledge base failed: ") + e.what());
  }
}

}  // namespace

void observe_ranks(ClusterRun& run) {
  Cluster::Impl& c = run.c;
  const auto gathered = c.allgather(join({std::to_string(own_time(run)), describe_devices(c.runtime->devices())}));
  std::vector<double> rank_ms(static_cast<std::size_t>(c.ranks));
  bool timed_all = true;
  for (int q = 0; q < c.ranks; ++q) {
    const auto f = split(gathered[q]);
    const double ms = std::stod(f.at(0));
    run.report.shares.push_back({q, run.first[q], run.units[q], run.rank_plan.shares[q], ms, f.at(1)});
    rank_ms[q] = run.units[q] ? ms : 0;  // the balancer's idle device
    timed_all = timed_all && (!run.units[q] || ms > 0);
  }
  if (!timed_all) return;  // a rank with units but no time (nothing ran) says nothing
  run.report.next_shares = next_shares(run, rank_ms);
  if (run.root) store_shares(run);
}

}  // namespace sinew::detail
