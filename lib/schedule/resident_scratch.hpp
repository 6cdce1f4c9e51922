// schedule/resident_scratch.hpp — a training's scratch copy of a resident array that the tree
// writes (sinew/array.hpp), kept on the devices as the caller's array is.
//
// Training judges a plan for resident data by runs on resident data: the scratch is itself a
// resident array, so a candidate's first run places it in that candidate's decomposition and the
// runs after it move only what that decomposition's pieces lack, as the caller's runs would.
// Every run starts from the original's contents (a tree's run time may depend on them: a loop
// until a predicate); restore() puts them back outside the timed run, into the host copy and into
// each piece the earlier runs left on the devices, and leaves where each copy is up to date as
// those runs left it: the next run of the same plan finds what a run after a run of it finds.
//
// Thread safety: used by the one training that made it; the original's turn is the request's.
#pragma once

#include "exec/environment.hpp"
#include "exec/resident_array.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <utility>

namespace sinew::detail {

class ResidentScratch {
 public:
  // A new array of `original`'s type, options and runtime, holding `original`'s contents (its
  // host copy, brought up to date by the caller), in pinned memory from `env`.
  ResidentScratch(Environment& env, ArrayState& original);

  const std::shared_ptr<ArrayState>& array() const { return scratch_; }
  // The original's contents in the scratch's host copy and in every piece it holds (blocking
  // writes on a queue of each piece's device), where each copy is up to date unchanged.
  void restore();

 private:
  cl::CommandQueue& queue_for(const ArrayPiece& piece);

  const char* original_;  // the original's host copy (unchanged while the request holds its turn)
  std::shared_ptr<ArrayState> scratch_;
  std::map<std::pair<cl_context, cl_device_id>, cl::CommandQueue> queues_;
};

}  // namespace sinew::detail
