// tree/validate.hpp — checking a tree against its bindings before any device work.
//
// `analyze` resolves every vector's size, checks each leaf's arguments against its kernel
// signature and the data flow of the whole tree, and returns what execution needs to know:
// the vectors, how they are used, and the common number of units they are partitioned in.
// Every error names the tree node, the argument and the fix.
#pragma once

#include "tree/nodes.hpp"

#include <sinew/binding.hpp>

#include <map>
#include <vector>

namespace sinew::detail {

struct VectorUse {
  std::shared_ptr<VectorState> vector;
  std::size_t elements = 0;       // resolved size
  std::size_t units = 0;          // elements / unit
  const Binding* binding = nullptr;
  bool read_partitioned = false;  // some leaf reads its slice (in/inout)
  bool written = false;           // some leaf writes its slice (out/inout)
  bool read_whole = false;        // some leaf reads it whole
  bool partitioned = false;       // used as a slice anywhere (read or written)
};

struct Analysis {
  std::vector<VectorUse> vectors;                    // in order of first appearance
  std::map<const VectorState*, std::size_t> index;   // vector -> position in `vectors`
  std::size_t units = 0;                             // units of every partitioned vector
  std::vector<std::shared_ptr<ResultState>> results; // produced by map_reduce nodes
  std::map<const ResultState*, const Binding*> result_bindings;
  std::vector<std::pair<std::string, double>> features;  // KB features: sizes and marked scalars
  // Partitions never need each other mid-run (no replica re-synchronisation, no loop predicate):
  // each may run the whole tree on its own, which lets a device stream many small partitions.
  bool streamable = true;
  std::size_t bytes_per_unit = 0;                    // over every partitioned vector
  // Every node's path ("pipeline/1:kernel 'x'"), for messages and traces; shared by the copies
  // of a kept analysis.
  std::shared_ptr<const std::map<const NodeImpl*, std::string>> paths;

  const VectorUse& use(const VectorState* v) const { return vectors.at(index.at(v)); }
};

Analysis analyze(const NodeImpl& root, const std::vector<Binding>& bindings);

// The NDRange of a kernel leaf over `units` units of `unit` elements of its range vector:
// dims 1: {units*unit/ept}; dims 2: {unit/ept, units}; dims 3: {x/ept, unit/x, units}.
// The decomposer and the executor compute it the same way through this function.
std::vector<std::size_t> global_range(const NodeImpl& leaf, std::size_t unit, std::size_t units);

}  // namespace sinew::detail
