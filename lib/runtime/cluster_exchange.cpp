// runtime/cluster_exchange.cpp — waiting for the other ranks with a deadline, failure notices,
// and the exchanges of a run whose partitions meet (detail::RankExchanger, exec/exchanger.hpp):
// the slices of a vector read whole (Allgatherv), the halo units of neighbouring ranks
// (Isend/Irecv of the edge units only), a loop predicate's values (Allgather, combined by the
// rule one process uses over its partitions), a scan's totals (Allgather of the counts, then
// Allgatherv), divide and conquer's parts to the root and back (Gatherv, Scatterv). Built only
// with SINEW_MPI.
#include "exec/reduce.hpp"
#include "runtime/cluster_impl.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
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
  root = c.rank == 0;
}

void RankExchanger::wait(MPI_Request* requests, int count, const std::string& what) {
  try {
    waited_ms += c_.wait(requests, count, what, running);
  } catch (...) {
    for (auto& [v, buffer] : replicas_) c_.abandoned.push_back(std::move(buffer));
    replicas_.clear();
    for (auto* b : {&send_, &receive_, &values_, &all_values_}) c_.abandoned.push_back(std::move(*b));
    // The counts and displacements a pending collective reads (or, for a scan's value counts,
    // writes): the vectors themselves, since MPI holds their addresses.
    for (auto* v : {&counts_, &displs_, &value_counts_, &value_displs_}) c_.abandoned_counts.push_back(std::move(*v));
    throw;
  }
}

void RankExchanger::gather_slices(const VectorUse& u, unsigned char* whole) {
  const std::size_t ub = u.vector->unit * u.vector->type.size;
  auto& buffer = replicas_[u.vector.get()];
  buffer.resize(u.bytes());
  std::memcpy(buffer.data() + first * ub, whole + first * ub, units * ub);
  Datatype unit(ub);
  const std::string what = "the replicas of vector '" + u.vector->name + "'";
  MPI_Request r = MPI_REQUEST_NULL;
  c_.check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), counts_.data(), displs_.data(),
                           unit.type, c_.exchange, &r),
           what);
  wait(&r, 1, what);
  std::memcpy(whole, buffer.data(), first * ub);
  std::memcpy(whole + (first + units) * ub, buffer.data() + (first + units) * ub, u.bytes() - (first + units) * ub);
}

void RankExchanger::exchange_halo(const VectorUse& u, const unsigned char* head, const unsigned char* tail,
                                  unsigned char* before, unsigned char* after) {
  // Every rank has at least the halo's width in units (Cluster::run checks), so its halo units
  // are its neighbours' alone.
  const std::size_t ub = u.vector->unit * u.vector->type.size;
  const std::size_t head_bytes = u.halo_after * ub, tail_bytes = u.halo_before * ub;
  Datatype unit(ub);
  const int previous = c_.rank - 1, next = c_.rank + 1;
  const bool has_previous = first > 0, has_next = first + units < u.units;
  send_.resize(head_bytes + tail_bytes);
  receive_.resize(tail_bytes + head_bytes);  // the units before, then those after
  if (has_previous) std::memcpy(send_.data(), head, head_bytes);
  if (has_next) std::memcpy(send_.data() + head_bytes, tail, tail_bytes);
  MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const std::string what = "the halo of vector '" + u.vector->name + "'";
  constexpr int kDown = 1, kUp = 2;  // towards lower ranks, towards higher ranks
  if (has_previous) {
    c_.check(MPI_Irecv(receive_.data(), static_cast<int>(u.halo_before), unit.type, previous, kUp, c_.exchange, &r[0]),
             what);
    c_.check(MPI_Isend(send_.data(), static_cast<int>(u.halo_after), unit.type, previous, kDown, c_.exchange, &r[1]),
             what);
  }
  if (has_next) {
    c_.check(MPI_Irecv(receive_.data() + tail_bytes, static_cast<int>(u.halo_after), unit.type, next, kDown,
                       c_.exchange, &r[2]),
             what);
    c_.check(MPI_Isend(send_.data() + head_bytes, static_cast<int>(u.halo_before), unit.type, next, kUp, c_.exchange,
                       &r[3]),
             what);
  }
  wait(r, 4, what);
  if (has_previous) std::memcpy(before, receive_.data(), tail_bytes);
  if (has_next) std::memcpy(after, receive_.data() + tail_bytes, head_bytes);
}

void RankExchanger::combine(const NodeImpl& reduction, std::map<std::string, Value>& results) {
  const Reducer& reducer = *reduction.reduction();
  const ElementType& t = reducer.output->type;
  Value& value = results.at(reducer.output->name);
  values_ = value.bytes;
  all_values_.resize(t.size * static_cast<std::size_t>(c_.ranks));
  Datatype element(t.size);
  const std::string what = "the loop predicate's result '" + reducer.output->name + "'";
  MPI_Request r = MPI_REQUEST_NULL;
  c_.check(MPI_Iallgather(values_.data(), 1, element.type, all_values_.data(), 1, element.type, c_.exchange, &r), what);
  wait(&r, 1, what);
  std::vector<std::vector<unsigned char>> parts;
  for (int q = 0; q < c_.ranks; ++q)
    parts.emplace_back(all_values_.begin() + q * t.size, all_values_.begin() + (q + 1) * t.size);
  value = combine_builtin(reducer.op, parts, t);  // Cluster::run refuses custom reducers in predicates
}

std::vector<unsigned char> RankExchanger::values_before(const std::vector<unsigned char>& mine, std::size_t value_bytes,
                                                       const std::string& what) {
  // How many values each rank has (a rank's non-empty partitions: not known elsewhere), then the
  // values themselves.
  const int count = as_int(mine.size() / value_bytes, what);
  value_counts_.assign(static_cast<std::size_t>(c_.ranks), 0);
  value_counts_[c_.rank] = count;  // in place: no buffer of this call's own that MPI reads
  MPI_Request r = MPI_REQUEST_NULL;
  c_.check(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, value_counts_.data(), 1, MPI_INT, c_.exchange, &r),
           what);
  wait(&r, 1, what);
  value_displs_.assign(static_cast<std::size_t>(c_.ranks), 0);
  for (int q = 1; q < c_.ranks; ++q) value_displs_[q] = value_displs_[q - 1] + value_counts_[q - 1];
  values_ = mine;
  all_values_.resize(static_cast<std::size_t>(value_displs_.back() + value_counts_.back()) * value_bytes);
  Datatype value(value_bytes);
  c_.check(MPI_Iallgatherv(values_.data(), count, value.type, all_values_.data(), value_counts_.data(),
                           value_displs_.data(), value.type, c_.exchange, &r),
           what);
  wait(&r, 1, what);
  return {all_values_.begin(), all_values_.begin() + value_displs_[c_.rank] * static_cast<std::ptrdiff_t>(value_bytes)};
}

void RankExchanger::gather_to_root(const VectorUse& u, unsigned char* whole) {
  // Through the exchanger's own buffer, as gather_slices: the root's holds every unit.
  const std::size_t ub = u.vector->unit * u.vector->type.size;
  auto& buffer = replicas_[u.vector.get()];
  buffer.resize(root ? u.bytes() : units * ub);
  std::memcpy(buffer.data() + (root ? first * ub : 0), whole + first * ub, units * ub);
  Datatype unit(ub);
  const std::string what = "the parts of vector '" + u.vector->name + "' for the root";
  MPI_Request r = MPI_REQUEST_NULL;
  c_.check(MPI_Igatherv(root ? MPI_IN_PLACE : buffer.data(), counts_[c_.rank], unit.type, buffer.data(),
                        counts_.data(), displs_.data(), unit.type, 0, c_.exchange, &r),
           what);
  wait(&r, 1, what);
  if (root) {
    std::memcpy(whole, buffer.data(), first * ub);
    std::memcpy(whole + (first + units) * ub, buffer.data() + (first + units) * ub, u.bytes() - (first + units) * ub);
  }
}

void RankExchanger::scatter_from_root(const VectorUse& u, unsigned char* whole) {
  const std::size_t ub = u.vector->unit * u.vector->type.size;
  auto& buffer = replicas_[u.vector.get()];
  if (root)
    buffer.assign(whole, whole + u.bytes());
  else
    buffer.resize(units * ub);
  Datatype unit(ub);
  const std::string what = "the root's result in vector '" + u.vector->name + "'";
  MPI_Request r = MPI_REQUEST_NULL;
  c_.check(MPI_Iscatterv(buffer.data(), counts_.data(), displs_.data(), unit.type, root ? MPI_IN_PLACE : buffer.data(),
                         counts_[c_.rank], unit.type, 0, c_.exchange, &r),
           what);
  wait(&r, 1, what);
  if (!root) std::memcpy(whole + first * ub, buffer.data(), units * ub);
}

}  // namespace detail

}  // namespace sinew
