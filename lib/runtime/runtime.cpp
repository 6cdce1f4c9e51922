// runtime/runtime.cpp — the Runtime: owns devices, caches and queues, and admits each request
// into the request pipeline (runtime/request.hpp) that plans, runs and learns from it.
#include "platform/error.hpp"
#include "runtime/runtime_impl.hpp"
#include "schedule/balancer_registry.hpp"

#include <sinew/runtime.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

namespace sinew {

namespace detail {

namespace {

// The streaming chunk for discrete devices (RuntimeOptions::chunk_mb); 0: chosen by size.
std::size_t chunk_bytes(const RuntimeOptions& o) {
  return o.chunk_mb ? std::max<std::size_t>(1, static_cast<std::size_t>(*o.chunk_mb * (1 << 20))) : 0;
}

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

RuntimeImpl::RuntimeImpl(RuntimeOptions options)
    : options_(options.effective()), programs_(*options_.disk_cache ? *options_.cache_dir : std::string()) {
  all_ = discover_devices(programs_, *options_.map_zero_copy);
  select_devices();
  share_contexts();
  configure_environment();
  require_balancer(*options_.balancer.policy);  // an unknown name fails here, before any run
  prepared_ = std::make_unique<PreparedTrees>(env_, chunk_bytes(options_));
  PlannerAccess planner = [this]() -> Planner& { return this->planner(); };
  BalancerContext balancer{env_, options_.balancer, TrainingOptions::from(options_.training), planner,
                           [this](const std::string& line) { info(line); }, learned_.watches()};
  pipeline_ = std::make_unique<RequestPipeline>(env_, plan_sources(default_config_, planner), std::move(balancer),
                                                planner);
}

// The devices RuntimeOptions::devices selects, in its order; those RuntimeOptions::discrete names
// driven like GPUs, those RuntimeOptions::variant_gpu names running GPU variants; each device's
// memory cap.
void RuntimeImpl::select_devices() {
  std::vector<DeviceInfo> found;
  for (auto& d : all_) found.push_back(d->info());
  std::vector<std::size_t> as_discrete;
  if (!options_.discrete->empty())
    as_discrete = sinew::select_devices(found, *options_.discrete, "RuntimeOptions::discrete ($SINEW_DISCRETE)");
  std::vector<std::size_t> as_gpu_for_variants;
  if (!options_.variant_gpu->empty())
    as_gpu_for_variants =
        sinew::select_devices(found, *options_.variant_gpu, "RuntimeOptions::variant_gpu ($SINEW_VARIANT_GPU)");
  for (std::size_t i : sinew::select_devices(found, *options_.devices)) {
    if (std::find(as_discrete.begin(), as_discrete.end(), i) != as_discrete.end()) {
      DeviceInfo& info = all_[i]->mutable_info();  // driven like a GPU from now on
      info.discrete = true;
      info.fission_configs.clear();
      info.overlap_levels = {1, 2, 3, 4};
    }
    if (std::find(as_gpu_for_variants.begin(), as_gpu_for_variants.end(), i) != as_gpu_for_variants.end())
      all_[i]->mutable_info().variant_kind_override = DeviceKind::gpu;  // runs GPU variants (sinew::variants)
    // The memory cap: the last item that selects the device wins.
    if (!options_.memory_cap->empty()) {
      const std::string where = "RuntimeOptions::memory_cap ($SINEW_MEMORY_CAP)";
      for (const auto& [selection, bytes] : parse::memory_caps(*options_.memory_cap, where)) {
        const auto chosen = sinew::select_devices(found, selection, where);
        if (std::find(chosen.begin(), chosen.end(), i) != chosen.end()) all_[i]->mutable_info().memory_cap = bytes;
      }
    }
    env_.devices.push_back(all_[i].get());
    DeviceInfo info = all_[i]->info();
    info.index = env_.infos.size();
    env_.infos.push_back(info);
  }
}

// The selected discrete devices of each OpenCL platform in one context (RuntimeOptions::
// shared_context), made before any buffer, queue or program of theirs: copies between them are
// device-side copies within a context (exec/halo.hpp, exec/replicas.hpp, exec/whole_leaves.hpp).
// Zero-copy CPU devices and their fission sets keep their own contexts (docs/decisions/174).
void RuntimeImpl::share_contexts() {
  if (!*options_.shared_context) return;
  std::map<cl_platform_id, std::vector<Device*>> by_platform;
  for (Device* d : env_.devices) {
    auto& members = by_platform[d->platform()()];
    if (d->info().discrete && std::find(members.begin(), members.end(), d) == members.end()) members.push_back(d);
  }
  for (const auto& [platform, members] : by_platform) {
    if (members.size() < 2) continue;
    std::vector<cl::Device> devices;
    for (const Device* d : members) devices.push_back(d->device());
    cl::Context shared;
    cl_call({.api_call = "clCreateContext", .device = members.front()->info().platform},
            [&] { shared = cl::Context(devices); });
    for (Device* d : members) d->share_context(shared);
  }
}

void RuntimeImpl::configure_environment() {
  if (!options_.config->empty()) default_config_ = default_plan(*options_.config, env_.infos);
  env_.transfer = *options_.transfer;
  env_.copy_threads = *options_.copy_threads;
  env_.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  env_.wait = *options_.wait;
  env_.schedule_tuning = options_.schedule_tuning.value_or(ScheduleTuning{});
  env_.profile = *options_.profile;
  env_.poison_check = *options_.poison_check;
  env_.trace = *options_.trace;
  env_.log = options_.log;
  progress_ = !*options_.quiet;
  env_.is_pinned = [this](const void* p, std::size_t bytes) { return is_pinned(p, bytes); };
  env_.allocate_pinned = [this](std::size_t bytes) { return allocate_pinned(bytes); };
  env_.programs = &programs_;
  env_.queues = &queues_;
  env_.buffers = &buffers_;
  env_.fft = &fft_;
  env_.threads = &threads_;
}

std::size_t RuntimeImpl::default_device() const {
  for (const auto& d : env_.infos)
    if (d.kind == DeviceKind::gpu) return d.index;
  return 0;
}

std::future<Report> RuntimeImpl::run(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
  std::shared_ptr<Request> r = request(tree, std::move(bindings), std::move(options), nullptr);
  if (r->arrays.empty()) return threads_.submit([this, r] { return run_request(*r); });
  // A request over resident arrays waits for its turns without a thread of its own: it starts
  // when the request before it ends its turns, on that request's thread once its result is out
  // (ThreadPool::run_next), so runs submitted one after another over one array follow each other
  // on one thread, with no thread woken between them.
  auto task = std::make_shared<std::packaged_task<Report()>>([this, r] { return run_request(*r, /*tail=*/true); });
  std::future<Report> future = task->get_future();
  r->arrays.when_ready([this, task] { threads_.run_next([task] { (*task)(); }); }, r);
  return future;
}

Report RuntimeImpl::execute(const Node& tree, std::vector<Binding> bindings, RunOptions options, Exchanger* exchanger) {
  return run_request(*request(tree, std::move(bindings), std::move(options), exchanger));
}

Report RuntimeImpl::run_request(Request& r, bool tail) {
  ArrayTurn turn(r.arrays);
  Report report = pipeline_->run(r);
  r.arrays.completed();
  // The turns end next (ArrayTurn); a submitted request waits for nothing after them, so the
  // request they let start may wait for this one's end on this thread (ThreadPool::run_next).
  if (tail) ThreadPool::tail();
  return report;
}

std::shared_ptr<Request> RuntimeImpl::request(const Node& tree, std::vector<Binding> bindings, RunOptions options,
                                              Exchanger* exchanger) {
  if (tree.empty())
    throw_error(errc::invalid_tree, "run() was given an empty tree",
                {.node = "tree", .fix = "build a tree with sinew::kernel, pipeline, loop, map or map_reduce"});
  auto r = std::make_shared<Request>();
  r->prepared = prepared_->find_or_prepare(tree, bindings);
  r->bindings = std::move(bindings);
  r->options = std::move(options);
  r->exchanger = exchanger;
  // A trace being written profiles every request.
  r->profile = r->options.profile.value_or(env_.profile) || !env_.trace.empty();
  r->force_training = r->options.train || *options_.force_training;
  pipeline_->admit(*r);
  if (exchanger)
    for (const Binding& b : r->bindings)
      if (b.array)
        throw_error(errc::invalid_argument, "a resident array cannot be bound to a Cluster's run",
                    {.argument = "vector '" + b.vector->name + "'",
                     .fix = "bind host memory (array.host() copied into a std::vector) to a Cluster's run"});
  r->arrays = ArrayClaims(r->bindings, env_);  // last: nothing may throw once the turns are taken
  return r;
}

KnowledgeBase& RuntimeImpl::knowledge_base() {
  std::lock_guard lock(planner_mutex_);
  if (!kb_) kb_ = KnowledgeBase::open(*options_.kb_path, {.log = options_.log});
  return *kb_;
}

Planner& RuntimeImpl::planner() {
  KnowledgeBase& kb = knowledge_base();
  std::lock_guard lock(planner_mutex_);
  if (!planner_) {
    PlannerSettings ps;
    ps.training = TrainingOptions::from(options_.training);
    ps.derive_unseen = *options_.unseen == UnseenPolicy::derive;
    ps.derive_executions = *options_.training.derive_executions;
    ps.interpolation = *options_.interpolation;
    ps.progress = progress_;
    ps.log = options_.log;
    planner_ = std::make_unique<Planner>(env_, kb, learned_.plans(), ps);
  }
  return *planner_;
}

void RuntimeImpl::info(const std::string& line) const {
  if (progress_ && options_.log) options_.log(LogLevel::info, line);
}

RuntimeImpl::~RuntimeImpl() {
  std::vector<std::shared_ptr<ArrayState>> alive;
  {
    std::lock_guard lock(arrays_mutex_);
    for (const auto& w : arrays_)
      if (auto a = w.lock()) alive.push_back(std::move(a));
  }
  for (const auto& a : alive) {
    std::uint64_t ticket = 0;
    {
      std::lock_guard order(ArrayState::ticket_order());
      ticket = a->take_ticket();
    }
    a->wait_turn(ticket);  // the requests admitted before run first, on the runtime's threads
    a->detach();
    a->end_turn();
  }
}

std::shared_ptr<ArrayState> RuntimeImpl::make_array(std::size_t bytes, ElementType type, ArrayOptions options) {
  auto array = std::make_shared<ArrayState>(allocate_pinned(bytes), std::move(type), &env_, options);
  std::lock_guard lock(arrays_mutex_);
  std::erase_if(arrays_, [](const auto& w) { return w.expired(); });
  arrays_.push_back(array);
  return array;
}

void RuntimeImpl::register_pinned(const std::shared_ptr<PinnedBlock>& block) {
  std::lock_guard lock(pinned_mutex_);
  std::erase_if(pinned_, [](const auto& w) { return w.expired(); });
  pinned_.push_back(block);
}

bool RuntimeImpl::is_pinned(const void* p, std::size_t bytes) {
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

std::shared_ptr<detail::ArrayState> Runtime::make_array(std::size_t bytes, ElementType type, ArrayOptions options) {
  return impl_->make_array(bytes, std::move(type), options);
}

}  // namespace sinew
