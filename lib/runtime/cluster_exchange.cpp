// runtime/cluster_exchange.cpp — waiting for the other ranks with a deadline, failure notices,
// and the exchanges of a run whose partitions meet (detail::RankExchanger, exec/exchanger.hpp):
// the slices of a vector read whole (Allgatherv), the halo units of neighbouring ranks
// (Isend/Irecv of the edge units only), a loop predicate's values (Allgather, combined by the
// rule one process uses over its partitions). Built only with SINEW_MPI.
#include "exec/reduce.hpp"
#include "runtime/cluster_impl.hpp"
#include "tree/nodes/map_reduce.hpp"

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

namespace sinew {

using detail::throw_error;

namespace detail {
namespace {
std::atomic<bool> gave_up{false};
}  // namespace
bool broken() { return gave_up.load(); }
}  // namespace detail

namespace {
std::string seconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}
}  // namespace

void Cluster::Impl::check(int code, const std::string& what) const {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw_error(errc::library, "rank " + std::to_string(rank) + ": MPI failed at " + what + ": " + std::string(text, length),
              {.api_call = "MPI", .node = "cluster", .fix = "see the other ranks' messages and mpirun's output"});
}

double Cluster::Impl::wait(MPI_Request* requests, int count, const std::string& what, bool notices_too) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  for (int polls = 0;; ++polls) {
    int done = 0;
    check(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), what);
    if (done) return std::chrono::duration<double, std::milli>(clock::now() - start).count();
    if (notices_too) {
      int arrived = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, sequence, notices, &arrived, &status);
      if (arrived) {
        int length = 0;
        MPI_Get_count(&status, MPI_CHAR, &length);
        std::string text(static_cast<std::size_t>(length), '\0');
        MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, sequence, notices, MPI_STATUS_IGNORE);
        const auto f = detail::split(text);
        peer_failed = true;
        throw_error(errc::library,
                    "rank " + std::to_string(status.MPI_SOURCE) + " of " + std::to_string(ranks) +
                        " failed while this rank waited for it at " + what + ": " + f.at(2),
                    {.node = f.at(3), .argument = f.at(4), .device = f.at(5), .fix = f.at(6)});
      }
    }
    if (timeout_s > 0 && clock::now() > deadline) {
      detail::gave_up = true;
      throw_error(errc::library,
                  "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": no answer from the other ranks " +
                      "within " + seconds(timeout_s) + " s at " + what +
                      " (a rank hangs, died unnoticed, or runs that much longer than this one); the job cannot go "
                      "on and MPI is aborted at exit",
                  {.node = "cluster",
                   .fix = "find the rank that hangs; a longer wait: ClusterOptions::timeout_s or SINEW_MPI_TIMEOUT "
                          "(0: no limit)"});
    }
    // Spin for the first polls (an exchange's partner is usually microseconds away), then sleep.
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void Cluster::Impl::notify(const detail::Failure& f) {
  const std::string& text = sent.emplace_back(detail::join(
      {std::to_string(f.code), f.opencl ? "1" : "0", f.message, f.node, f.argument, f.device, f.fix}));
  for (int q = 0; q < ranks; ++q) {
    if (q == rank) continue;
    MPI_Request r;
    if (MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, q, sequence, notices, &r) == MPI_SUCCESS)
      MPI_Request_free(&r);  // small: sent eagerly; nobody waits for it
  }
}

void Cluster::Impl::drain_notices() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, notices, &arrived, &status);
    if (!arrived || status.MPI_TAG == sequence) return;
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string text(static_cast<std::size_t>(length), '\0');
    MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, notices, MPI_STATUS_IGNORE);
  }
}

namespace detail {

RankExchanger::RankExchanger(Cluster::Impl& c, std::vector<int> counts, std::vector<int> displs)
    : c_(c), counts_(std::move(counts)), displs_(std::move(displs)) {
  first = static_cast<std::size_t>(displs_[c.rank]);
  units = static_cast<std::size_t>(counts_[c.rank]);
}

void RankExchanger::gather_slices(const VectorUse& u, unsigned char* whole) {
  Datatype unit(u.vector->unit * u.vector->type.size);
  waited_ms += c_.timed("the replicas of vector '" + u.vector->name + "'", [&](MPI_Request* r) {
    return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, whole, counts_.data(), displs_.data(), unit.type,
                           c_.exchange, r);
  }, true);
}

void RankExchanger::exchange_halo(const VectorUse& u, const unsigned char* head, const unsigned char* tail,
                                  unsigned char* before, unsigned char* after) {
  // Every rank has at least the halo's width in units (Cluster::run checks), so its halo units
  // are its neighbours' alone.
  Datatype unit(u.vector->unit * u.vector->type.size);
  const int previous = c_.rank - 1, next = c_.rank + 1;
  const bool has_previous = first > 0, has_next = first + units < u.units;
  MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const std::string what = "the halo of vector '" + u.vector->name + "'";
  constexpr int kDown = 1, kUp = 2;  // towards lower ranks, towards higher ranks
  if (has_previous) {
    c_.check(MPI_Irecv(before, static_cast<int>(u.halo_before), unit.type, previous, kUp, c_.exchange, &r[0]), what);
    c_.check(MPI_Isend(head, static_cast<int>(u.halo_after), unit.type, previous, kDown, c_.exchange, &r[1]), what);
  }
  if (has_next) {
    c_.check(MPI_Irecv(after, static_cast<int>(u.halo_after), unit.type, next, kDown, c_.exchange, &r[2]), what);
    c_.check(MPI_Isend(tail, static_cast<int>(u.halo_before), unit.type, next, kUp, c_.exchange, &r[3]), what);
  }
  waited_ms += c_.wait(r, 4, what, true);
}

void RankExchanger::combine(const NodeImpl& reduction, std::map<std::string, Value>& results) {
  const Reducer& reducer = dynamic_cast<const MapReduceNode&>(reduction).reducer;
  const ElementType& t = reducer.output->type;
  Value& value = results.at(reducer.output->name);
  std::vector<unsigned char> all(t.size * static_cast<std::size_t>(c_.ranks));
  Datatype element(t.size);
  waited_ms += c_.timed("the loop predicate's result '" + reducer.output->name + "'", [&](MPI_Request* r) {
    return MPI_Iallgather(value.bytes.data(), 1, element.type, all.data(), 1, element.type, c_.exchange, r);
  }, true);
  std::vector<std::vector<unsigned char>> parts;
  for (int q = 0; q < c_.ranks; ++q) parts.emplace_back(all.begin() + q * t.size, all.begin() + (q + 1) * t.size);
  value = combine_builtin(reducer.op, parts, t);  // Cluster::run refuses custom reducers in predicates
}

}  // namespace detail

}  // namespace sinew
