// exec/halo.hpp — the halo buffers of vectors read with sinew::halo: their layout, how they are
// filled from the host, and how only their halo units move between partitions.
//
// Each partition keeps, per vector read with a halo, one buffer of (before + units + after)
// units: the slice at unit `before`, the neighbours' units around it (PartState::halos). Where the
// slice's offset in it is a multiple of the device's base address alignment, the partition's
// slice is a sub-buffer of it, so what a leaf writes (a loop's copy, an earlier stage) lands in
// place; elsewhere the slice is its own buffer and an exchange copies it in first. A vector that
// the tree only reads is filled once, from the host, halo included (a zero-copy CPU device reads a
// partition that is not at an edge of the vector in place); one that the tree writes exchanges
// its halo units before the next halo read (exchange), on the devices where the partitions
// share a context and through the host between contexts. A run split over processes
// (exec/spanning.hpp) also takes the neighbouring processes' edge units (remote_units).
//
// Thread safety: exchange() runs on one thread while every queue is idle (at a barrier, or with
// one worker); allocate() and upload() on the partition's worker's thread.
#pragma once

#include "exec/worker.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

class RunState;

// The units of a vector that other processes run, next to this process's [first, end): the
// halo_before units before `first` and the halo_after units after `end` (none beyond the vector).
struct RemoteUnits {
  std::size_t first = 0, end = 0;
  std::vector<unsigned char> before, after;
  // Where unit x (another process's) lies in `before` or `after`, and how many units from it on
  // up to `until` do.
  std::pair<const unsigned char*, std::size_t> at(std::size_t x, std::size_t until, const VectorUse& u) const;
};

class Halos {
 public:
  explicit Halos(RunState& run) : run_(run) {}
  virtual ~Halos() = default;
  Halos(const Halos&) = delete;
  Halos& operator=(const Halos&) = delete;

  // Before any buffer, once the run's partitions are placed: the partitions in unit order (an
  // exchange finds a unit's partition there), each constant boundary's element repeated over the
  // widest side.
  void plan();
  // The partition's halo buffer of `u` (and its slice, when that can be part of it). Before any
  // data moves.
  void allocate(PartState& ps, const VectorUse& u);
  // Fills the partition's halo buffer of the bound vector `u` from the host: its slice and halo,
  // the boundary beyond the vector's edges.
  void upload(PartState& ps, const VectorUse& u);
  // Brings every partition's halo units of `v` up to date from its neighbours' slices (and the
  // boundary), after leaves wrote them; `reader` is the leaf that reads the halo next. Returns
  // once the copies are enqueued (several workers: finished). Records the exchange for the report.
  void exchange(const VectorState* v, const std::string& reader, std::size_t iteration);

 protected:
  // The other processes' units next to this one's (a run split over processes; none here).
  virtual std::optional<RemoteUnits> remote_units(const VectorUse& u) {
    (void)u;
    return std::nullopt;
  }
  // Copies this process's units [x, x + n) of `u` to `to` (blocking: after the leaves that wrote them).
  void read_units(const VectorUse& u, std::size_t x, std::size_t n, unsigned char* to);
  RunState& run_;

 private:
  struct Exchange;
  // One partition's halo units of `u` brought up to date (exchange()).
  void refresh(PartState& ps, const VectorUse& u, Exchange& x);
  void copy_between_devices(PartState& ps, const cl::Buffer& halo, PartState& source, const cl::Buffer& from,
                            std::size_t from_offset, std::size_t to_offset, std::size_t bytes, cl::Event& ev,
                            Exchange& x);
  void copy_units(PartState& ps, const VectorUse& u, std::size_t src, std::size_t dst, std::size_t units,
                  std::uint64_t& counted, Exchange& x);
  const std::string& label(const std::string& text);
  std::vector<PartState*> by_unit_;
  std::map<const VectorState*, std::vector<unsigned char>> fill_;
  std::map<std::string, std::string> labels_;  // stable strings for TimedEvent::path
};

}  // namespace sinew::detail
