// runtime/cluster.cpp — a tree over several MPI ranks: the rank split, scattering and gathering
// the root's host data, each rank's own Runtime, map_reduce results combined across ranks, and
// the agreement that makes every rank fail together. Built only with SINEW_MPI.
//
// Every decision that shapes a collective call (which vectors move, how many units each rank
// gets) is made from what every rank knows alike (the root's binding sizes, the tree), so the
// ranks never disagree about the next MPI call; what can differ (a rank's own error) is settled
// by agree() before the next collective that depends on it.
#include "decompose/decompose.hpp"
#include "exec/reduce.hpp"
#include "platform/error.hpp"
#include "tree/analysis.hpp"
#include "tree/nodes/map_reduce.hpp"

#include <sinew/cluster.hpp>
#include <sinew/kb.hpp>
#include <sinew/version.hpp>

// The C API only: Open MPI's and MPICH's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace sinew {

using detail::throw_error;

namespace {

// Host memory for a rank's slice of a vector: page-aligned, like the pinned blocks, so a CPU
// device reads it in place (PoCL's zero-copy buffers want aligned host pointers).
struct AlignedBuffer {
  std::unique_ptr<unsigned char, decltype(&std::free)> data{nullptr, &std::free};
  explicit AlignedBuffer(std::size_t bytes) {
    if (bytes) data.reset(static_cast<unsigned char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)));
    if (bytes && !data) throw std::bad_alloc();
  }
};

// A vector or result of an element type known only at run time (the combination of a custom
// reduction's per-rank values): the protected constructors, reachable from here.
struct TypedVector : VectorRef {
  explicit TypedVector(const ElementType& t, const std::string& name) : VectorRef(t, 0) { set_name(name); }
  std::shared_ptr<detail::VectorState> shared() const { return state_; }
};
struct TypedResult : ResultRef {
  TypedResult(const ElementType& t, const std::string& name) : ResultRef(t, name) {}
  std::shared_ptr<detail::ResultState> shared() const { return state_; }
};

// A binding to `bytes` of element type `t` for `vector` (Binding's constructors are typed).
Binding bytes_binding(const std::shared_ptr<detail::VectorState>& vector, const ElementType& t, void* data,
                      std::size_t elements) {
  static const Vector<cl_uchar> any;
  Binding b(any, std::span<cl_uchar>());
  b.vector = vector;
  b.type = t;
  b.data = data;
  b.elements = elements;
  return b;
}

// What one rank's failure carries to the others.
struct Failure {
  int code = 0;
  bool opencl = false;
  std::string message, node, argument, device, fix;
};

Failure failure_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    return {x.code().value(), x.code().category() == opencl_category(), x.message(), x.node(), x.argument(),
            x.device(), x.context().fix};
  } catch (const std::exception& x) {
    return {static_cast<int>(errc::library), false, x.what(), {}, {}, {}, {}};
  }
}

// Strings through MPI as one buffer, fields split by a unit separator.
std::string join(const std::vector<std::string>& fields) {
  std::string s;
  for (const auto& f : fields) s += f + '\x1f';
  return s;
}
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = s.find('\x1f', from)) != std::string::npos; from = at + 1) out.push_back(s.substr(from, at - from));
  return out;
}

int as_int(std::size_t n, const std::string& what) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw_error(errc::invalid_argument, what + ": " + std::to_string(n) + " items are more than one MPI message carries",
                {.node = "cluster", .argument = what, .fix = "give the vector a larger unit (sinew::Vector::unit)"});
  return static_cast<int>(n);
}

// One MPI datatype of `bytes` contiguous bytes (a vector's unit or element), freed with it.
struct Datatype {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  explicit Datatype(std::size_t bytes) {
    MPI_Type_contiguous(as_int(bytes, "unit bytes"), MPI_BYTE, &type);
    MPI_Type_commit(&type);
  }
  ~Datatype() { MPI_Type_free(&type); }
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
};

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const auto& d : devices) s += (s.empty() ? "" : ", ") + d.id() + " (" + d.name + ")";
  return s;
}

// Where a run's rank shares came from (ClusterReport::shares_from), as the root sends it.
constexpr const char* kShareSources[] = {"even", "given", "measured", "stored"};

std::vector<double> normalised(const std::vector<double>& weights) {
  double sum = 0;
  for (double w : weights) sum += w;
  std::vector<double> out;
  for (double w : weights) out.push_back(w / sum);
  return out;
}

// What every rank must refuse alike, before any device work: trees whose partitions meet while
// they run (nothing carries their exchanges between ranks yet), halos (a rank's slice would need
// its neighbours' units), vectors both partitioned and read whole, declared sizes (a rank binds
// a slice).
void check_splittable(const detail::NodeImpl& root, const detail::Analysis& an) {
  const std::string why = "its partitions would meet while the tree runs, and a cluster run does not carry "
                          "exchanges between ranks";
  detail::walk(root, [&](const detail::NodeImpl& n, const std::string& path) {
    if (n.joins_partitions())
      throw_error(errc::invalid_tree, "cannot split this tree over ranks: " + why,
                  {.node = path,
                   .fix = n.kind() == "loop" ? "run it with a Runtime on one process, or loop a fixed number of times "
                                               "(times(n) without until splits)"
                                             : "run it with a Runtime on one process"});
    for (std::size_t i = 0; i < n.args.size(); ++i)
      if (n.args[i].kind == Arg::Kind::halo)
        throw_error(errc::invalid_tree,
                    "cannot split this tree over ranks: vector '" + n.args[i].vector->name +
                        "' is read with a halo, and a rank's slice does not carry its neighbours' units yet",
                    {.node = path, .argument = "argument " + std::to_string(i) + " (" + n.args[i].describe() + ")",
                     .fix = "run it with a Runtime on one process"});
  });
  for (const auto& u : an.vectors) {
    const std::string v = "vector '" + u.vector->name + "'";
    if (u.read_whole && u.written)
      throw_error(errc::invalid_tree, "cannot split this tree over ranks: " + v + " is read whole and written, so " + why,
                  {.node = "tree", .argument = v, .fix = "run it with a Runtime on one process"});
    if (u.read_whole && u.partitioned)
      throw_error(errc::invalid_tree, "cannot split this tree over ranks: " + v + " is read both whole and by slices",
                  {.node = "tree", .argument = v, .fix = "read a second vector whole, or run it on one process"});
    if (u.partitioned && u.vector->size)
      throw_error(errc::invalid_argument,
                  "cannot split this tree over ranks: " + v + " is declared with " + std::to_string(u.vector->size) +
                      " elements, and each rank holds a slice of it",
                  {.node = "tree", .argument = v, .fix = "declare the vector without a size (it takes the binding's)"});
  }
}

}  // namespace

struct Cluster::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, ranks = 1;
  ClusterOptions options;
  std::unique_ptr<Runtime> runtime;
  // By tree signature and unit count: the rank shares for the tree's next run when none are
  // given, and each rank's last few throughputs (units per ms) they were made from.
  struct Measured {
    std::vector<double> next;
    std::vector<std::deque<double>> speeds;
  };
  std::map<std::string, Measured> measured;

  // After a run in which every rank had units: the next shares. Each rank's rate is the median of
  // its last three runs (one slow run, a burst of another process, sizes nothing), and the shares
  // move half way from those that ran towards the rates' (a run on a loaded machine swings; a
  // full step would chase the noise).
  const std::vector<double>& next_shares(const std::string& key, const std::vector<double>& ran,
                                         const std::vector<double>& speed) {
    Measured& m = measured[key];
    m.speeds.resize(speed.size());
    std::vector<double> rates;
    for (std::size_t r = 0; r < speed.size(); ++r) {
      auto& last = m.speeds[r];
      last.push_back(speed[r]);
      if (last.size() > 3) last.pop_front();
      std::vector<double> sorted(last.begin(), last.end());
      std::sort(sorted.begin(), sorted.end());
      rates.push_back(sorted[sorted.size() / 2]);
    }
    const auto target = normalised(rates);
    m.next.clear();
    for (std::size_t r = 0; r < ran.size(); ++r) m.next.push_back((ran[r] + target[r]) / 2);
    return m.next;
  }
  // The root's: the knowledge base that keeps rank shares between Clusters (the rank Runtime's
  // file, opened on the first use), and the whole cluster's device set that keys them.
  std::unique_ptr<KnowledgeBase> kb;
  std::string device_set;

  KnowledgeBase& knowledge_base() {
    if (!kb) kb = KnowledgeBase::open(*runtime->options().kb_path, {.log = runtime->options().log});
    return *kb;
  }
  // A cluster's entries are kept under their own tree key, beside the ranks' own entries for
  // their slices: "cluster:" and the tree's signature.
  static std::string cluster_tree(const std::string& signature) { return "cluster:" + signature; }

  std::optional<std::vector<double>> stored_shares(const std::string& signature, const KbFeatures& features) {
    try {
      auto& k = knowledge_base();
      if (auto e = k.find({cluster_tree(signature), device_set, version}, features)) return e->config.shares;
    } catch (const Error& e) {  // the knowledge base never stops a run: warn, go on evenly
      runtime->options().log(LogLevel::warning, std::string("cluster: the knowledge base failed: ") + e.what());
    }
    return std::nullopt;
  }

  // After a run every rank finished: the shares its throughput suggests for the next run, and the
  // run itself (each rank's time as a partition time). Nothing is stored for a failed run.
  void store_shares(const Node& tree, const KbFeatures& features, const Config& ran, const std::vector<double>& next,
                    const std::vector<RankShare>& ranks_ran) {
    try {
      auto& k = knowledge_base();
      const KbKey key{cluster_tree(tree.signature()), device_set, version};
      double slowest = 0;
      std::vector<double> ms;
      for (const auto& r : ranks_ran) {
        ms.push_back(r.ms);
        slowest = std::max(slowest, r.ms);
      }
      KbRun run{.key = key, .features = features, .config = ran, .time_ms = slowest, .partition_ms = ms,
                .purpose = "execution"};
      k.record_run(run);
      KbEntry entry{.key = key, .features = features, .config = Config{next}, .time_ms = slowest,
                    .provenance = Provenance::balanced, .strategy = "cluster throughput"};
      k.store_entry(entry);
      k.describe_tree(key.tree, "cluster(" + tree.label() + ")", tree.dump());
    } catch (const Error& e) {
      runtime->options().log(LogLevel::warning, std::string("cluster: the knowledge base failed: ") + e.what());
    }
  }

  ~Impl() {
    runtime.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }

  // Throws on every rank when some rank has a failure (the lowest such rank's).
  void agree(const std::optional<Failure>& mine, const std::string& what) {
    int me = mine ? rank : ranks, first = ranks;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == ranks) return;
    int failed = 0, one = mine ? 1 : 0;
    MPI_Allreduce(&one, &failed, 1, MPI_INT, MPI_SUM, comm);
    std::string text;
    if (rank == first)
      text = join({std::to_string(mine->code), mine->opencl ? "1" : "0", mine->message, mine->node, mine->argument,
                   mine->device, mine->fix});
    int length = static_cast<int>(text.size());
    MPI_Bcast(&length, 1, MPI_INT, first, comm);
    text.resize(static_cast<std::size_t>(length));
    MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
    const auto f = split(text);
    const std::error_code code(std::stoi(f.at(0)), f.at(1) == "1" ? opencl_category() : sinew_category());
    // Most failures (a bad tree) are every rank's; "rank 0 of 3" would suggest the others are fine.
    const std::string of = std::to_string(ranks), at = std::to_string(first);
    const std::string who = failed == ranks && ranks > 1 ? "every rank of " + of + " (rank " + at + "'s message)"
                                                         : "rank " + at + " of " + of;
    throw Error(code, who + ": " + what + " failed: " + f.at(2),
                {.node = f.at(3), .argument = f.at(4), .device = f.at(5), .fix = f.at(6)});
  }

  // Runs f on this rank; its exception becomes this rank's failure, agreed on by every rank.
  template <class F>
  void together(const std::string& what, F&& f) {
    std::optional<Failure> failure;
    try {
      f();
    } catch (...) {
      failure = failure_of(std::current_exception());
    }
    agree(failure, what);
  }

  std::vector<std::string> allgather(const std::string& mine) {
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
    int total = 0;
    for (int r = 0; r < ranks; ++r) at[r] = std::exchange(total, total + lengths[r]);
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), at.data(), MPI_CHAR, comm);
    std::vector<std::string> out;
    for (int r = 0; r < ranks; ++r) out.push_back(all.substr(at[r], lengths[r]));
    return out;
  }
};

Cluster::Cluster() : Cluster(ClusterOptions{}) {}

Cluster::Cluster(ClusterOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& c = *impl_;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // Only the thread that calls run() talks to MPI; the Runtime's own threads never do.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    // Finalised at exit, not with this Cluster: MPI cannot be initialised twice, and a program may
    // make one Cluster after another.
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  // A communicator of our own: a program's own messages on MPI_COMM_WORLD never meet ours.
  MPI_Comm_dup(MPI_COMM_WORLD, &c.comm);
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.ranks);
  c.options = std::move(options);
  c.together("making rank's Runtime", [&] {
    if (!c.options.rank_shares.empty())
      Config{c.options.rank_shares}.check(static_cast<std::size_t>(c.ranks), "ClusterOptions::rank_shares");
    c.runtime = std::make_unique<Runtime>(c.options.runtime);
  });
  // The whole cluster's devices, rank by rank (a rank's own "; " become ", ": one item per rank,
  // as the knowledge base counts one share per item).
  const auto sets = c.allgather(device_set_signature(c.runtime->devices()));
  for (std::size_t r = 0; r < sets.size(); ++r) {
    std::string set = sets[r];
    for (std::size_t at; (at = set.find("; ")) != std::string::npos;) set.replace(at, 2, ", ");
    c.device_set += (r ? "; rank " : "rank ") + std::to_string(r) + " [" + set + "]";
  }
}

Cluster::~Cluster() = default;

int Cluster::rank() const { return impl_->rank; }
int Cluster::ranks() const { return impl_->ranks; }
Runtime& Cluster::runtime() { return *impl_->runtime; }

void Cluster::agree(const std::string& error, const std::string& what) {
  std::optional<Failure> f;
  if (!error.empty()) f = Failure{static_cast<int>(errc::invalid_argument), false, error, {}, {}, {}, {}};
  impl_->agree(f, what);
}

std::vector<RankDevices> Cluster::devices() {
  Impl& c = *impl_;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  std::vector<std::string> mine = {std::string(host, static_cast<std::size_t>(host_length))};
  for (const auto& d : c.runtime->devices())
    mine.push_back(join({std::to_string(d.index), std::to_string(d.kind_index), to_string(d.kind), d.platform, d.name,
                         d.vendor, d.driver_version, d.opencl_version, std::to_string(d.compute_units),
                         std::to_string(d.global_memory), d.discrete ? "1" : "0"}));
  std::string text;
  for (const auto& m : mine) text += m + '\x1e';
  std::vector<RankDevices> all;
  for (const auto& rank_text : c.allgather(text)) {
    auto& rank = all.emplace_back();
    rank.rank = static_cast<int>(all.size()) - 1;
    std::size_t from = 0;
    for (std::size_t at; (at = rank_text.find('\x1e', from)) != std::string::npos; from = at + 1) {
      if (from == 0) {  // the host comes first
        rank.host = rank_text.substr(0, at);
        continue;
      }
      const auto f = split(rank_text.substr(from, at - from));
      DeviceInfo d;
      d.index = std::stoul(f.at(0));
      d.kind_index = std::stoul(f.at(1));
      d.kind = f.at(2) == "gpu" ? DeviceKind::gpu : f.at(2) == "cpu" ? DeviceKind::cpu : DeviceKind::accelerator;
      d.platform = f.at(3);
      d.name = f.at(4);
      d.vendor = f.at(5);
      d.driver_version = f.at(6);
      d.opencl_version = f.at(7);
      d.compute_units = static_cast<unsigned>(std::stoul(f.at(8)));
      d.global_memory = std::stoull(f.at(9));
      d.discrete = f.at(10) == "1";
      rank.devices.push_back(d);
    }
  }
  return all;
}

ClusterReport Cluster::run(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
  Impl& c = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  auto mark = t0;
  // Milliseconds since the last lap, for ClusterReport's phases.
  auto lap = [&] {
    const auto now = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(now - std::exchange(mark, now)).count();
  };
  const bool root = c.rank == 0;
  ClusterReport report;
  report.rank = c.rank;
  report.ranks = c.ranks;

  // The root's binding sizes: every rank analyses the tree as the root will run it.
  std::uint64_t count = bindings.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, c.comm);
  std::vector<std::uint64_t> sizes(count);
  if (root)
    for (std::size_t i = 0; i < count; ++i) sizes[i] = bindings[i].elements;
  MPI_Bcast(sizes.data(), static_cast<int>(count), MPI_UINT64_T, 0, c.comm);

  detail::Analysis an;
  KbFeatures features;
  Config rank_plan;
  std::vector<std::size_t> first(c.ranks), units(c.ranks);
  std::string key;
  c.together("checking the tree", [&] {
    if (tree.empty()) throw_error(errc::invalid_tree, "the tree is empty", {.node = "tree", .fix = "build a tree"});
    if (count != bindings.size())
      throw_error(errc::invalid_argument,
                  "this rank binds " + std::to_string(bindings.size()) + " vectors and results, the root " +
                      std::to_string(count),
                  {.node = "bindings", .fix = "bind the same vectors and results in the same order on every rank"});
    std::vector<Binding> shaped = bindings;
    static unsigned char placeholder;  // the other ranks' data are never read: any non-null pointer
    for (std::size_t i = 0; i < count; ++i) {
      shaped[i].elements = sizes[i];
      if (!root && !shaped[i].data) shaped[i].data = &placeholder;
    }
    an = detail::analyze(*tree.impl(), shaped);
    check_splittable(*tree.impl(), an);

    key = tree.signature() + "#" + std::to_string(an.units);
    features = detail::input_features(*tree.impl(), an);  // the whole vectors' sizes, alike on every rank
  });

  // The rank shares, chosen by the root (only it reads the knowledge base) and sent to every rank.
  std::vector<double> shares(c.ranks, 1.0 / c.ranks);
  int from = 0;  // kShareSources
  if (root) {
    if (!c.options.rank_shares.empty()) {
      shares = c.options.rank_shares;
      from = 1;
    } else if (auto it = c.measured.find(key); it != c.measured.end()) {
      shares = it->second.next;
      from = 2;
    } else if (auto stored = c.stored_shares(tree.signature(), features)) {
      shares = *stored;
      from = 3;
    }
  }
  MPI_Bcast(shares.data(), c.ranks, MPI_DOUBLE, 0, c.comm);
  MPI_Bcast(&from, 1, MPI_INT, 0, c.comm);
  report.shares_from = kShareSources[from];

  c.together("splitting the units over the ranks", [&] {
    // Whole granules per rank, the last active rank taking the rest, by the same rounding that
    // splits a rank's units over its devices (decompose over stand-ins for the ranks).
    std::vector<DeviceInfo> stand_ins(c.ranks);
    for (int r = 0; r < c.ranks; ++r) stand_ins[r].index = static_cast<std::size_t>(r);
    rank_plan = Config{shares};
    const auto dec = detail::decompose(an.units, detail::granularity(*tree.impl(), an, {}), rank_plan, stand_ins);
    for (const auto& p : dec.parts) units[p.device] = p.units;
    for (std::size_t r = 0, at = 0; r < units.size(); at += units[r++]) first[r] = at;  // ranks in order
    // What one MPI message carries, checked here so no rank fails between collectives.
    for (int r = 0; r < c.ranks; ++r) as_int(first[r] + units[r], "units of rank " + std::to_string(r));
    for (const auto& u : an.vectors) {
      as_int(u.vector->unit * u.vector->type.size, "bytes per unit of vector '" + u.vector->name + "'");
      if (u.read_whole) as_int(u.elements, "elements of vector '" + u.vector->name + "'");
    }
  });

  // Each bound vector's data on this rank (the root's own slice stays where it is: MPI_IN_PLACE),
  // made before anything moves, so that a rank short of memory fails with the others.
  std::vector<Binding> local = bindings;
  std::vector<AlignedBuffer> buffers;
  std::vector<std::vector<unsigned char>> result_scratch(count);
  const std::size_t mine = units[c.rank];
  std::vector<int> counts(c.ranks), displs(c.ranks);
  for (int r = 0; r < c.ranks; ++r) {
    counts[r] = static_cast<int>(units[r]);
    displs[r] = static_cast<int>(first[r]);
  }
  report.prepare_ms = lap();
  c.together("allocating the rank's data", [&] {
    buffers.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      Binding& b = local[i];
      b.elements = sizes[i];
      if (b.result) {  // this rank's partial value lands here; the combined one replaces it
        result_scratch[i].resize(b.type.size);
        b.data = result_scratch[i].data();
        continue;
      }
      const auto& u = an.use(b.vector.get());
      auto* data = static_cast<unsigned char*>(bindings[i].data);
      if (u.read_whole) {  // a copy of the whole vector on every rank
        b.data = root ? data : buffers.emplace_back(sizes[i] * b.type.size).data.get();
        continue;
      }
      const std::size_t unit_bytes = u.vector->unit * b.type.size;
      b.first_unit = first[c.rank];
      b.whole_units = an.units;
      b.elements = mine * u.vector->unit;
      b.data = root ? data + first[c.rank] * unit_bytes : buffers.emplace_back(mine * unit_bytes).data.get();
    }
  });
  for (std::size_t i = 0; i < count; ++i) {
    const Binding& b = local[i];
    if (!b.vector) continue;
    const auto& u = an.use(b.vector.get());
    if (u.read_whole) {
      Datatype element(b.type.size);
      MPI_Bcast(b.data, static_cast<int>(sizes[i]), element.type, 0, c.comm);
    } else if (u.read_partitioned) {
      Datatype unit(u.vector->unit * b.type.size);
      MPI_Scatterv(bindings[i].data, counts.data(), displs.data(), unit.type, root ? MPI_IN_PLACE : b.data,
                   counts[c.rank], unit.type, 0, c.comm);
    }
  }

  report.scatter_ms = lap();

  // This rank's own run, on its own devices and plan.
  c.together("the run", [&] {
    if (mine) report.local = c.runtime->execute(tree, local, options);
  });

  report.run_ms = lap();

  // Outputs to the root.
  for (std::size_t i = 0; i < count; ++i) {
    const Binding& b = local[i];
    if (!b.vector) continue;
    const auto& u = an.use(b.vector.get());
    if (!u.written) continue;
    Datatype unit(u.vector->unit * b.type.size);
    MPI_Gatherv(root ? MPI_IN_PLACE : b.data, counts[c.rank], unit.type, bindings[i].data, counts.data(),
                displs.data(), unit.type, 0, c.comm);
  }

  report.gather_ms = lap();

  // map_reduce results: every rank's value (built-in operators: the identity where a rank had no
  // units) to every rank, combined there by the host rule one process uses across its partitions;
  // a user's function combines them on the root's default device, and the root's value is sent.
  std::vector<const detail::MapReduceNode*> reductions;
  detail::visit(*tree.impl(), [&](const detail::NodeImpl& n) {
    if (auto m = dynamic_cast<const detail::MapReduceNode*>(&n)) reductions.push_back(m);
  });
  for (const auto* m : reductions) {
    const Reducer& r = m->reducer;
    const ElementType& t = r.output->type;
    std::vector<unsigned char> value(t.size);
    if (mine) value = report.local.results.at(r.output->name).bytes;
    else if (r.op != Reducer::Op::custom) value = detail::identity_of(r.op, t);
    std::vector<unsigned char> all(t.size * c.ranks);
    Datatype element(t.size);
    MPI_Allgather(value.data(), 1, element.type, all.data(), 1, element.type, c.comm);
    std::vector<std::vector<unsigned char>> parts;
    for (int q = 0; q < c.ranks; ++q)
      if (units[q] || r.op != Reducer::Op::custom) parts.emplace_back(all.begin() + q * t.size, all.begin() + (q + 1) * t.size);
    Value combined{t, {}};
    if (r.op != Reducer::Op::custom) {
      combined = detail::combine_builtin(r.op, parts, t);
    } else {
      combined.bytes.resize(t.size);
      c.together("combining '" + r.output->name + "' over the ranks", [&] {
        if (!root) return;
        std::vector<unsigned char> packed;
        for (const auto& p : parts) packed.insert(packed.end(), p.begin(), p.end());
        TypedVector values(t, "rank_values"), copied(t, "rank_values_copy");
        TypedResult out(t, r.output->name);
        Reducer again = r;
        again.input = copied.shared();
        again.output = out.shared();
        const Node combine = map_reduce(sinew::copy(values, copied), again);
        RunOptions one;
        one.device = c.runtime->default_device();
        const Report rep =
            c.runtime->execute(combine, {bytes_binding(values.shared(), t, packed.data(), parts.size())}, one);
        combined.bytes = rep.results.at(r.output->name).bytes;
      });
      MPI_Bcast(combined.bytes.data(), 1, element.type, 0, c.comm);
    }
    report.results[r.output->name] = combined;
    if (auto b = an.result_bindings.find(r.output.get()); b != an.result_bindings.end() && bindings[b->second].data)
      std::memcpy(bindings[b->second].data, combined.bytes.data(), t.size);
  }

  report.combine_ms = lap();

  // Every rank's time and devices, for the report and the next run's shares.
  const auto& d = report.local.device_ms;
  const double busy = d.empty() ? report.local.wall_ms : *std::max_element(d.begin(), d.end());
  const auto gathered = c.allgather(join({std::to_string(busy > 0 ? busy : report.local.wall_ms),
                                          describe_devices(c.runtime->devices())}));
  std::vector<double> speed(c.ranks);
  bool every_rank = true;
  for (int q = 0; q < c.ranks; ++q) {
    const auto f = split(gathered[q]);
    const double ms = std::stod(f.at(0));
    report.shares.push_back({q, first[q], units[q], rank_plan.shares[q], ms, f.at(1)});
    speed[q] = units[q] && ms > 0 ? static_cast<double>(units[q]) / ms : 0;
    every_rank = every_rank && speed[q] > 0;
  }
  if (every_rank) {  // a rank without units leaves the last measure in place
    const auto& next = c.next_shares(key, rank_plan.shares, speed);
    if (root) c.store_shares(tree, features, rank_plan, next, report.shares);
  }
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

std::string ClusterReport::str() const {
  std::ostringstream s;
  s << "cluster: " << ranks << (ranks == 1 ? " rank" : " ranks") << ", shares " << shares_from << ", "
    << wall_ms << " ms on rank " << rank << " (checks and split " << prepare_ms << ", scatter " << scatter_ms
    << ", own run and agreement " << run_ms << ", gather " << gather_ms << ", results " << combine_ms << ")\n";
  for (const auto& r : shares)
    s << "  rank " << r.rank << ": units " << r.first << ".." << r.first + r.units << " (" << r.units
      << ", share " << r.share << "), " << r.ms << " ms, " << r.devices << "\n";
  for (const auto& [name, v] : results) s << "  result '" << name << "': " << v.bytes.size() << " bytes\n";
  return s.str();
}

}  // namespace sinew
