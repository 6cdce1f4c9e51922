// runtime/cluster_impl.hpp — what the Cluster's files share: cluster.cpp (making it, agreeing,
// its devices), run()'s stages (cluster_run.hpp: cluster_run.cpp, cluster_split.cpp,
// cluster_data.cpp, cluster_results.cpp, cluster_observe.cpp, cluster_spmd.cpp),
// cluster_distributed.cpp (distributed bindings), cluster_exchange.cpp (waiting with a deadline,
// failure notices, and the exchanges of a run whose partitions meet). Built only with SINEW_MPI.
//
// Every MPI call that waits for other ranks is non-blocking and waited for by Impl::wait, which
// gives up after the timeout (ClusterOptions::timeout_s): a rank that hangs, or dies without
// mpirun noticing, ends the others with a sinew::Error instead of a hang.
#pragma once

#include "exec/exchanger.hpp"
#include "platform/error.hpp"
#include "tree/analysis.hpp"

#include <sinew/cluster.hpp>
#include <sinew/kb.hpp>

// The C API only: Open MPI's and MPICH's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sinew {

namespace detail {

// Host memory for a rank's part of a vector: page-aligned, like the pinned blocks, so a CPU
// device reads it in place (PoCL's zero-copy buffers want aligned host pointers). A whole-sized
// one (a run whose partitions meet) costs only the pages the rank touches.
struct AlignedBuffer {
  std::unique_ptr<unsigned char, decltype(&std::free)> data{nullptr, &std::free};
  explicit AlignedBuffer(std::size_t bytes) {
    if (bytes) data.reset(static_cast<unsigned char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)));
    if (bytes && !data) throw std::bad_alloc();
  }
};

// What one rank's failure carries to the others: its error's code and category, message and
// every field of its context (a build failure's log too). `secondary`: it only reports another
// rank's failure (a notice that came during an exchange), which the agreement ranks below the
// original.
struct Failure {
  int code = 0;
  bool opencl = false;
  std::string message;
  ErrorContext context;
  bool secondary = false;

  // As one text through MPI, and back.
  std::string text() const;
  static Failure from_text(const std::string& text);
  // The error it makes on a rank, its message `message` (the failure's own, or one that names
  // the rank and step).
  Error error(const std::string& message) const;
};
// A rank's failure from what it caught: a sinew::Error whole; std::bad_alloc as OpenCL's
// CL_OUT_OF_HOST_MEMORY; anything else as errc::user_code (the library throws only sinew::Error),
// its message naming the type thrown and `thrower`, the node of the program's code that may have
// thrown it (empty: none known).
Failure failure_of(const std::exception_ptr& e, const std::string& thrower = {});

// Strings through MPI as one buffer, fields split by a unit separator.
std::string join(const std::vector<std::string>& fields);
std::vector<std::string> split(const std::string& s);

// `n` as an MPI count; sinew::Error naming `what` when one message cannot carry it.
int as_int(std::size_t n, const std::string& what);

// One MPI datatype of `bytes` contiguous bytes (a vector's unit or element), freed with it.
struct Datatype {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  explicit Datatype(std::size_t bytes);
  ~Datatype() { MPI_Type_free(&type); }
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
};

// Some wait gave up (Impl::wait), or a rank said it did: MPI cannot be finalised with the other
// ranks, the job is aborted at exit instead.
bool broken();

}  // namespace detail

struct Cluster::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  // Failure notices: a rank whose run fails tells the others at once, so that those waiting for
  // it in an exchange fail now (tag: the run's sequence number, from 1), not at the timeout. A
  // rank that gave up waiting tells them on tag kGaveUp, which every wait looks for: the job
  // cannot go on, and none waits a second timeout for a rank that hangs.
  MPI_Comm notices = MPI_COMM_NULL;
  static constexpr int kGaveUp = 0;
  // What ended this job: the first wait given up on, here or on another rank (Impl::wait). From
  // then on no rank waits for another: every wait and agreement throws it at once.
  std::optional<detail::Failure> gave_up;
  // The exchanges of runs whose partitions meet. A run that failed may leave some rank's
  // exchange unmatched; the next such run takes a fresh communicator (the old one is dropped).
  MPI_Comm exchange = MPI_COMM_NULL;
  bool exchange_stale = false;
  int rank = 0, ranks = 1;
  int thread_level = MPI_THREAD_SINGLE;
  ClusterOptions options;
  double timeout_s = 60;
  int sequence = 0;            // run() calls so far, alike on every rank
  bool peer_failed = false;    // this run's exchange ended on another rank's notice
  std::deque<std::string> sent;  // notices being sent (MPI reads them after Isend returns)
  // Buffers of exchanges given up on (a notice, the timeout): MPI may still write into them, so
  // they live as long as the process.
  std::deque<std::vector<unsigned char>> abandoned;
  std::deque<std::vector<int>> abandoned_counts;  // their counts and displacements
  std::unique_ptr<Runtime> runtime;

  // The trees whose ranks run other values than the root's, already said on the root's log.
  std::set<std::string> told_other_values;

  // The whole cluster's device set (every rank's devices, in rank order): the root's knowledge
  // base keeps rank shares under it (cluster_split.cpp, cluster_observe.cpp).
  std::string device_set;

  ~Impl();

  // A cluster's entries are kept under their own tree key, beside the ranks' own entries for
  // their slices: "cluster:" and the tree's signature.
  static std::string cluster_tree(const std::string& signature) { return "cluster:" + signature; }

  // Throws on every rank when some rank has a failure (the lowest rank's whose failure is its
  // own, else the lowest's). In a job some rank gave up on, throws this rank's own failure (or
  // what ended the job) without waiting for the others.
  void agree(const std::optional<detail::Failure>& mine, const std::string& what);

  // Runs f on this rank; its exception becomes this rank's failure, agreed on by every rank.
  template <class F>
  void together(const std::string& what, F&& f) {
    std::optional<detail::Failure> failure;
    try {
      f();
    } catch (...) {
      failure = detail::failure_of(std::current_exception());
    }
    agree(failure, what);
  }

  // Waits until `requests` complete. Throws sinew::Error when the timeout passes first (the job
  // is then broken: MPI aborts at exit; this rank says what it waited for on its log and to every
  // other rank), when another rank says it gave up, or — `notices_too` — when another rank's
  // failure notice of this run arrives. Returns the milliseconds it waited.
  double wait(MPI_Request* requests, int count, const std::string& what, bool notices_too = false);
  // Starts one non-blocking call (`start` gets its request) and waits for it.
  template <class F>
  double timed(const std::string& what, F&& start, bool notices_too = false) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(start(&request), what);
    return wait(&request, 1, what, notices_too);
  }
  // sinew::Error for an MPI call's error code (the communicators return errors, not abort).
  void check(int code, const std::string& what) const;
  // Tells every other rank that this rank's run failed (tag: the run's sequence number, or
  // kGaveUp).
  void notify(const detail::Failure& f, int tag);
  // A notice on `tag` that has arrived, taken: the rank that sent it and its failure.
  std::optional<std::pair<int, detail::Failure>> take_notice(int tag);
  // The timeout passed at `what`: says so on this rank's log and to every other rank, and throws.
  [[noreturn]] void give_up(const std::string& what);
  // Rank `from` gave up waiting (its failure `f`): throws, naming it and where this rank was.
  [[noreturn]] void stop_with_the_job(int from, detail::Failure f, const std::string& what);
  // Drops failure notices of earlier runs.
  void drain_notices();

  std::vector<std::string> allgather(const std::string& mine);
};

namespace detail {

// The exchanges of a run whose partitions meet, over MPI (exec/exchanger.hpp): every rank runs
// its units [first, first + units); `counts` and `displs` are every rank's, in units.
class RankExchanger final : public Exchanger {
 public:
  RankExchanger(Cluster::Impl& c, std::vector<int> counts, std::vector<int> displs);
  void gather_slices(const VectorUse& u, unsigned char* whole) override;
  void exchange_halo(const VectorUse& u, const unsigned char* head, const unsigned char* tail, unsigned char* before,
                     unsigned char* after) override;
  void combine(const NodeImpl& reduction, std::map<std::string, Value>& results) override;
  std::vector<unsigned char> values_before(const std::vector<unsigned char>& mine, std::size_t value_bytes,
                                           const std::string& what) override;
  void gather_to_root(const VectorUse& u, unsigned char* whole) override;
  void scatter_from_root(const VectorUse& u, unsigned char* whole) override;
  // Milliseconds spent waiting for the other ranks in exchanges (not this rank's work).
  double waited_ms = 0;
  // Set once the rank's run has begun: from then on a wait also ends on another rank's failure
  // notice (before, every rank is still in the same step and only the timeout applies).
  bool running = false;

 private:
  // Waits for `requests`; when the wait gives up, the buffers MPI may still write into are kept
  // (Impl::abandoned), and the error goes on.
  void wait(MPI_Request* requests, int count, const std::string& what);

  Cluster::Impl& c_;
  std::vector<int> counts_, displs_;
  // The exchanges' own buffers (the executor's may be gone when an exchange is given up on).
  std::map<const VectorState*, std::vector<unsigned char>> replicas_;
  std::vector<unsigned char> send_, receive_, values_, all_values_;
  std::vector<int> value_counts_, value_displs_;
};

// One stand-in device per rank (index r for rank r): the ranks as the devices of decompose()
// and of the Balancer, which split units and move shares between ranks as between devices.
inline std::vector<DeviceInfo> rank_stand_ins(std::size_t ranks) {
  std::vector<DeviceInfo> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r) out[r].index = r;
  return out;
}

// Bindings that are each rank's own block of a vector (Binding::distributed; cluster_distributed.cpp).
// What every rank binds, gathered to every rank before the checks, so that every rank decides
// alike: per binding, whether it is distributed (as the root binds it) and the size the tree
// sees (the root's, or the sum of the ranks' blocks); per distributed binding, each rank's block.
struct BoundSizes {
  std::vector<std::uint64_t> sizes;
  std::vector<char> distributed;
  std::vector<std::vector<std::uint64_t>> blocks;  // [binding][rank], elements (distributed only)
  std::vector<std::vector<char>> flags;            // [binding][rank]: each rank's mark
  bool any = false;
};
// Collective: `count` bindings (the root's count; a rank with another count sends what it has).
BoundSizes gather_bound_sizes(Cluster::Impl& c, const std::vector<Binding>& bindings, std::size_t count);
// On every rank alike, before any device work. Before the tree's analysis: the marks agree,
// distributed bindings are vectors (not results), every block is whole units, and each rank's
// blocks cover the same units; returns each rank's units (its blocks pin the split). After it:
// distributed vectors are split into units (not read whole alone), every block but the last
// whole granules.
std::vector<std::size_t> distributed_units(const BoundSizes& b, const std::vector<Binding>& bindings);
void check_distributed(const BoundSizes& b, const std::vector<Binding>& bindings, const Analysis& an,
                       const std::vector<std::size_t>& units, std::size_t granule);

}  // namespace detail

}  // namespace sinew
