// runtime/runtime.cpp — the Runtime: owns devices, caches and queues; turns a request into a
// validated analysis, a decomposition and an asynchronous execution.
#include "decompose/decompose.hpp"
#include "exec/executor.hpp"
#include "schedule/balancer.hpp"
#include "schedule/planner.hpp"
#include "platform/error.hpp"
#include "tree/validate.hpp"

#include <sinew/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <map>
#include <tuple>
#include <mutex>
#include <sstream>

namespace sinew {

namespace detail {

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
      env_.devices.push_back(all_[i].get());
      DeviceInfo info = all_[i]->info();
      info.index = env_.infos.size();
      env_.infos.push_back(info);
    }
    if (!options_.config->empty()) default_config_ = Config::parse(*options_.config, env_.infos);
    env_.transfer = *options_.transfer;
    env_.wait = *options_.wait;
    env_.profile = *options_.profile;
    env_.trace = *options_.trace;
    env_.log = options_.log;
    progress_ = !*options_.quiet;
    if (options_.chunk_mb)
      chunk_bytes_ = std::max<std::size_t>(1, static_cast<std::size_t>(*options_.chunk_mb * (1 << 20)));
    balancer_ = options_.balancer;
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

  Report execute(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
    return request(tree, std::move(bindings), std::move(options))();
  }

  // Validates the request now (errors before any device work) and returns what runs it: planning,
  // balancing, execution, recording.
  std::function<Report()> request(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
    if (tree.empty())
      throw_error(errc::invalid_tree, "run() was given an empty tree",
                  {.node = "tree", .fix = "build a tree with sinew::kernel, pipeline, loop, map or map_reduce"});
    auto root = tree.impl();
    auto bound = std::make_shared<std::vector<Binding>>(std::move(bindings));
    std::size_t granule = 0;
    auto an = std::make_shared<Analysis>(analysis(root, *bound, granule));
    // Whether the host data is pinned changes what GPUs cost by 4-7x: a feature of the input.
    if (std::any_of(env_.infos.begin(), env_.infos.end(), [](const DeviceInfo& d) { return d.discrete; })) {
      double bytes = 0, pinned = 0;
      for (const auto& b : *bound) {
        if (!b.vector) continue;
        const double n = static_cast<double>(b.elements * b.type.size);
        bytes += n;
        if (is_pinned(b.data, b.elements * b.type.size)) pinned += n;
      }
      an->features.emplace_back("host.pinned", bytes > 0 ? pinned / bytes : 0.0);
    }

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
    const Streaming streaming{.streamable = an->streamable, .bytes_per_unit = an->bytes_per_unit,
                              .chunk_bytes = chunk_bytes_};
    // A given plan is checked now, before any device work; a planned one is checked as it is made.
    std::shared_ptr<const Decomposition> dec;
    if (!planned) dec = decomposition(an->units, granule, config, streaming);
    const bool force = options.train || *options_.force_training;
    const bool balance = options.balance.value_or(planned && *balancer_.enabled);
    const bool profile = profiles(options.profile);

    return [this, tree, root, bound, an, dec, provenance, planned, granule, streaming, force, balance, profile,
            config]() mutable {
      Plan plan;
      if (planned) plan = planner().plan(tree, *an, *bound, granule, streaming, force);
      // A watched plan runs with the balancer's current distribution.
      std::shared_ptr<Watched> watch;
      if (balance) {
        const Config start = planned ? plan.config : config;
        // A planned run's key already holds the tree's signature: no second hash of the tree.
        watch = watched(planned ? plan.key.tree : tree.signature(), tree.label(), *an, start, planned);
        Config now;
        {
          std::lock_guard lock(watch->mutex);
          // A plan that changed underneath (retrained, or stored by another process) starts over.
          if (planned && !(start == watch->base)) {
            watch->balancer = Balancer(env_.infos, start, balancer_);
            watch->base = start;
          }
          now = watch->balancer.config();
        }
        if (!(now == start)) {
          dec.reset();
          (planned ? plan.config : config) = now;
          (planned ? plan.provenance : provenance) = Provenance::balanced;
        }
      }
      if (!dec) dec = decomposition(an->units, granule, planned ? plan.config : config, streaming);
      const auto t0 = std::chrono::steady_clock::now();
      Report rep = detail::execute(env_, *root, *an, *dec, profile);
      rep.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      rep.provenance = planned ? plan.provenance : provenance;
      if (planned) {
        rep.kb_entry = plan.entry;
        rep.derived_from = plan.derived_from;
        rep.training_executions = plan.training_executions;
        rep.training_seconds = plan.training_seconds;
        planner().executed(plan, *an, rep);
      }
      if (watch) observe(*watch, tree, *an, *bound, granule, streaming, planned ? &plan : nullptr, rep);
      return rep;
    };
  }

  // The balancer watching one tree and input (and, for a given plan, that plan).
  struct Watched {
    Watched(Balancer b, std::string l) : balancer(std::move(b)), base(balancer.config()), label(std::move(l)) {}
    std::mutex mutex;
    Balancer balancer;
    Config base;  // the planner's plan it started from (then the balanced plan it stored)
    std::string label;
  };

  std::shared_ptr<Watched> watched(const std::string& signature, const std::string& label, const Analysis& an,
                                   const Config& start, bool planned) {
    std::ostringstream key;
    key << std::setprecision(17) << signature;
    for (const auto& [name, value] : an.features) key << '|' << name << '=' << value;
    if (!planned) key << "|plan " << start.str();
    std::lock_guard lock(watched_mutex_);
    auto& w = watched_[key.str()];
    if (!w) {
      w = std::make_shared<Watched>(Balancer(env_.infos, start, balancer_), label);
      if (w->label.empty()) w->label = signature.substr(0, 12);
    }
    return w;
  }

  // After a watched run: the balancer's verdict into the report, a rebalance announced, recorded
  // (and, once settled, stored) in the knowledge base for planned runs.
  void observe(Watched& w, const Node& tree, const Analysis& an, const std::vector<Binding>& bindings,
               std::size_t granule, const Streaming& streaming, const Plan* plan, Report& rep) {
    std::lock_guard lock(w.mutex);
    Retrain retrain = [&](const Config& current) {
      info("balancer: run " + std::to_string(w.balancer.executions()) + " of '" + w.label +
           "' still unbalanced after level 1; retraining the distribution (level 2)");
      if (plan)
        return planner().retrain(tree, an, bindings, granule, streaming, *plan, current, *balancer_.level2_executions);
      return train_on_copies(env_, tree, an, bindings, granule, streaming,
                             level2_options(TrainingOptions::from(options_.training), *balancer_.level2_executions), {},
                             current, {})
          .best;
    };
    const BalanceStep step = w.balancer.observe(rep.device_ms, retrain);
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
      planner().balanced(*plan, an, step.event ? &*step.event : nullptr, step.settled, w.balancer.config(),
                         rep.wall_ms);
      if (step.settled) w.base = w.balancer.config();  // what the knowledge base now returns
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
  // The decomposition of `units` by `config`, with its explanation; recurrent requests (the
  // framework's use) find it made (decomposing and explaining cost some 10-20 us per request).
  std::shared_ptr<const Decomposition> decomposition(std::size_t units, std::size_t granule, const Config& config,
                                                     const Streaming& streaming) {
    // Only plans decompose() accepts are kept (a NaN share would compare equal to any other).
    if (!std::all_of(config.shares.begin(), config.shares.end(), [](double s) { return std::isfinite(s) && s >= 0; }))
      return std::make_shared<Decomposition>(decompose(units, granule, config, env_.infos, streaming));
    DecompositionKey key{units, granule, config.shares, config.fission, config.overlap, streaming.streamable,
                         streaming.bytes_per_unit, streaming.chunk_bytes};
    {
      std::lock_guard lock(decompositions_mutex_);
      if (auto it = decompositions_.find(key); it != decompositions_.end()) return it->second;
    }
    auto d = std::make_shared<Decomposition>(decompose(units, granule, config, env_.infos, streaming));
    d->explained = d->explain(env_.infos);
    std::lock_guard lock(decompositions_mutex_);
    if (decompositions_.size() >= 256) decompositions_.clear();  // a bound, for long-lived runtimes
    decompositions_.emplace(std::move(key), d);
    return d;
  }

  // The checked analysis of `root` over `bindings`, and the tree's granularity. Recurrent
  // requests (the framework's use: one tree run again and again on bindings of the same shapes)
  // find them made; checking a tree anew cost some 20 us per request on the H100 machine's host.
  // Any builder call on any tree, other shapes or another tree make them anew.
  Analysis analysis(const std::shared_ptr<NodeImpl>& root, const std::vector<Binding>& bindings, std::size_t& granule) {
    const std::uint64_t changes = tree_changes();
    std::vector<BindingShape> shapes;
    shapes.reserve(bindings.size());
    for (const auto& b : bindings)
      shapes.push_back({b.vector.get(), b.result.get(), b.elements, b.type, b.read_only, b.data == nullptr});
    {
      std::lock_guard lock(analyses_mutex_);
      if (auto it = analyses_.find(root.get()); it != analyses_.end())
        for (const auto& a : it->second)
          if (a->changes == changes && a->shapes == shapes && a->root.lock() == root) {
            granule = a->granule;
            return a->rebound(bindings);
          }
    }
    auto a = std::make_shared<Analyzed>();
    a->an = analyze(*root, bindings);
    a->granule = granule = granularity(*root, a->an, env_.infos);
    a->root = root;
    a->changes = changes;
    a->shapes = std::move(shapes);
    // Kept with the bindings as positions only: this request's addresses would dangle.
    for (auto& u : a->an.vectors) {
      a->vector_binding.push_back(u.binding ? u.binding - bindings.data() : -1);
      u.binding = nullptr;
    }
    for (auto& [r, b] : a->an.result_bindings) {
      a->result_binding.emplace_back(r, b - bindings.data());
      b = nullptr;
    }
    Analysis an = a->rebound(bindings);
    std::lock_guard lock(analyses_mutex_);
    if (analyses_.size() >= 64) analyses_.clear();  // a bound, for long-lived runtimes
    auto& list = analyses_[root.get()];
    std::erase_if(list, [&](const auto& old) { return old->changes != changes || old->root.lock() != root; });
    if (list.size() >= 8) list.erase(list.begin());
    list.push_back(std::move(a));
    return an;
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
  // A binding as its analysis sees it: which vector or result, how many elements of which type,
  // const or not, null or not (the host address itself does not matter).
  struct BindingShape {
    const VectorState* vector;
    const ResultState* result;
    std::size_t elements;
    ElementType type;
    bool read_only, null;
    bool operator==(const BindingShape&) const = default;
  };
  // An analysis kept for a tree and binding shapes, with the bindings as positions.
  struct Analyzed {
    std::weak_ptr<NodeImpl> root;
    std::uint64_t changes = 0;  // tree_changes() when it was made
    std::vector<BindingShape> shapes;
    Analysis an;
    std::size_t granule = 1;
    std::vector<std::ptrdiff_t> vector_binding;  // per an.vectors: position in the bindings, -1: none
    std::vector<std::pair<const ResultState*, std::ptrdiff_t>> result_binding;
    // The analysis over this request's bindings (the same shapes at other addresses).
    Analysis rebound(const std::vector<Binding>& bindings) const {
      Analysis out = an;
      for (std::size_t i = 0; i < out.vectors.size(); ++i)
        out.vectors[i].binding = vector_binding[i] < 0 ? nullptr : &bindings[static_cast<std::size_t>(vector_binding[i])];
      for (const auto& [r, at] : result_binding) out.result_bindings[r] = &bindings[static_cast<std::size_t>(at)];
      return out;
    }
  };
  std::mutex analyses_mutex_;
  std::map<const NodeImpl*, std::vector<std::shared_ptr<const Analyzed>>> analyses_;
  std::mutex decompositions_mutex_;
  // units, granule, the plan (shares, fission, overlap), streaming (streamable, bytes per unit, chunk)
  using DecompositionKey =
      std::tuple<std::size_t, std::size_t, std::vector<double>, std::string, unsigned, bool, std::size_t, std::size_t>;
  std::map<DecompositionKey, std::shared_ptr<const Decomposition>> decompositions_;
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

std::string Report::str() const {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  s << "run";
  if (!tree.empty()) s << " of '" << tree << "'";
  s << ": " << wall_ms << " ms wall, config " << config.str() << " (" << to_string(provenance) << ")";
  if (iterations) s << ", " << iterations << " loop iteration(s)";
  s << "\n";
  for (std::size_t d = 0; d < device_ms.size(); ++d)
    if (device_ms[d] > 0) s << "  device " << d << ": " << device_ms[d] << " ms to finish\n";
  for (const auto& p : partitions) {
    s << "  partition " << p.index << " on device " << p.device << " (" << p.device_name << ")"
      << " units [" << p.first << ", " << p.first + p.units << ")";
    if (profiled)
      s << ": busy " << p.ms << " ms, kernels " << p.kernel_ms << " ms, transfers " << p.transfer_ms << " ms";
    s << "\n";
  }
  if (!profiled && !partitions.empty()) s << "  (device times per partition and kernel: RunOptions::profile)\n";
  for (const auto& k : kernels)
    s << "    " << k.node << " @" << k.partition << ": " << k.ms << " ms over " << k.launches << " launch(es)\n";
  for (const auto& [name, v] : results) {
    s << "  result " << name << " = ";
    switch (v.type.lanes == 1 ? v.type.scalar : ScalarKind::opaque) {
      case ScalarKind::f32: s << v.as<float>(); break;
      case ScalarKind::f64: s << v.as<double>(); break;
      case ScalarKind::i32: s << v.as<cl_int>(); break;
      case ScalarKind::u32: s << v.as<cl_uint>(); break;
      case ScalarKind::i64: s << v.as<cl_long>(); break;
      case ScalarKind::u64: s << v.as<cl_ulong>(); break;
      default: s << v.bytes.size() << " bytes"; break;
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace sinew
