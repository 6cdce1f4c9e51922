// exec/resident_array.cpp — a resident array's state and turns (see resident_array.hpp), and
// the host access of sinew/array.hpp.
#include "exec/resident_array.hpp"

#include "platform/device.hpp"
#include "tree/node.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

namespace sinew::detail {

namespace {

std::string range_text(const ByteRanges& r, std::size_t element) {
  std::ostringstream out;
  const char* separator = "";
  for (const auto& [first, end] : r.ranges()) {
    out << separator << '[' << first / element << ", " << end / element << ')';
    separator = ", ";
  }
  return out.str();
}

}  // namespace

ArrayState::ArrayState(std::shared_ptr<PinnedBlock> host, ElementType type, const Environment* owner,
                       ArrayOptions options)
    : host_valid(0, host->bytes), host_(std::move(host)), type_(std::move(type)), owner_(owner), options_(options) {}

std::mutex& ArrayState::ticket_order() {
  static std::mutex order;
  return order;
}

std::uint64_t ArrayState::take_ticket() {
  std::lock_guard lock(turn_mutex_);
  return next_ticket_++;
}

void ArrayState::wait_turn(std::uint64_t ticket) {
  std::unique_lock lock(turn_mutex_);
  if (serving_ == ticket) return;
  std::condition_variable mine;
  waiting_.emplace(ticket, &mine);
  mine.wait(lock, [&] { return serving_ == ticket; });
  waiting_.erase(ticket);
}

bool ArrayState::park(std::uint64_t ticket, std::function<void()> resume) {
  std::lock_guard lock(turn_mutex_);
  if (serving_ == ticket) return false;
  parked_.emplace(ticket, std::move(resume));
  return true;
}

void ArrayState::end_turn() {
  std::function<void()> resume;
  {
    // Notified under the lock: the waiter cannot leave (and take its condition with it) before.
    std::lock_guard lock(turn_mutex_);
    ++serving_;
    if (auto next = waiting_.find(serving_); next != waiting_.end()) {
      next->second->notify_one();
    } else if (auto parked = parked_.find(serving_); parked != parked_.end()) {
      resume = std::move(parked->second);
      parked_.erase(parked);
    }
  }
  if (resume) resume();
}

std::uint64_t ArrayState::bring_home(std::size_t first, std::size_t end) {
  ByteRanges missing = host_valid.missing(first, end);
  std::uint64_t moved = 0;
  for (ArrayPiece& piece : pieces) {
    if (missing.empty()) break;
    ByteRanges here;
    for (const auto& [a, b] : missing.ranges()) here.add(piece.valid.within(a, b));
    if (here.empty()) continue;
    cl_call({.api_call = "clEnqueueReadBuffer", .device = piece.device_name}, [&] {
      cl::CommandQueue queue = Device::make_queue(piece.context, piece.device);
      for (const auto& [a, b] : here.ranges())
        queue.enqueueReadBuffer(piece.buffer, CL_TRUE, a - piece.first, b - a, host() + a);
    });
    host_valid.add(here);
    missing.remove(here);
    moved += here.bytes();
  }
  if (!missing.empty())
    throw_error(errc::invalid_argument,
                "elements " + range_text(missing, type_.size) + " of the resident array were lost by a failed run",
                {.argument = "resident array", .fix = "write them on the host (Array::write) before using the array, "
                                                      "or keep ArrayOptions::keep_last_good on"});
  return moved;
}

void ArrayState::invalidate(std::size_t first, std::size_t end, const ArrayPiece* except) {
  if (except) host_valid.remove(first, end);
  for (ArrayPiece& piece : pieces)
    if (&piece != except) piece.valid.remove(first, end);
}

ByteRanges ArrayState::lost() const {
  ByteRanges held = host_valid;
  for (const ArrayPiece& piece : pieces) held.add(piece.valid);
  return held.missing(0, bytes());
}

void ArrayState::require_intact(const std::string& use) const {
  const ByteRanges gone = lost();
  if (gone.empty()) return;
  throw_error(errc::invalid_argument,
              use + ": elements " + range_text(gone, type_.size) + " of the array were lost by a failed run (" +
                  last_failure() + ")",
              {.argument = use, .fix = "write them on the host (Array::write) first, or make the array with "
                                       "ArrayOptions::keep_last_good on"});
}

void ArrayState::drop_redundant(const std::vector<const ArrayPiece*>& used) {
  for (auto it = pieces.begin(); it != pieces.end();) {
    if (std::find(used.begin(), used.end(), &*it) != used.end()) {  // kept: no ranges to compare
      ++it;
      continue;
    }
    ByteRanges elsewhere = host_valid;
    for (const ArrayPiece& other : pieces)
      if (&other != &*it) elsewhere.add(other.valid);
    ByteRanges only_here = it->valid;
    only_here.remove(elsewhere);
    if (only_here.empty()) it = pieces.erase(it);
    else ++it;
  }
}

void ArrayState::detach() {
  try {
    bring_home(0, bytes());
  } catch (const Error& e) {
    note_failure(std::string("its runtime was destroyed: ") + e.what());
  }
  pieces.clear();
  detached_ = true;
}

void ArrayState::note_completed() {
  std::lock_guard lock(status_mutex_);
  ++runs_completed_;
}

void ArrayState::note_failure(std::string what) {
  failed_ = true;
  std::lock_guard lock(status_mutex_);
  last_failure_ = std::move(what);
}

std::uint64_t ArrayState::runs_completed() const {
  std::lock_guard lock(status_mutex_);
  return runs_completed_;
}

std::string ArrayState::last_failure() const {
  std::lock_guard lock(status_mutex_);
  return last_failure_;
}

ArrayClaims::ArrayClaims(const std::vector<Binding>& bindings, const Environment& env) {
  for (const Binding& b : bindings) {
    if (!b.array) continue;
    // Named on failure only: a request checks its arrays on every run.
    auto argument = [&] { return "vector '" + (b.vector ? b.vector->name : std::string("?")) + "'"; };
    if (b.array->owner() != &env || b.array->detached())
      throw_error(errc::invalid_argument,
                  b.array->detached() ? "the resident array's runtime was destroyed; its contents are on the host"
                                      : "the resident array was made by another Runtime",
                  {.argument = argument(), .fix = "make the array with this Runtime's array() and copy the contents "
                                                "over (host(), write())"});
    for (const Claim& c : claims_)
      if (c.array == b.array)
        throw_error(errc::invalid_argument, "one resident array is bound to two vectors of the run",
                    {.argument = argument(), .fix = "bind each array to one vector; copy it into a second array"});
    claims_.push_back({b.array, 0});
  }
  if (claims_.empty()) return;
  std::lock_guard order(ArrayState::ticket_order());
  for (Claim& c : claims_) c.ticket = c.array->take_ticket();
}

ArrayClaims& ArrayClaims::operator=(ArrayClaims&& other) noexcept {
  if (this == &other) return *this;
  if (!claims_.empty() && !ended_) {
    if (!begun_) begin();
    end();
  }
  claims_ = std::exchange(other.claims_, {});
  ready_ = std::exchange(other.ready_, 0);
  begun_ = std::exchange(other.begun_, false);
  ended_ = std::exchange(other.ended_, false);
  return *this;
}

ArrayClaims::~ArrayClaims() {
  if (claims_.empty() || ended_) return;
  if (!begun_) begin();
  end();
}

void ArrayClaims::begin() {
  if (begun_) return;
  begun_ = true;
  // Every request took its tickets of all its arrays at once, in one order: a request waits only
  // for requests admitted before it.
  for (Claim& c : claims_) c.array->wait_turn(c.ticket);
}

void ArrayClaims::when_ready(std::function<void()> go, std::shared_ptr<const void> keep) {
  while (ready_ < claims_.size()) {
    Claim& c = claims_[ready_++];  // its turn has come once park() says so or resumes this
    if (c.array->park(c.ticket, [this, go, keep] { when_ready(go, keep); })) return;
  }
  go();
}

void ArrayClaims::end() {
  if (!begun_ || ended_) return;
  ended_ = true;
  for (Claim& c : claims_) c.array->end_turn();
}

void ArrayClaims::completed() {
  for (Claim& c : claims_) c.array->note_completed();
}

void* array_host(ArrayState& array, std::size_t first, std::size_t bytes, bool write) {
  if (first + bytes > array.bytes())
    throw_error(errc::invalid_argument,
                "write(" + std::to_string(first / array.type().size) + ", " + std::to_string(bytes / array.type().size) +
                    ") reaches past the array's " + std::to_string(array.bytes() / array.type().size) + " elements",
                {.argument = "Array::write", .fix = "write a range within size()"});
  std::uint64_t ticket = 0;
  {
    std::lock_guard order(ArrayState::ticket_order());
    ticket = array.take_ticket();
  }
  array.wait_turn(ticket);
  struct EndTurn {
    ArrayState& a;
    ~EndTurn() { a.end_turn(); }
  } end_turn{array};
  if (write) {
    // What can be brought home is; lost bytes get the caller's new contents.
    const ByteRanges lost_here = array.lost().within(first, first + bytes);
    ByteRanges wanted(first, first + bytes);
    wanted.remove(lost_here);
    for (const auto& [a, b] : wanted.ranges()) array.bring_home(a, b);
    array.host_valid.add(first, first + bytes);
    array.invalidate(first, first + bytes, nullptr);
    array.drop_redundant({});
  } else {
    array.require_intact("Array::host");
    array.bring_home(first, first + bytes);
  }
  return array.host() + first;
}

std::size_t array_bytes(const ArrayState& array) { return array.bytes(); }
std::uint64_t array_runs_completed(const ArrayState& array) { return array.runs_completed(); }
std::string array_last_failure(const ArrayState& array) { return array.last_failure(); }

}  // namespace sinew::detail

namespace sinew {

void* Binding::array_data(const std::shared_ptr<detail::ArrayState>& a) {
  if (!a)
    detail::throw_error(errc::invalid_argument, "a binding to an empty Array (default-constructed)",
                        {.argument = "Array", .fix = "make the array with Runtime::array<T>(n)"});
  return a->host();
}

}  // namespace sinew
