// runtime/cluster.cpp — a tree over several MPI ranks: making the Cluster (MPI, each rank's
// Runtime), the agreement that makes every rank fail together, and every rank's devices. run() is
// a pipeline of stages (runtime/cluster_run.hpp); the exchanges and waits with a deadline,
// cluster_exchange.cpp. Built only with SINEW_MPI.
//
// Every decision that shapes a collective call (which vectors move, how many units each rank
// gets) is made from what every rank knows alike (the root's binding sizes, the tree), so the
// ranks never disagree about the next MPI call; what can differ (a rank's own error) is settled
// by agree() before the next collective that depends on it.
#include "runtime/cluster_impl.hpp"

#include <sinew/options.hpp>
#include <sinew/version.hpp>

#include <algorithm>
#include <climits>
#include <new>
#include <sstream>
#include <typeinfo>

#include <cxxabi.h>

namespace sinew {

using detail::throw_error;

namespace detail {

namespace {

// The demangled type of the exception being handled ("std::runtime_error", "int").
std::string thrown_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (!type) return "an exception";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(type->name(), nullptr, nullptr, &status),
                                                    &std::free);
  return status == 0 && name ? name.get() : type->name();
}

}  // namespace

Failure failure_of(const std::exception_ptr& e, const std::string& thrower) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    return {x.code().value(), x.code().category() == opencl_category(), x.message(), x.context(), false};
  } catch (const std::bad_alloc&) {
    return {CL_OUT_OF_HOST_MEMORY, true, "host memory ran out (std::bad_alloc)", {}, false};
  } catch (...) {
    const std::string type = thrown_type();
    std::string what;
    try {
      throw;
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    ErrorContext context{.node = thrower,
                         .fix = "see what the program's code throws there: the exception is the program's, not "
                                "Sinew's"};
    return {static_cast<int>(errc::user_code), false,
            (what.empty() ? "" : what + " ") + "(" + type + ", thrown by the program's own code" +
                (thrower.empty() ? "" : ": " + thrower) + ")",
            std::move(context), false};
  }
}

std::string Failure::text() const {
  return join({std::to_string(code), opencl ? "1" : "0", message, context.api_call, context.node, context.argument,
               context.device, context.kernel_file, context.build_log, context.fix});
}

Failure Failure::from_text(const std::string& text) {
  const auto f = split(text);
  Failure out;
  out.code = std::stoi(f.at(0));
  out.opencl = f.at(1) == "1";
  out.message = f.at(2);
  out.context = {.api_call = f.at(3), .node = f.at(4), .argument = f.at(5), .device = f.at(6),
                 .kernel_file = f.at(7), .build_log = f.at(8), .fix = f.at(9)};
  return out;
}

Error Failure::error(const std::string& text) const {
  return Error(std::error_code(code, opencl ? opencl_category() : sinew_category()), text, context);
}

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

Datatype::Datatype(std::size_t bytes) {
  MPI_Type_contiguous(as_int(bytes, "unit bytes"), MPI_BYTE, &type);
  MPI_Type_commit(&type);
}

}  // namespace detail

Cluster::Impl::~Impl() {
  runtime.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Comm* c : {&comm, &notices})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  // An exchange communicator is freed only when no failed run may have left an exchange on it.
  if (exchange != MPI_COMM_NULL && !exchange_stale) MPI_Comm_free(&exchange);
}

void Cluster::Impl::agree(const std::optional<detail::Failure>& mine, const std::string& what) {
  // A rank gave up waiting: the others may never answer, and every rank already has an error.
  if (gave_up) {
    const detail::Failure& f = mine ? *mine : *gave_up;
    throw f.error(f.message);
  }
  // The lowest rank whose failure is its own goes first (key = rank); one that only reports
  // another's (secondary) comes after every own failure (key = ranks + rank).
  const int none = 2 * ranks;
  int key[2] = {mine ? (mine->secondary ? ranks + rank : rank) : none, mine && !mine->secondary ? 1 : 0};
  int lowest = none, failed = 0;
  timed(what + " (the agreement)", [&](MPI_Request* r) { return MPI_Iallreduce(&key[0], &lowest, 1, MPI_INT, MPI_MIN, comm, r); });
  if (lowest == none) return;
  exchange_stale = true;  // some rank may have left an exchange unmatched
  timed(what + " (the agreement)", [&](MPI_Request* r) { return MPI_Iallreduce(&key[1], &failed, 1, MPI_INT, MPI_SUM, comm, r); });
  const int first = lowest % ranks;
  std::string text;
  if (rank == first) text = mine->text();
  int length = static_cast<int>(text.size());
  timed(what + " (the agreement)", [&](MPI_Request* r) { return MPI_Ibcast(&length, 1, MPI_INT, first, comm, r); });
  text.resize(static_cast<std::size_t>(length));
  timed(what + " (the agreement)", [&](MPI_Request* r) { return MPI_Ibcast(text.data(), length, MPI_CHAR, first, comm, r); });
  const auto f = detail::Failure::from_text(text);
  // Most failures (a bad tree) are every rank's; "rank 0 of 3" would suggest the others are fine.
  const std::string of = std::to_string(ranks), at = std::to_string(first);
  const std::string who = failed == ranks && ranks > 1 ? "every rank of " + of + " (rank " + at + "'s message)"
                                                       : "rank " + at + " of " + of;
  throw f.error(who + ": " + what + " failed: " + f.message);
}

std::vector<std::string> Cluster::Impl::allgather(const std::string& mine) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks));
  timed("gathering every rank's text", [&](MPI_Request* r) {
    return MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm, r);
  });
  int total = 0;
  for (int r = 0; r < ranks; ++r) at[r] = std::exchange(total, total + lengths[r]);
  std::string all(static_cast<std::size_t>(total), '\0');
  timed("gathering every rank's text", [&](MPI_Request* r) {
    return MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), at.data(), MPI_CHAR, comm, r);
  });
  std::vector<std::string> out;
  for (int r = 0; r < ranks; ++r) out.push_back(all.substr(at[r], lengths[r]));
  return out;
}

Cluster::Cluster() : Cluster(ClusterOptions{}) {}

Cluster::Cluster(ClusterOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& c = *impl_;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // One thread at a time talks to MPI: the one that calls run(), and during a run whose
    // partitions meet, the Runtime's worker that does an exchange (the others wait at a barrier).
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    // Finalised at exit, not with this Cluster: MPI cannot be initialised twice, and a program may
    // make one Cluster after another.
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (finalized) return;
      // A rank that gave up waiting (Impl::wait) cannot finalise with the others: it would
      // wait for the rank that hangs. It ends the job instead.
      if (detail::broken()) MPI_Abort(MPI_COMM_WORLD, 1);
      MPI_Finalize();
    });
  }
  // A communicator of our own: a program's own messages on MPI_COMM_WORLD never meet ours.
  MPI_Query_thread(&c.thread_level);
  MPI_Comm_dup(MPI_COMM_WORLD, &c.comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &c.notices);
  // Errors come back as codes (Impl::check turns them into sinew::Error), not as an abort.
  MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(c.notices, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.ranks);
  c.options = std::move(options);
  // The timeout first: every wait below has it (a bad value waits by the default, then fails).
  std::string bad_timeout;
  try {
    if (const auto t = c.options.timeout_s) {
      if (!(*t >= 0 && *t <= 1e9))
        bad_timeout = "ClusterOptions::timeout_s: " + std::to_string(*t) + " is not between 0 and 1e9 seconds";
      else
        c.timeout_s = *t;
    } else if (const auto from_environment = ClusterOptions::from_environment().timeout_s) {
      c.timeout_s = *from_environment;
    }
  } catch (const Error& e) {
    bad_timeout = e.what();
  }
  c.together("making rank's Runtime", [&] {
    if (!bad_timeout.empty())
      throw_error(errc::invalid_argument, bad_timeout,
                  {.argument = "ClusterOptions::timeout_s ($SINEW_MPI_TIMEOUT)",
                   .fix = "give the seconds a rank waits for the others, 0 for no limit"});
    if (!c.options.rank_shares.empty())
      Config{c.options.rank_shares}.check(static_cast<std::size_t>(c.ranks), "ClusterOptions::rank_shares");
    c.runtime = std::make_unique<Runtime>(c.options.runtime);
  });
  // The whole cluster's devices, rank by rank (a rank's own "; " become ", ": one item per rank,
  // as the knowledge base counts one share per item).
  const auto sets = c.allgather(device_set_signature(c.runtime->devices()));
  for (std::size_t r = 0; r < sets.size(); ++r) {
    std::string set = sets[r];
    for (std::size_t at = 0; at + 1 < set.size(); ++at)  // (in place: "; " and ", " are of one length)
      if (set[at] == ';' && set[at + 1] == ' ') set[at] = ',';
    c.device_set += (r ? "; rank " : "rank ") + std::to_string(r) + " [" + set + "]";
  }
}

Cluster::~Cluster() = default;

int Cluster::rank() const { return impl_->rank; }
int Cluster::ranks() const { return impl_->ranks; }
Runtime& Cluster::runtime() { return *impl_->runtime; }

void Cluster::agree(const std::string& error, const std::string& what) {
  std::optional<detail::Failure> f;
  if (!error.empty()) f = detail::Failure{static_cast<int>(errc::invalid_argument), false, error, {}, false};
  impl_->agree(f, what);
}

std::vector<RankDevices> Cluster::devices() {
  Impl& c = *impl_;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  std::vector<std::string> mine = {std::string(host, static_cast<std::size_t>(host_length))};
  for (const auto& d : c.runtime->devices())
    mine.push_back(detail::join({std::to_string(d.index), std::to_string(d.kind_index), to_string(d.kind), d.platform, d.name,
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
      const auto f = detail::split(rank_text.substr(from, at - from));
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
