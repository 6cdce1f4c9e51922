// schedule/prepared.cpp — preparing a tree once per binding shape, and running it: measure() and
// the training search on scratch copies.
#include "schedule/prepared.hpp"

#include "exec/executor.hpp"

#include <chrono>
#include <cmath>
#include <cstring>

namespace sinew::detail {

std::shared_ptr<const Decomposition> PreparedTree::decomposition(const Config& config,
                                                                 const std::vector<DeviceInfo>& devices) const {
  // Only plans decompose() accepts are kept (a NaN share would compare equal to any other).
  const bool keepable = std::all_of(config.shares.begin(), config.shares.end(),
                                    [](double s) { return std::isfinite(s) && s >= 0; });
  Key key{config.shares, config.fission, config.overlap};
  if (keepable) {
    std::lock_guard lock(mutex_);
    if (auto it = decompositions_.find(key); it != decompositions_.end()) return it->second;
  }
  auto d = std::make_shared<Decomposition>(decompose(analysis.units, granule, config, devices, streaming));
  d->explained = d->explain(devices);
  if (!keepable) return d;
  std::lock_guard lock(mutex_);
  // A bound for plans that keep changing (a balancer moving work): the oldest are dropped.
  if (decompositions_.size() >= 64) decompositions_.clear();
  decompositions_.emplace(std::move(key), d);
  return d;
}

std::shared_ptr<const PreparedTree> prepare_tree(const Node& tree, const std::vector<Binding>& bindings,
                                                 const std::vector<DeviceInfo>& devices,
                                                 std::optional<double> pinned_fraction, std::size_t chunk_bytes) {
  auto p = std::make_shared<PreparedTree>();
  p->tree = tree;
  p->analysis = analyze(p->root(), bindings);
  p->granule = granularity(p->root(), p->analysis, devices);
  p->streaming = {.streamable = p->analysis.streamable, .bytes_per_unit = p->analysis.bytes_per_unit,
                  .chunk_bytes = chunk_bytes};
  p->signature = tree.signature();
  p->label = tree.label();
  p->features = input_features(p->root(), p->analysis, pinned_fraction);
  return p;
}

Report measure(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings, const Config& config,
               bool profile) {
  const auto dec = p.decomposition(config, env.infos);
  const auto t0 = std::chrono::steady_clock::now();
  Report rep = execute(env, p.root(), p.analysis, bindings, *dec, profile);
  rep.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  rep.tree = p.label;
  return rep;
}

std::vector<double> partition_times(const Report& r) {
  std::vector<double> out;
  if (r.profiled)
    for (const auto& p : r.partitions) out.push_back(p.ms);
  return out;
}

TrainingResult train_on_copies(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings,
                               const TrainingOptions& options, const Progress& progress,
                               const std::optional<Config>& start, const std::function<void(KbRun&)>& record) {
  // Scratch copies of what the tree writes; inputs it only reads are shared. A copy of pinned
  // data is pinned too: GPUs read pageable memory 4-7x slower, and a training on pageable copies
  // of pinned data found plans for the wrong machine. The copies have the bindings' shapes, so
  // the prepared tree's analysis serves them as it is.
  std::vector<Binding> scratch = bindings;
  std::vector<std::vector<unsigned char>> copies;
  std::vector<std::shared_ptr<PinnedBlock>> pinned_copies;
  copies.reserve(bindings.size());
  std::vector<std::pair<void*, const void*>> restore;  // scratch <- original, before every run
  std::vector<std::size_t> sizes;
  for (auto& b : scratch) {
    const bool written = b.result || (b.vector && p.analysis.use(b.vector.get()).written);
    if (!written) continue;
    const std::size_t bytes = b.elements * b.type.size;
    void* copy = nullptr;
    if (b.vector && env.allocate_pinned && env.is_pinned && env.is_pinned(b.data, bytes)) {
      pinned_copies.push_back(env.allocate_pinned(bytes));
      copy = pinned_copies.back()->data;
    } else {
      copies.emplace_back(bytes);
      copy = copies.back().data();
    }
    restore.emplace_back(copy, b.data);
    sizes.push_back(bytes);
    b.data = copy;
  }
  Measure measured = [&](const Config& c) {
    for (std::size_t i = 0; i < restore.size(); ++i) std::memcpy(restore[i].first, restore[i].second, sizes[i]);
    const Report r = measure(env, p, scratch, c);
    if (record) {
      KbRun run;
      run.features = p.features;
      run.config = c;
      run.time_ms = r.wall_ms;
      run.partition_ms = partition_times(r);
      record(run);
    }
    return Measurement{r.wall_ms, r.device_ms};
  };
  return train(env.infos, measured, options, progress, start);
}

}  // namespace sinew::detail
