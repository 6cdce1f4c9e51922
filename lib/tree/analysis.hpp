// tree/analysis.hpp — checking a tree against its bindings before any device work.
//
// `analyze` resolves every vector's size, has every node check itself (its arguments against its
// kernel's signature, its shapes), checks the data flow of the whole tree, and returns what
// execution needs to know: the vectors, how they are used, and the common number of units they
// are partitioned in. Every error names the tree node, the argument and the fix.
//
// An Analysis refers to bindings by their position in the request's binding list, never by
// address: it holds for every request whose bindings have the same shapes (the prepared tree
// keeps one and serves it to every such request).
#pragma once

#include "tree/node.hpp"

#include <sinew/binding.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

struct VectorUse {
  std::shared_ptr<VectorState> vector;
  std::size_t elements = 0;       // resolved size
  std::size_t units = 0;          // elements / unit
  std::ptrdiff_t binding = -1;    // position in the request's bindings; -1: not bound
  bool read_partitioned = false;  // some leaf reads its slice (in/inout)
  bool written = false;           // some leaf writes its slice (out/inout)
  bool read_whole = false;        // some leaf reads it whole
  bool partitioned = false;       // used as a slice anywhere (read or written)
  bool aligned = false;           // some leaf's kernels count on aligned buffers (NodeImpl::assumes_aligned_buffers)
  // Read with a halo (sinew::halo): the widths and boundary every such read declares.
  bool read_halo = false;
  std::size_t halo_before = 0, halo_after = 0;
  Boundary boundary = Boundary::none;
  std::vector<unsigned char> fill;  // Boundary::zero / constant: the element beyond the edges

  bool bound() const { return binding >= 0; }
  // Some leaf reads or writes its slice itself (in/out/inout), not only through a halo.
  bool slice_used() const { return read_partitioned || written || !read_halo; }
  // Halo units move between partitions while the tree runs (it writes what it reads with a halo).
  bool exchanged() const { return read_halo && written; }
  std::size_t bytes() const { return elements * vector->type.size; }
};

struct Analysis {
  std::vector<VectorUse> vectors;                    // in order of first appearance
  std::map<const VectorState*, std::size_t> index;   // vector -> position in `vectors`
  std::size_t units = 0;                             // units of every partitioned vector
  std::map<const ResultState*, std::size_t> result_bindings;  // result -> position in the bindings
  // Results that kernels take as arguments (sinew::value): the map_reduce producing each, and
  // whether a user's function combines its partitions' values (on a device: processes cannot
  // combine it while the tree runs).
  struct ValueSource {
    const NodeImpl* producer = nullptr;
    bool user_combined = false;
  };
  std::map<const ResultState*, ValueSource> value_sources;
  // The kernel arguments (leaf, argument index) that take a value through a pointer parameter.
  std::set<std::pair<const NodeImpl*, std::size_t>> values_through_pointers;
  // The map_reduce nodes whose value only kernels read, and all through pointers (no by-value
  // parameter, no loop predicate can read it): in a run of one partition in one process the host
  // needs their value only once the run is over (exec/values.hpp).
  std::set<const NodeImpl*> values_only_on_devices;
  // Partitions never need each other mid-run (no replica re-synchronisation, no loop predicate):
  // each may run the whole tree on its own, which lets a device stream many small partitions.
  bool streamable = true;
  // What keeps the tree from streaming (and from a dynamic schedule), for the error that refuses
  // one: the node's path, the argument, why, and the fix. Empty when streamable.
  struct Joined {
    std::string node, argument, why, fix;
  } joined;
  // The path of the first leaf that runs whole (NodeImpl::runs_whole; empty: none): it runs as one
  // partition on one device while the tree's other leaves run split (exec/whole_leaves.hpp).
  std::string whole_range;
  bool exchanges_halos = false;  // some vector is written and read with a halo (VectorUse::exchanged)
  bool refreshes_replicas = false;  // some vector is written by slices and read whole
  // The copy(src, dst) leaves that end a loop's body and may swap src's and dst's buffers instead
  // of copying (swap_copies).
  std::set<const NodeImpl*> swap_copies;
  std::size_t bytes_per_unit = 0;                    // over every partitioned vector
  // Every node's path ("pipeline/1:kernel 'x'"), for messages and traces; shared by the copies
  // of an analysis.
  std::shared_ptr<const std::map<const NodeImpl*, std::string>> paths;

  const VectorUse& use(const VectorState* v) const { return vectors.at(index.at(v)); }
  const std::string& path(const NodeImpl& n) const { return paths->at(&n); }
};

Analysis analyze(const NodeImpl& root, const std::vector<Binding>& bindings);

// The results the tree's kernels take as values (tree/values.cpp): each one's producer into
// `an.value_sources`, the arguments that take it through a pointer into
// `an.values_through_pointers`, the producers only pointers read into `an.values_only_on_devices`; refuses a result no map_reduce of the tree produces, one read before or
// inside its producer, and a kernel whose parameters could not be read. A tree with values is
// not streamable (`an.joined` says why, where it is the first reason).
void check_value_arguments(const NodeImpl& root, Analysis& an);


// The copies of `root`'s loops that may be swaps (tree/swap.cpp): the last stage of a loop's
// pipeline, copy(src, dst), where each iteration overwrites src (an `out` slice of an earlier
// leaf) before anything reads it, and src is read neither whole nor with a halo.
std::set<const NodeImpl*> swap_copies(const NodeImpl& root, const Analysis& an);

// The tree's input features for the knowledge base, in one place: each bound vector's size
// ("<name>.size" for a named vector, "v<k>.size" for an unnamed one, k its position in the tree,
// see vectors_in_order), each scalar marked as a feature, and — when given — the fraction of the
// bound bytes that lives in pinned memory ("host.pinned": a discrete device reads pinned memory
// by DMA and pageable memory through a staging copy, docs/decisions/062), and "<name>.resident" 1
// for each vector in `resident` (bound to a resident array: its plans are learned apart from
// host-bound ones, docs/decisions/148).
std::vector<std::pair<std::string, double>> input_features(const NodeImpl& root, const Analysis& an,
                                                           std::optional<double> pinned_fraction = std::nullopt,
                                                           const std::set<const VectorState*>& resident = {});

}  // namespace sinew::detail
