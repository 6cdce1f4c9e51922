// exec/resident_array.hpp — a resident array's state (sinew/array.hpp): its host copy, the
// pieces of it that devices hold, where each is up to date, and the turns its uses take.
//
// Coherence: every byte of the array is up to date in at least one place (the host copy or a
// piece) unless a failed run lost it (ArrayOptions::keep_last_good off). Several places may hold
// one byte up to date at once; a write anywhere makes the writer's the only one.
//
// Thread safety: the uses of an array take turns (take_ticket on the admitting thread, in the
// order of admission across every array; wait_turn, or park for a use that waits without a
// thread, and end_turn around the use: docs/decisions/179); the pieces and
// the host copy are touched only by the use whose turn it is. The counters read without a turn
// (runs_completed, last_failure) are guarded by their own lock.
#pragma once

#include "exec/byte_ranges.hpp"
#include "exec/environment.hpp"
#include "platform/cl.hpp"

#include <sinew/array.hpp>
#include <sinew/binding.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sinew::detail {

// A copy of bytes [first, end) of an array in one device's memory.
struct ArrayPiece {
  cl::Context context;
  cl::Device device;
  std::string device_name;
  std::size_t first = 0, end = 0;
  cl::Buffer buffer;
  cl::Buffer spare;   // a second buffer of the same size (ArrayOptions::keep_last_good), or none
  ByteRanges valid;   // where it is up to date, in the array's bytes
  std::size_t bytes() const { return end - first; }
};

class ArrayState {
 public:
  // `host`: the host copy (pinned where the runtime has a discrete device), its bytes the
  // array's; `owner`: the runtime that made it (its Environment).
  ArrayState(std::shared_ptr<PinnedBlock> host, ElementType type, const Environment* owner, ArrayOptions options);

  std::size_t bytes() const { return host_->bytes; }
  const ElementType& type() const { return type_; }
  char* host() { return static_cast<char*>(host_->data); }
  const ArrayOptions& options() const { return options_; }
  const Environment* owner() const { return owner_; }
  bool detached() const { return detached_; }

  // Turns (see the header). take_ticket's caller holds ticket_order().
  static std::mutex& ticket_order();
  std::uint64_t take_ticket();
  void wait_turn(std::uint64_t ticket);
  // Instead of a thread waiting for `ticket`'s turn: `resume` is called, on the thread that ends
  // the turn before it, once that turn has ended. False (nothing kept) where it is `ticket`'s turn.
  bool park(std::uint64_t ticket, std::function<void()> resume);
  void end_turn();

  // Within a turn. Where the host copy is up to date, and the devices' pieces.
  ByteRanges host_valid;
  std::list<ArrayPiece> pieces;
  // Brings bytes [first, end) up to date on the host from the pieces that hold them (blocking
  // reads); returns the bytes read. Throws where some byte is up to date nowhere (lost()).
  std::uint64_t bring_home(std::size_t first, std::size_t end);
  // Bytes [first, end) written elsewhere than `except` (null: the host): every other place's copy
  // of them is stale.
  void invalidate(std::size_t first, std::size_t end, const ArrayPiece* except);
  // Bytes up to date nowhere.
  ByteRanges lost() const;
  // Whether some bytes may be up to date nowhere: false until a failure is noted (note_failure),
  // since only a failed run's rollback or a failed detach() leaves bytes nowhere (a run's commit,
  // invalidate() and drop_redundant() keep every byte up to date somewhere). A run's check of its
  // arrays (Residency::place) needs no lost() before then.
  bool may_have_lost() const { return failed_; }
  // A sinew::Error naming `use` where some bytes are lost.
  void require_intact(const std::string& use) const;
  // The pieces no place needs: up to date nowhere, or only where another place is too, and not
  // in `used`.
  void drop_redundant(const std::vector<const ArrayPiece*>& used);
  // The runtime goes away: the contents home, every piece freed; runs refused from now on.
  void detach();

  void note_completed();
  void note_failure(std::string what);
  std::uint64_t runs_completed() const;
  std::string last_failure() const;

 private:
  std::shared_ptr<PinnedBlock> host_;
  ElementType type_;
  const Environment* owner_;
  ArrayOptions options_;
  bool detached_ = false;

  std::mutex turn_mutex_;
  // Each waiting use's own condition, by its ticket: an ended turn wakes the next ticket's
  // holder alone (submitted runs each wait on a thread of their own; waking them all at every
  // turn cost each run their wake-ups).
  std::map<std::uint64_t, std::condition_variable*> waiting_;
  std::map<std::uint64_t, std::function<void()>> parked_;  // park()
  std::uint64_t next_ticket_ = 0, serving_ = 0;

  mutable std::mutex status_mutex_;
  std::uint64_t runs_completed_ = 0;
  std::string last_failure_;
  std::atomic<bool> failed_{false};  // a failure was noted (may_have_lost)
};

// The turns of one request's arrays: tickets taken at admission (the arrays checked: made by this
// runtime, which is alive, each bound once), waited for when the request runs.
class ArrayClaims {
 public:
  ArrayClaims() = default;
  // Checks and takes a ticket of every array in `bindings` (a sinew::Error naming the vector for
  // an array of another runtime, a runtime that is gone, or one bound twice).
  ArrayClaims(const std::vector<Binding>& bindings, const Environment& env);
  // A moved-from claims holds no ticket.
  ArrayClaims(ArrayClaims&& other) noexcept { *this = std::move(other); }
  bool empty() const { return claims_.empty(); }
  ArrayClaims& operator=(ArrayClaims&& other) noexcept;
  // A ticket never waited for is waited for and passed on.
  ~ArrayClaims();

  // Waits for every array's turn, in one order every request uses (no two wait on each other).
  void begin();
  // Calls `go` once every array's turn has come, in the same order, without a thread waiting:
  // now, on this thread, or on the thread that ends the last turn it waited for (ArrayState::park).
  // `keep` holds the claims (their owner) alive meanwhile. begin() then waits for nothing.
  void when_ready(std::function<void()> go, std::shared_ptr<const void> keep);
  // Ends the turns begun.
  void end();
  // The request completed: each array counts it (Array::runs_completed).
  void completed();

 private:
  struct Claim {
    std::shared_ptr<ArrayState> array;
    std::uint64_t ticket = 0;
  };
  std::vector<Claim> claims_;
  std::size_t ready_ = 0;  // when_ready: the claims whose turn has come
  bool begun_ = false, ended_ = false;
};

// The request's turns, for as long as it runs.
class ArrayTurn {
 public:
  explicit ArrayTurn(ArrayClaims& claims) : claims_(claims) { claims_.begin(); }
  ~ArrayTurn() { claims_.end(); }
  ArrayTurn(const ArrayTurn&) = delete;
  ArrayTurn& operator=(const ArrayTurn&) = delete;

 private:
  ArrayClaims& claims_;
};

}  // namespace sinew::detail
