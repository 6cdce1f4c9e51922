// tree/nodes.hpp — the tree's internal representation, shared by validation and execution.
//
// Every leaf (kernel, library call, copy) lists its vectors as Args, so data-flow questions —
// which vectors are read, written, read whole — have one answer for every kind of leaf.
#pragma once

#include <sinew/tree.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

struct VectorState {
  std::uint64_t id = 0;
  std::string name;
  ElementType type;
  std::size_t size = 0;  // declared elements; 0 = from the binding
  std::size_t unit = 1;
};

struct ResultState {
  std::uint64_t id = 0;
  std::string name;
  ElementType type;
};

// OpenCL C source of a kernel leaf, with where it came from.
struct KernelSource {
  std::string text;
  std::string origin;  // the path or embedded file name
  std::string hash;
};

// One parameter of an OpenCL C kernel, as parsed from its source.
struct KernelParam {
  std::string name;
  std::string address_space;  // "global", "local", "constant" or "" (private)
  std::string type;           // base type without qualifiers, e.g. "float", "uchar4"
  bool pointer = false;
  bool is_const = false;
};

enum class NodeKind { kernel, axpy, gemm, fft, copy, pipeline, loop, map, map_reduce };
const char* to_string(NodeKind kind);

struct NodeImpl {
  NodeKind kind = NodeKind::kernel;
  std::string label;

  // Leaves.
  std::vector<Arg> args;
  // kernel
  std::shared_ptr<const KernelSource> source;
  std::string entry;
  std::size_t elements_per_thread = 1;
  unsigned dims = 1;
  std::size_t dim_x = 0;
  std::shared_ptr<VectorState> range_vector;
  std::vector<std::size_t> local_size;
  std::size_t local_multiple = 0;
  std::string build_options;
  std::optional<std::vector<KernelParam>> params;  // parsed signature, when the parser found it
  // blas
  float alpha = 1, beta = 0;
  std::size_t gemm_k = 0, gemm_n = 0;
  // fft
  FftDirection direction = FftDirection::forward;

  // Inner nodes.
  std::vector<std::shared_ptr<NodeImpl>> children;
  // loop
  std::size_t times = 0;
  std::shared_ptr<ResultState> until_result;
  std::function<bool(const Value&)> until_value;
  std::function<bool(const LoopState&)> until_state;
  // map_reduce
  std::optional<Reducer> reducer;

  bool is_leaf() const { return kind <= NodeKind::copy; }
  // The vector whose units define a leaf's NDRange or extent.
  std::shared_ptr<VectorState> range() const;
};

// Loads a .cl file: a path first, else a file embedded from kernels/. Throws errc::io.
std::shared_ptr<const KernelSource> load_kernel_source(const std::string& file);
// Parses the parameters of kernel `entry` from OpenCL C source; nullopt if it cannot be found
// (e.g. the kernel is produced by a macro).
std::optional<std::vector<KernelParam>> parse_kernel_params(const std::string& source, const std::string& entry);

const std::map<std::string, const char*>& embedded_kernels();  // generated at build time

// Builder calls that change an existing node or vector (Kernel::args, Vector::unit, Loop::times,
// ...), counted over the process: what is derived from a tree (a request's analysis) holds while
// the count stays the same.
std::uint64_t tree_changes();
void note_tree_change();

// Visits every node, parents before children, with its path ("pipeline/kernel 'x'").
void walk(const NodeImpl& root, const std::function<void(const NodeImpl&, const std::string& path)>& f);
// The same without building the paths.
void visit(const NodeImpl& root, const std::function<void(const NodeImpl&)>& f);
std::string node_name(const NodeImpl& n);

}  // namespace sinew::detail
