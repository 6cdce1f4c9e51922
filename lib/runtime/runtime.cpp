// runtime/runtime.cpp — the Runtime: owns devices, caches and queues; turns a request into a
// prepared tree (kept per tree and binding shapes), a plan and an asynchronous measure().
#include "exec/environment.hpp"
#include "platform/error.hpp"
#include "runtime/execute_part.hpp"
#include "schedule/balancer_registry.hpp"
#include "schedule/planner.hpp"
#include "schedule/prepared.hpp"

#include <sinew/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace sinew {

namespace detail {
namespace {
// The runtime's plan (RuntimeOptions::config, $SINEW_CONFIG), read against its devices: an error
// names the setting and its variable, since the plan is given far from any run.
Config default_plan(const std::string& text, const std::vector<DeviceInfo>& devices) {
  try {
    return Config::parse(text, devices);
  } catch (const Error& e) {
    const std::string where = "RuntimeOptions::config ($SINEW_CONFIG)";
    ErrorContext context = e.context();
    context.argument = context.argument.empty() ? where : where + ": " + context.argument;
    throw Error(e.code(), where + " = '" + text + "': " + e.message(), context);
  }
}
}  // namespace

class RuntimeImpl {
 public:
  explicit RuntimeImpl(RuntimeOptions options)
      : options_(options.effective()), programs_(*options_.disk_cache ? *options_.cache_dir : std::string()) {
    all_ = discover_devices(programs_, *options_.map_zero_copy);
    std::vector<DeviceInfo> found;
    for (auto& d : all_) found.push_back(d->info());
    std::vector<std::size_t> as_discrete;
    if (!options_.discrete->empty())
      as_discrete = select_devices(found, *options_.discrete, "RuntimeOptions::discrete ($SINEW_DISCRETE)");
    for (std::size_t i : select_devices(found, *options_.devices)) {
      if (std::find(as_discrete.begin(), as_discrete.end(), i) != as_discrete.end()) {
        DeviceInfo& info = all_[i]->mutable_info();  // driven like a GPU from now on
        info.discrete = true;
        info.fission_configs.clear();
        info.overlap_levels = {1, 2, 3, 4};
      }
      // The memory cap: the last item that selects the device wins.
      if (!options_.memory_cap->empty()) {
        const std::string where = "RuntimeOptions::memory_cap ($SINEW_MEMORY_CAP)";
        for (const auto& [selection, bytes] : parse::memory_caps(*options_.memory_cap, where)) {
          const auto chosen = select_devices(found, selection, where);
          if (std::find(chosen.begin(), chosen.end(), i) != chosen.end()) all_[i]->mutable_info().memory_cap = bytes;
        }
      }
      env_.devices.push_back(all_[i].get());
      DeviceInfo info = all_[i]->info();
      info.index = env_.infos.size();
      env_.infos.push_back(info);
    }
    if (!options_.config->empty()) default_config_ = default_plan(*options_.config, env_.infos);
    env_.transfer = *options_.transfer;
    env_.copy_threads = *options_.copy_threads;
    env_.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
    env_.wait = *options_.wait;
    env_.profile = *options_.profile;
    env_.poison_check = *options_.poison_check;
    env_.trace = *options_.trace;
    env_.log = options_.log;
    progress_ = !*options_.quiet;
    if (options_.chunk_mb)
      chunk_bytes_ = std::max<std::size_t>(1, static_cast<std::size_t>(*options_.chunk_mb * (1 << 20)));
    balancer_ = options_.balancer;
    require_balancer(*balancer_.policy);  // an unknown name fails here, before any run
    env_.is_pinned = [this](const void* p, std::size_t bytes) { return is_pinned(p, bytes); };
    env_.allocate_pinned = [this](std::size_t bytes) { return allocate_pinned(bytes); };
    env_.programs = &programs_;
    env_.queues = &queues_;
    env_.buffers = &buffers_;
    env_.fft = &fft_;
    env_.threads = &threads_;
  }

  const RuntimeOptions& options() const { return options_; }
  const std::vector<DeviceInfo>& devices() const { return env_.infos; }
  Device* device(std::size_t index) { return env_.devices.at(index); }

  std::shared_ptr<PinnedBlock> allocate_pinned(std::size_t bytes);  // Runtime::pinned

  void register_pinned(const std::shared_ptr<PinnedBlock>& block) {
    std::lock_guard lock(pinned_mutex_);
    std::erase_if(pinned_, [](const auto& w) { return w.expired(); });
    pinned_.push_back(block);
  }

  bool is_pinned(const void* p, std::size_t bytes) {
    std::lock_guard lock(pinned_mutex_);
    const char* c = static_cast<const char*>(p);
    for (const auto& w : pinned_) {
      auto b = w.lock();
      if (!b) continue;
      const char* base = static_cast<const char*>(b->data);
      if (c >= base && c + bytes <= base + b->bytes) return true;
    }
    return false;
  }

  std::size_t default_device() const {
    for (const auto& d : env_.infos)
      if (d.kind == DeviceKind::gpu) return d.index;
    return 0;
  }

  std::future<Report> run(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
    return threads_.submit(request(tree, std::move(bindings), std::move(options)));
  }

  Report execute(const Node& tree, std::vector<Binding> bindings, RunOptions options, Exchanger* exchanger = nullptr) {
    return request(tree, std::move(bindings), std::move(options), exchanger)();
  }

  // Validates the request now (errors before any device work) and returns what runs it: planning,
  // balancing, execution, recording.
  // With an `exchanger`, one process's part of a larger run (exec/exchanger.hpp).
  std::function<Report()> request(const Node& tree, std::vector<Binding> bindings, RunOptions options,
                                  Exchanger* exchanger = nullptr) {
    if (tree.empty())
      throw_error(errc::invalid_tree, "run() was given an empty tree",
                  {.node = "tree", .fix = "build a tree with sinew::kernel, pipeline, loop, map or map_reduce"});
    auto bound = std::make_shared<std::vector<Binding>>(std::move(bindings));
    std::shared_ptr<const PreparedTree> prepared = prepared_for(tree, *bound);

    Config config;
    Provenance provenance = Provenance::manual;
    const bool planned = !options.config && options.plan.empty() && !options.device && !default_config_;
    if (options.config) {
      config = *options.config;
    } else if (!options.plan.empty()) {
      config = Config::parse(options.plan, env_.infos);
    } else if (default_config_ && !options.device) {
      config = *default_config_;
      provenance = Provenance::default_plan;
    } else if (options.device) {
      const std::size_t dev = *options.device;
      if (dev >= env_.infos.size())
        throw_error(errc::invalid_argument,
                    "device index " + std::to_string(dev) + " but the runtime has " + std::to_string(env_.infos.size()) +
                        " device(s)",
                    {.argument = "RunOptions::device", .fix = "use an index into Runtime::devices()"});
      config = Config::single(dev, env_.infos.size());
    }
    // A given plan is checked now, before any device work; a planned one is checked as it is made.
    if (!planned) prepared->decomposition(config, env_.infos);
    // A planned run of a tree that no split of the devices' memory holds fails now, before any
    // training or knowledge-base entry: an even split, fitted to their memory, says whether one does.
    if (planned) {
      Config even;
      even.shares.assign(env_.infos.size(), 1.0 / static_cast<double>(env_.infos.size()));
      prepared->fitted(even, env_.infos);
    }
    // A run pinned to a device with levels to choose from (overlap, fission) runs at its best
    // known one (Planner::single_device), found as the run starts: not overlap 1, which left the
    // H100 alone 2.5-4x slower on saxpy from pageable memory than its chunked staging at 4. (Not
    // in one process's part of a larger run: its screening runs would exchange with ranks that
    // make no such runs.)
    const std::optional<std::size_t> pinned =
        options.device && !options.config && options.plan.empty() && !exchanger &&
                has_platform_levels(env_.infos[*options.device])
            ? options.device
            : std::nullopt;
    const bool force = options.train || *options_.force_training;
    const bool balance = options.balance.value_or(planned && *balancer_.enabled);
    const bool balance_asked = options.balance.value_or(false);
    const bool profile = profiles(options.profile);

    return [this, prepared, bound, provenance, planned, pinned, force, balance, balance_asked, profile, config,
            exchanger]() mutable {
      const PreparedTree& p = *prepared;
      Plan plan;
      if (planned) plan = planner().plan(p, *bound, force);
      if (pinned) {
        const Config best = planner().single_device(p, *bound, *pinned).config;
        try {
          p.decomposition(best, env_.infos);  // a level from a neighbour's input may not fit this one
          config = best;
        } catch (const Error&) {
        }
      }
      Config& run_config = planned ? plan.config : config;
      Provenance& run_provenance = planned ? plan.provenance : provenance;
      // A watched plan runs with the balancer's current distribution.
      std::shared_ptr<Watched> watch;
      // A divide-and-conquer plan's devices do not finish together by design (the crossover device
      // runs the upper levels alone), so the balancer, which evens finish times, watches one only
      // when asked to.
      if (balance && (balance_asked || !run_config.item("crossover"))) {
        const Config start = run_config;
        watch = watched(p, start, planned ? &plan : nullptr);
        Config now;
        {
          std::lock_guard lock(watch->mutex);
          // A plan that changed underneath (retrained, or stored by another process) starts over.
          if (planned && !(start == watch->base)) {
            watch->balancer = balancer_for(p, start, &plan);
            watch->base = start;
          }
          now = watch->balancer->config();
        }
        if (!(now == start)) {
          run_config = now;
          run_provenance = Provenance::balanced;
        }
      }
      Report rep = env_.poison_check ? measure_checked(env_, p, *bound, run_config, profile, exchanger)
                                     : measure(env_, p, *bound, run_config, profile, 0, exchanger);
      rep.provenance = run_provenance;
      if (planned) {
        rep.kb_entry = plan.entry;
        rep.derived_from = plan.derived_from;
        rep.training_executions = plan.training_executions;
        rep.training_seconds = plan.training_seconds;
        rep.model_choice = plan.model_choice;
        planner().executed(plan, p, rep);
      }
      if (watch) observe(*watch, p, *bound, planned ? &plan : nullptr, rep);
      return rep;
    };
  }

  // The balancer watching one tree and input (and, for a given plan, that plan).
  struct Watched {
    Watched(std::unique_ptr<OnlineBalancer> b, std::string l)
        : balancer(std::move(b)), base(balancer->config()), label(std::move(l)) {}
    std::mutex mutex;
    std::unique_ptr<OnlineBalancer> balancer;
    Config base;  // the planner's plan it started from (then the balanced plan it stored)
    std::string label;
  };

  // A balancer starting from `start`; for a planned run (`plan`), given the plan's stored runs,
  // against which a load present from its first run shows (OnlineBalancer::recall).
  std::unique_ptr<OnlineBalancer> balancer_for(const PreparedTree& p, const Config& start, const Plan* plan) {
    auto b = make_balancer(env_.infos, start, balancer_);
    if (plan) b->recall(planner().stored_times(*plan, p));
    return b;
  }

  std::shared_ptr<Watched> watched(const PreparedTree& p, const Config& start, const Plan* plan) {
    std::ostringstream key;
    key << std::setprecision(17) << p.signature;
    for (const auto& [name, value] : p.features) key << '|' << name << '=' << value;
    if (!plan) key << "|plan " << start.str();
    std::lock_guard lock(watched_mutex_);
    auto& w = watched_[key.str()];
    if (!w) w = std::make_shared<Watched>(balancer_for(p, start, plan), p.label);
    return w;
  }

  // After a watched run: the balancer's verdict into the report, a rebalance announced, recorded
  // (and, once settled, stored) in the knowledge base for planned runs.
  void observe(Watched& w, const PreparedTree& p, const std::vector<Binding>& bindings, const Plan* plan,
               Report& rep) {
    std::lock_guard lock(w.mutex);
    Retrain retrain = [&](const Config& current) {
      info("balancer: run " + std::to_string(w.balancer->executions()) + " of '" + w.label +
           "' still unbalanced after level 1; retraining the distribution (level 2)");
      if (plan) return planner().retrain(p, bindings, *plan, current, *balancer_.level2_executions);
      return train_on_copies(env_, p, bindings,
                             level2_options(TrainingOptions::from(options_.training), *balancer_.level2_executions), {},
                             current, {})
          .best;
    };
    const BalanceStep step = w.balancer->observe(rep.device_ms, retrain);
    rep.execution = step.execution;
    rep.deviation = step.deviation;
    rep.lbt = step.lbt;
    rep.balance = step.event;
    if (step.event) {
      std::ostringstream line;
      line << "balancer: run " << step.execution << " of '" << w.label << "' (deviation " << std::setprecision(3)
           << step.deviation << ", lbt " << step.event->lbt << "): level " << step.event->level << ", "
           << step.event->before.str() << " -> " << step.event->after.str();
      info(line.str());
    }
    if (plan && (step.event || step.settled)) {
      planner().balanced(*plan, p, step.event ? &*step.event : nullptr, step.settled, w.balancer->config(),
                         rep.wall_ms);
      if (step.settled) w.base = w.balancer->config();  // what the knowledge base now returns
    }
  }

  // The knowledge base and its planner, opened on the first planned run.
  Planner& planner() {
    std::lock_guard lock(planner_mutex_);
    if (!planner_) {
      kb_ = KnowledgeBase::open(*options_.kb_path, {.log = options_.log});
      PlannerSettings ps;
      ps.training = TrainingOptions::from(options_.training);
      ps.derive_unseen = *options_.unseen == UnseenPolicy::derive;
      ps.derive_executions = *options_.training.derive_executions;
      ps.interpolation = *options_.interpolation;
      ps.progress = progress_;
      ps.log = options_.log;
      planner_ = std::make_unique<Planner>(env_, *kb_, ps);
    }
    return *planner_;
  }

  void info(const std::string& line) const {
    if (progress_ && options_.log) options_.log(LogLevel::info, line);
  }

 private:
  // The prepared tree for `tree` over bindings of these shapes. Recurrent requests (the
  // framework's use: one tree run again and again on bindings of the same shapes) find it made;
  // checking a tree anew cost some 20 us per request on the H100 machine's host. A builder call
  // on the tree (tree_version) or other shapes make it anew.
  std::shared_ptr<const PreparedTree> prepared_for(const Node& tree, const std::vector<Binding>& bindings) {
    const auto& root = tree.impl();
    const std::uint64_t version = tree_version(*root);
    const bool any_discrete =
        std::any_of(env_.infos.begin(), env_.infos.end(), [](const DeviceInfo& d) { return d.discrete; });
    std::vector<BindingShape> shapes;
    shapes.reserve(bindings.size());
    for (const auto& b : bindings)
      shapes.push_back({b.vector.get(), b.result.get(), b.elements, b.type, b.read_only, b.data == nullptr,
                        // Whether host data is pinned changes what GPUs cost by 4-7x: a feature.
                        any_discrete && b.vector && is_pinned(b.data, b.elements * b.type.size)});
    {
      std::lock_guard lock(prepared_mutex_);
      if (auto it = prepared_.find(root.get()); it != prepared_.end())
        for (const auto& k : it->second)
          if (k.version == version && k.shapes == shapes && k.root.lock() == root) return k.tree;
    }
    std::optional<double> pinned_fraction;
    if (any_discrete) {
      double bytes = 0, pinned = 0;
      for (std::size_t i = 0; i < bindings.size(); ++i) {
        if (!bindings[i].vector) continue;
        const double n = static_cast<double>(bindings[i].elements * bindings[i].type.size);
        bytes += n;
        if (shapes[i].pinned) pinned += n;
      }
      pinned_fraction = bytes > 0 ? pinned / bytes : 0.0;
    }
    auto made = prepare_tree(tree, bindings, env_.infos, pinned_fraction, chunk_bytes_);
    std::lock_guard lock(prepared_mutex_);
    if (prepared_.size() >= 64) prepared_.clear();  // a bound, for long-lived runtimes
    auto& list = prepared_[root.get()];
    std::erase_if(list, [&](const Kept& k) { return k.version != version || k.root.lock() != root; });
    if (list.size() >= 8) list.erase(list.begin());
    list.push_back({root, version, std::move(shapes), made});
    return made;
  }

  // Whether a request profiles its queues: as it says, else as RuntimeOptions::profile says;
  // always while a trace is written.
  bool profiles(const std::optional<bool>& asked) const { return asked.value_or(env_.profile) || !env_.trace.empty(); }

  RuntimeOptions options_;
  bool progress_ = true;  // training and balancing lines (not RuntimeOptions::quiet)
  std::mutex planner_mutex_;
  std::unique_ptr<KnowledgeBase> kb_;
  std::unique_ptr<Planner> planner_;
  ProgramCache programs_;
  std::vector<std::unique_ptr<Device>> all_;
  QueuePool queues_;
  BufferPool buffers_;
  FftPlans fft_;
  Environment env_;
  std::optional<Config> default_config_;
  BalancerSettings balancer_;
  std::mutex watched_mutex_;
  std::map<std::string, std::shared_ptr<Watched>> watched_;
  std::size_t chunk_bytes_ = 0;  // streaming chunk for discrete devices ($SINEW_CHUNK_MB; 0: by size)
  std::mutex pinned_mutex_;
  // A binding as the prepared tree sees it: which vector or result, how many elements of which
  // type, const or not, null or not, pinned or not (the host address itself does not matter).
  struct BindingShape {
    const VectorState* vector;
    const ResultState* result;
    std::size_t elements;
    ElementType type;
    bool read_only, null, pinned;
    bool operator==(const BindingShape&) const = default;
  };
  struct Kept {
    std::weak_ptr<NodeImpl> root;  // held weakly: a new tree at a freed one's address is not taken for it
    std::uint64_t version = 0;     // tree_version() when it was made
    std::vector<BindingShape> shapes;
    std::shared_ptr<const PreparedTree> tree;
  };
  std::mutex prepared_mutex_;
  std::map<const NodeImpl*, std::vector<Kept>> prepared_;
  std::vector<std::weak_ptr<PinnedBlock>> pinned_;
  ThreadPool threads_;  // last: its destructor finishes the requests still running
};

}  // namespace detail

Runtime::Runtime() : Runtime(RuntimeOptions{}) {}
Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<detail::RuntimeImpl>(std::move(options))) {}
Runtime::~Runtime() = default;

const std::vector<DeviceInfo>& Runtime::devices() const { return impl_->devices(); }
const RuntimeOptions& Runtime::options() const { return impl_->options(); }
std::size_t Runtime::default_device() const { return impl_->default_device(); }
std::future<Report> Runtime::run(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
  return impl_->run(tree, std::move(bindings), std::move(options));
}
Report Runtime::execute(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
  return impl_->execute(tree, std::move(bindings), std::move(options));
}

namespace detail {
Report execute_part(Runtime& runtime, const Node& tree, std::vector<Binding> bindings, RunOptions options,
                    Exchanger& exchanger) {
  return runtime.impl().execute(tree, std::move(bindings), std::move(options), &exchanger);
}
}  // namespace detail

namespace {
// Pinned memory from a discrete device's context: an ALLOC_HOST_PTR buffer, mapped for good.
struct ClPinnedBlock : detail::PinnedBlock {
  cl::Buffer buffer;
  cl::CommandQueue queue;
  ~ClPinnedBlock() override {
    try {
      queue.enqueueUnmapMemObject(buffer, data);
      queue.finish();
    } catch (...) {
    }
  }
};
struct HostBlock : detail::PinnedBlock {
  ~HostBlock() override { std::free(data); }
};
}  // namespace

namespace detail {
std::shared_ptr<PinnedBlock> RuntimeImpl::allocate_pinned(std::size_t bytes) {
  for (const auto& info : env_.infos) {
    if (!info.discrete) continue;
    auto* dev = device(info.index);
    auto block = std::make_shared<ClPinnedBlock>();
    cl_call({.api_call = "pinned allocation", .device = info.name}, [&] {
      block->buffer = cl::Buffer(dev->context(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1));
      block->queue = Device::make_queue(dev->context(), dev->device());
      block->data = block->queue.enqueueMapBuffer(block->buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                  std::max<std::size_t>(bytes, 1));
    });
    block->bytes = bytes;
    std::memset(block->data, 0, bytes);
    register_pinned(block);
    return block;
  }
  auto block = std::make_shared<HostBlock>();
  block->data = std::aligned_alloc(4096, (std::max<std::size_t>(bytes, 1) + 4095) / 4096 * 4096);
  if (!block->data) throw std::bad_alloc();
  block->bytes = bytes;
  std::memset(block->data, 0, bytes);
  return block;
}
}  // namespace detail

std::shared_ptr<detail::PinnedBlock> Runtime::allocate_pinned(std::size_t bytes) {
  return impl_->allocate_pinned(bytes);
}

}  // namespace sinew
