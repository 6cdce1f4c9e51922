// schedule/prepared.cpp — preparing a tree once per binding shape, and running it: measure() and
// the training search on scratch copies.
#include "schedule/prepared.hpp"

#include "decompose/schedule_policy.hpp"
#include "exec/executor.hpp"
#include "exec/resident_array.hpp"
#include "platform/error.hpp"
#include "schedule/resident_scratch.hpp"
#include "schedule/train_whole.hpp"
#include "schedule/trainer.hpp"
#include "tree/nodes/kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <string>

namespace sinew::detail {

PreparedTree::Planned PreparedTree::planned(const Config& config, const std::vector<DeviceInfo>& devices) const {
  {
    std::lock_guard lock(mutex_);  // (a NaN share equals nothing: such a plan is never found)
    if (last_ && last_->first == config) return last_->second;
  }
  // Only plans decompose() accepts are kept (a NaN share would compare equal to any other).
  const bool keepable = std::all_of(config.shares.begin(), config.shares.end(),
                                    [](double s) { return std::isfinite(s) && s >= 0; });
  const SchedulePolicy& policy = schedule_policy_of(config);
  policy.check_tree(analysis, config);
  Key key{config.shares, config.fission, config.overlap, config.schedule, config.items};
  if (keepable) {
    std::lock_guard lock(mutex_);
    if (auto it = plans_.find(key); it != plans_.end()) {
      last_.emplace(config, it->second);
      return it->second;
    }
  }
  auto d = std::make_shared<Decomposition>(decompose(analysis.units, plan_granule(config), config, devices, streaming));
  d->explained = d->explain(devices);
  Planned made{std::move(d), policy.new_memory()};
  if (!keepable) return made;
  std::lock_guard lock(mutex_);
  // A bound for plans that keep changing (a balancer moving work): the oldest are dropped, with
  // what their schedules learnt (a run holding it keeps it).
  if (plans_.size() >= 64) plans_.clear();
  const Planned& kept = plans_.emplace(std::move(key), std::move(made)).first->second;
  last_.emplace(config, kept);
  return kept;
}

std::shared_ptr<const Decomposition> PreparedTree::decomposition(const Config& config,
                                                                 const std::vector<DeviceInfo>& devices) const {
  return planned(config, devices).decomposition;
}

std::size_t PreparedTree::plan_granule(const Config& config) const {
  return plan_granularity(root(), granule, config);
}

Config PreparedTree::fitted(const Config& config, const std::vector<DeviceInfo>& devices) const {
  // A plan the devices hold stays as it is (fit_memory's room keeps a granule of slack).
  try {
    decomposition(config, devices);
    return config;
  } catch (const MemoryShortfall&) {
  }
  return fit_memory(config, analysis.units, plan_granule(config), devices, streaming);
}

namespace {

// The bytes per unit a discrete device's chunks stream: a resident array's slices stay on the
// device between runs, so they are not cut into chunks for it. Chunks overlap a run's transfers
// with its kernels; a run whose partitioned data is all resident moves nothing after its first,
// and every chunk would cost each later run a launch and a smaller, less efficient kernel
// (docs/decisions/178).
std::size_t streamed_bytes_per_unit(const Analysis& an, const std::set<const VectorState*>& resident) {
  std::size_t bytes = 0;
  for (const VectorUse& u : an.vectors)
    if (u.partitioned && !resident.count(u.vector.get())) bytes += u.vector->unit * u.vector->type.size;
  return bytes;
}

}  // namespace

std::shared_ptr<const PreparedTree> prepare_tree(const Node& tree, const std::vector<Binding>& bindings,
                                                 const std::vector<DeviceInfo>& devices,
                                                 std::optional<double> pinned_fraction, std::size_t chunk_bytes,
                                                 const ScheduleTuning& tuning) {
  auto p = std::make_shared<PreparedTree>();
  p->tree = tree;
  p->analysis = analyze(p->root(), bindings);
  p->granule = granularity(p->root(), p->analysis, devices);
  // Partitions that refresh a replica of what they write (N-Body, a Jacobi sweep reading its grid
  // whole) keep a discrete device's share on one queue, as those exchanging halos do: more queues
  // on one device only add refreshes between them, and one partition holding a whole vector
  // refreshes nothing (RunState::replica_in_slice).
  p->streaming = {.streamable = p->analysis.streamable, .bytes_per_unit = p->analysis.bytes_per_unit,
                  .chunk_bytes = chunk_bytes,
                  .one_queue = p->analysis.exchanges_halos || p->analysis.refreshes_replicas,
                  .footprint = memory_footprint(p->root(), p->analysis), .joined = p->analysis.joined,
                  .tuning = checked_tuning(tuning)};
  p->signature = tree.signature();
  p->label = tree.label();
  // Where a device keeps copies, a vector bound to a resident array is planned for resident data
  // (docs/decisions/148); where every device uses the host copy in place, residency moves nothing.
  std::set<const VectorState*> resident;
  if (std::any_of(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.discrete; }))
    for (const Binding& b : bindings)
      if (b.array && b.vector) resident.insert(b.vector.get());
  p->streaming.bytes_per_unit = streamed_bytes_per_unit(p->analysis, resident);
  p->all_resident = !resident.empty() && p->streaming.bytes_per_unit == 0;
  p->features = input_features(p->root(), p->analysis, pinned_fraction, resident);
  return p;
}

Report measure(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings, const Config& config,
               bool profile, std::uint8_t poison, Exchanger* exchanger) {
  // A plan from the knowledge base, the trainer or the balancer that gives a device more of a tree
  // that cannot stream than its memory holds runs with the excess moved (a given plan was checked
  // as it came: this leaves it as it is).
  const Config fitted = p.fitted(config, env.infos);
  const PreparedTree::Planned plan = p.planned(fitted, env.infos);
  auto dec = plan.decomposition;
  if (exchanger) {  // the process's own units only, numbered as in the whole tree
    auto part = std::make_shared<Decomposition>(
        decompose(exchanger->units, p.plan_granule(fitted), fitted, env.infos, p.streaming));
    for (auto& q : part->parts) q.first += exchanger->first;
    part->explained = part->explain(env.infos);
    dec = std::move(part);
  }
  // (A process's part of a larger run keeps nothing between runs: its decomposition is its own.)
  ScheduleMemory* memory = exchanger ? nullptr : plan.schedule_memory.get();
  const auto t0 = std::chrono::steady_clock::now();
  const RunSettings settings{.profile = profile, .poison = poison, .exchanger = exchanger, .schedule_memory = memory};
  // A run of one process goes through the tree's kept run state: an identical run reuses the one
  // before it (exec/kept_run.hpp).
  Report rep = exchanger ? execute(env, p.root(), p.analysis, bindings, *dec, settings)
                         : p.kept_run.execute(env, p.root(), p.analysis, bindings, dec, settings);
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

std::vector<double> device_times(const Report& r) {
  return r.device_ms.size() == r.config.shares.size() ? r.device_ms : std::vector<double>{};
}

namespace {

// Scratch copies of what a tree writes (inputs it only reads are shared): bindings of the same
// shapes as the caller's, so the prepared tree's analysis serves them as it is. A copy of pinned
// data is pinned too, so that the runs on the copies cost what runs on the caller's data cost
// (docs/decisions/080). With `keep_resident`, a written resident array's copy is a resident array
// too (schedule/resident_scratch.hpp), and one only read stays bound: runs on the copies move
// what runs on the caller's arrays would (docs/decisions/149); else every copy is host memory.
struct ScratchCopies {
  std::vector<Binding> bindings;
  std::vector<std::vector<unsigned char>> copies;
  std::vector<std::shared_ptr<PinnedBlock>> pinned_copies;
  std::vector<ResidentScratch> resident_copies;
  struct Copied {
    std::size_t binding;
    void* copy;
    const void* original;
    std::size_t bytes;
  };
  std::vector<Copied> copied;

  ScratchCopies(Environment& env, const PreparedTree& p, const std::vector<Binding>& original,
                bool keep_resident = false)
      : bindings(original) {
    copies.reserve(bindings.size());
    resident_copies.reserve(bindings.size());
    for (std::size_t i = 0; i < bindings.size(); ++i) {
      Binding& b = bindings[i];
      const bool written = b.result || (b.vector && p.analysis.use(b.vector.get()).written);
      if (!written) continue;
      const std::size_t bytes = b.elements * b.type.size;
      // A resident array's copy is made from its host copy, brought up to date (the request
      // holds the array's turn).
      if (b.array) b.array->bring_home(0, bytes);
      if (b.array && keep_resident) {
        b.array = resident_copies.emplace_back(env, *b.array).array();
        b.data = b.array->host();
        continue;
      }
      b.array = nullptr;
      void* copy = nullptr;
      if (b.vector && env.allocate_pinned && env.is_pinned && env.is_pinned(b.data, bytes)) {
        pinned_copies.push_back(env.allocate_pinned(bytes));
        copy = pinned_copies.back()->data;
      } else {
        copy = copies.emplace_back(bytes).data();
      }
      copied.push_back({i, copy, b.data, bytes});
      b.data = copy;
    }
  }
  // Each copy as the original is now.
  void restore() {
    for (const auto& c : copied) std::memcpy(c.copy, c.original, c.bytes);
    for (ResidentScratch& r : resident_copies) r.restore();
  }
  // Whether a run on these bindings uses resident arrays (its first run of a plan places them).
  bool resident() const {
    return std::any_of(bindings.begin(), bindings.end(), [](const Binding& b) { return b.array != nullptr; });
  }
};

}  // namespace

namespace {

void add_copies(Copies& sum, const Copies& run) {
  for (auto [to, from] : {std::pair{&sum.to_device, &run.to_device}, std::pair{&sum.to_host, &run.to_host},
                          std::pair{&sum.host, &run.host}, std::pair{&sum.device, &run.device},
                          std::pair{&sum.values, &run.values}}) {
    to->count += from->count;
    to->bytes += from->bytes;
  }
}

// A training's run of `config`: where a device cannot hold its share (a tree's runners may take
// more than its footprint: a scan's levels, a divide-and-conquer node's buffers), the plan runs
// without that device, its share spread over the others by theirs. Throws the device's
// MemoryShortfall where no other device has a share. A plan run so is said once (`said`).
Report run_held(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings, Config config,
                const Progress& progress, std::set<std::string>& said) {
  for (;;) {
    try {
      return measure(env, p, bindings, config);
    } catch (const MemoryShortfall& shortfall) {
      const std::size_t d = shortfall.device_index;
      double others = 0;
      for (std::size_t i = 0; i < config.shares.size(); ++i)
        if (i != d) others += config.shares[i];
      if (d >= config.shares.size() || !(config.shares[d] > 0) || !(others > 0)) throw;
      const std::string asked = config.str();
      config.shares[d] = 0;
      for (double& s : config.shares) s /= others;
      if (progress && said.insert(asked).second)
        progress(env.infos.at(d).id() + " cannot hold its share of " + asked + " in " + memory_text(env.infos.at(d)) +
                 ": runs without it, " + config.str());
    }
  }
}

}  // namespace

namespace {

// The vectors of the tree's leaves marked whole_range(), which their device holds whole.
WholeLeafNeeds whole_leaf_needs(const PreparedTree& p) {
  std::set<const VectorState*> counted;
  WholeLeafNeeds needs;
  visit(p.root(), [&](const NodeImpl& n) {
    if (!n.runs_whole()) return;
    for (const Arg& a : n.args) {
      if (a.kind != Arg::Kind::partitioned || !counted.insert(a.vector.get()).second) continue;
      const std::uint64_t bytes = p.analysis.use(a.vector.get()).bytes();
      needs.bytes += bytes;
      needs.largest = std::max(needs.largest, bytes);
    }
  });
  return needs;
}

}  // namespace

bool moved_pointer_leaves(const PreparedTree& p) {
  return !p.streaming.one_queue && !p.streaming.streamable && moves_pointers_off_the_start(p.root());
}

TrainingResult train_on_copies(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings,
                               const TrainingOptions& options, const Progress& progress,
                               const std::optional<Config>& start, const std::function<void(KbRun&)>& record) {
  ScratchCopies scratch(env, p, bindings, true);
  std::set<std::string> said;
  Copies timed_copies;
  std::string placed;  // the plan whose decomposition the resident arrays are in
  auto execute = [&](const Config& c, bool timed) {
    // Resident data is judged resident: a plan's first run places the arrays in its
    // decomposition, untimed, so that its timed runs move only what its own runs would
    // (docs/decisions/149).
    if (timed && scratch.resident() && placed != c.str()) {
      scratch.restore();
      run_held(env, p, scratch.bindings, c, progress, said);
    }
    placed = c.str();
    scratch.restore();
    const double built_before = env.programs ? env.programs->stats().build_seconds : 0;
    const Report r = run_held(env, p, scratch.bindings, c, progress, said);
    if (timed) add_copies(timed_copies, r.copies);
    const double built_s = env.programs ? env.programs->stats().build_seconds - built_before : 0;
    if (record && timed) {
      KbRun run;
      run.features = p.features;
      run.config = r.config;  // as it ran: fitted to the devices' memory
      run.time_ms = r.wall_ms;
      run.partition_ms = partition_times(r);
      run.device_ms = device_times(r);
      record(run);
    }
    Measurement m{r.wall_ms, r.device_ms, {}, r.config, std::min(r.wall_ms, 1000 * built_s), p.analysis.units};
    for (const LevelReport& l : r.levels) {
      if (m.level_ms.size() <= l.level) m.level_ms.resize(l.level + 1);
      m.level_ms[l.level] += l.ms;
    }
    return m;
  };
  const Measure measured = [&](const Config& c) { return execute(c, true); };
  const Measure untimed = [&](const Config& c) { return execute(c, false); };
  // The trainer a node kind names for what it adds to a plan (a divide-and-conquer crossover:
  // the deepest such node's levels, if several), else the strategy's.
  std::string_view tree_trainer;
  std::vector<std::size_t> levels;
  visit(p.root(), [&](const NodeImpl& n) {
    if (n.trainer().empty()) return;
    const NodeImpl::LevelShape shape = n.level_shape(p.analysis);
    if (shape.subproblem_units.size() <= levels.size()) return;
    levels.clear();
    for (std::size_t l = 0; l < shape.subproblem_units.size(); ++l) levels.push_back(shape.subproblems(l));
    tree_trainer = n.trainer();
  });
  TrainingOptions o = options;
  // Policies that measure their own plans beside the static ones, where they run the tree.
  o.dynamic = false;
  for (const SchedulePolicy* policy : schedule_policies())
    o.dynamic = o.dynamic || (policy->trains() && policy->accepts(p.analysis));
  o.moved_pointer_leaves = moved_pointer_leaves(p);
  o.one_queue = p.streaming.one_queue;
  o.keeps_lowest_level = p.keeps_lowest_level();
  const Trainer& trainer = trainer_for(o, tree_trainer);
  // A whole leaf's device is chosen after the trainer's plan, with executions kept from its budget.
  std::vector<std::size_t> whole_candidates;
  if (!p.analysis.whole_range.empty()) whole_candidates = devices_holding(env.infos, whole_leaf_needs(p));
  const std::size_t limit = trainer.executions(o);
  TrainingOptions own = o;
  if (const std::size_t kept = whole_device_runs(whole_candidates, o); kept && limit > kept)
    own.max_executions = limit - kept;
  const TrainingRequest request{.devices = env.infos, .measure = measured, .untimed = untimed, .options = own,
                                .progress = progress, .start = start, .levels = levels};
  TrainingResult result = trainer.train(request);
  if (!whole_candidates.empty()) choose_whole_device(result, env.infos, whole_candidates, measured, o, limit, progress);
  result.timed_copies = timed_copies;
  return result;
}

namespace {

// ", partition #i on cpu:1 (name), units [a, b)": the partition of each of the poison check's two
// runs that held `unit`. Where the runs cut their chunks as they went (the dynamic schedule), the
// two may differ: the unit read poison next to the edge of either, so both are named.
std::string partition_holding(const Environment& env, const Report& first, const Report& second, std::size_t unit) {
  auto holding = [&](const Report& r) -> std::string {
    for (const auto& part : r.partitions)
      if (unit >= part.first && unit < part.first + part.units)
        return "partition " + std::to_string(part.index) + " on " + env.infos.at(part.device).id() + " (" +
               part.device_name + "), units [" + std::to_string(part.first) + ", " +
               std::to_string(part.first + part.units) + ")";
    return "";
  };
  const std::string in_first = holding(first), in_second = holding(second);
  if (in_first == in_second) return in_second.empty() ? "" : ", " + in_second;
  return ", " + (in_first.empty() ? std::string() : in_first + " in the first run") +
         (in_first.empty() || in_second.empty() ? "" : ", ") +
         (in_second.empty() ? std::string() : in_second + " in the second");
}

}  // namespace

Report measure_checked(Environment& env, const PreparedTree& p, const std::vector<Binding>& bindings,
                       const Config& config, bool profile, Exchanger* exchanger) {
  // Two poisons whose bytes differ in every bit: a float, int or char read from a guard differs.
  constexpr std::uint8_t kFirst = 0x5A, kSecond = 0xA5;
  ScratchCopies scratch(env, p, bindings);
  scratch.restore();
  const Report first = measure(env, p, scratch.bindings, config, profile, kFirst, exchanger);
  Report rep = measure(env, p, bindings, config, profile, kSecond, exchanger);
  auto fail = [&](const std::string& what, const std::string& argument) {
    throw_error(errc::invalid_tree,
                what + " differs between two runs of the same plan whose slices and halos were surrounded by "
                       "different poison bytes: a kernel reads outside its slice and its declared halo (correct "
                       "on a CPU that reads the host memory in place, wrong on a GPU)",
                {.node = p.label, .argument = argument,
                 .fix = "read neighbouring units through sinew::halo(v, before, after) (or the whole vector "
                        "through sinew::whole(v)), index a slice only from 0 to count(v), and write every "
                        "element of an out() slice"});
  };
  for (const auto& c : scratch.copied) {
    const Binding& b = bindings[c.binding];
    if (b.array) b.array->bring_home(0, c.bytes);  // what the devices hold, to compare
    if (!b.vector || std::memcmp(c.copy, b.data, c.bytes) == 0) continue;
    const auto* x = static_cast<const unsigned char*>(c.copy);
    const auto* y = static_cast<const unsigned char*>(b.data);
    std::size_t at = 0;
    while (x[at] == y[at]) ++at;
    const std::size_t element = at / b.type.size, unit = element / b.vector->unit;
    std::string where = "element " + std::to_string(element) + " of vector '" + b.vector->name + "' (unit " +
                        std::to_string(unit) + partition_holding(env, first, rep, unit);
    fail(where + ")", "vector '" + b.vector->name + "'");
  }
  for (const auto& [name, value] : rep.results) {
    auto other = first.results.find(name);
    if (other == first.results.end() || other->second.bytes != value.bytes)
      fail("result '" + name + "'", "result '" + name + "'");
  }
  return rep;
}

}  // namespace sinew::detail
