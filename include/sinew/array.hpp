// sinew/array.hpp — data that stays on the devices between runs: resident arrays.
//
// An Array (Runtime::array) is a vector whose copies the runtime keeps: after a run each device
// keeps the slices it ran, and the next run that gives a device the same units moves nothing for
// them. Bind it to a tree's vector like host memory (`{v, x}`); the host sees its contents only
// through host() and write(). docs/guide/resident-data.md has the coherence rules.
//
// Lifetimes: an Array shares its state between its copies (a handle, like std::shared_ptr). It may
// outlive the Runtime that made it: when that Runtime is destroyed, every array it made is brought
// to host memory and its device copies are freed; host() and write() work on as before, and a run
// that binds the array (in any runtime) is refused. A run binding an array of another Runtime is
// refused.
//
// Thread safety and order: every use of an array — a run that binds it, host(), write() — takes
// a turn in the order it was made on the calling threads (a run: when Runtime::run or execute
// admits it), and the turns of one array run one at a time. host() waits for every run admitted
// before it, and a run admitted after a write() sees what was written. A span that host() or
// write() returned stays valid until the array is destroyed, but its contents are only the array's
// until the next run that binds the array is admitted: read and write it before that.
#pragma once

#include <sinew/types.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace sinew {

/// How a resident array behaves when a run that writes it fails (see Array).
struct ArrayOptions {
  /// A failed run leaves the array as it was before the run: on a device, a slice that the run
  /// reads and writes and that no other place holds up to date is first copied into a second
  /// device buffer (one copy on the device per run; a slice the run only writes is written into a
  /// second buffer at no cost); on the host, the range is copied aside. false: no such copy; a
  /// failed run loses the ranges it wrote, and the array refuses runs and host() until write()
  /// gives them new contents.
  bool keep_last_good = true;
};

namespace detail {
class ArrayState;
/// \cond INTERNAL
// The host copy of bytes [first, first + bytes) brought up to date (waiting its turn); `write`:
// every device copy of that range is dropped, the host's becomes the only one. Returns the host
// copy's first byte.
void* array_host(ArrayState& array, std::size_t first, std::size_t bytes, bool write);
std::size_t array_bytes(const ArrayState& array);
std::uint64_t array_runs_completed(const ArrayState& array);
std::string array_last_failure(const ArrayState& array);
/// \endcond
}  // namespace detail

/// A vector of `T` kept on the devices between runs (see the header's description). Made by
/// Runtime::array; bound to a tree's vector as `{v, array}`, read and written.
template <class T>
class Array {
 public:
  /// No array (size() 0); Runtime::array makes the ones that hold data.
  Array() = default;
  /// \cond INTERNAL
  explicit Array(std::shared_ptr<detail::ArrayState> state) : state_(std::move(state)) {}
  const std::shared_ptr<detail::ArrayState>& state() const { return state_; }
  /// \endcond

  /// Elements.
  std::size_t size() const { return state_ ? detail::array_bytes(*state_) / sizeof(T) : 0; }
  /// The contents, read-only: waits for the runs admitted before, then brings what devices hold
  /// to host memory (a sinew::Error where a failed run lost a range, see ArrayOptions).
  std::span<const T> host() const {
    return {static_cast<const T*>(detail::array_host(*state_, 0, size() * sizeof(T), false)), size()};
  }
  /// Elements [first, first + count) to write on the host: waits for the runs admitted before,
  /// brings the range to host memory, and drops the devices' copies of it (the next run moves
  /// it to the devices again). Write them before the next run that binds the array is admitted.
  std::span<T> write(std::size_t first, std::size_t count) {
    return {static_cast<T*>(detail::array_host(*state_, first * sizeof(T), count * sizeof(T), true)), count};
  }
  /// Every element to write on the host (see write(first, count)).
  std::span<T> write() { return write(0, size()); }
  /// Requests (Runtime::run, execute) that bound the array and completed; a request's training
  /// or screening runs are not counted apart.
  std::uint64_t runs_completed() const { return detail::array_runs_completed(*state_); }
  /// What the last failed run that bound the array left (which ranges it restored or lost and how
  /// many runs had completed before it); empty where none failed.
  std::string last_failure() const { return detail::array_last_failure(*state_); }

 private:
  std::shared_ptr<detail::ArrayState> state_;
};

}  // namespace sinew
