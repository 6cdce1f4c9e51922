// tree/node.hpp — the tree's internal representation: one class per node kind.
//
// NodeImpl is the base every kind derives from (lib/tree/nodes/*.hpp): it holds what all kinds
// share — the user's name, a leaf's arguments (every leaf, kernel or library call or copy, lists
// its vectors as Args, so data-flow questions have one answer for all), an inner node's children
// — and each kind overrides what is its own: its title and settings in dumps, what it adds to
// the signature, its checks before and after sizes are known, its granularity constraints. How
// a kind runs lives in lib/exec/nodes/ (a runner registered per kind), so the tree knows no
// device. Adding a kind: docs/ARCHITECTURE.md, "Adding a skeleton".
#pragma once

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/error.hpp>
#include <sinew/tree.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail {

struct VectorState {
  std::uint64_t id = 0;
  std::string name;      // the user's name, else "v<id>" (for messages and dumps)
  bool named = false;    // the user gave the name (knowledge-base features use it)
  ElementType type;
  std::size_t size = 0;  // declared elements; 0 = from the binding
  std::size_t unit = 1;
  std::atomic<std::uint64_t> version{0};  // builder calls that changed it
};

struct ResultState {
  std::uint64_t id = 0;
  std::string name;
  ElementType type;
};

struct Analysis;
struct VectorUse;

// What a node constrains the granule to (decompose/ asks every node): `hard` units per granule
// every partition must be a multiple of, `soft` a multiple that suits the devices when the total
// allows (the warp or SIMD width).
struct GranuleRules {
  std::size_t hard = 1, soft = 1;
};

// What the structure checks collect over the whole tree (see NodeImpl::check_structure).
struct StructureFacts {
  std::vector<const ResultState*> produced;  // results the tree's nodes produce, in order
};

class NodeImpl {
 public:
  virtual ~NodeImpl() = default;
  NodeImpl() = default;
  NodeImpl(const NodeImpl&) = delete;
  NodeImpl& operator=(const NodeImpl&) = delete;

  // The kind as dumps and signatures spell it: "kernel", "blas.axpy", "pipeline", ...
  virtual std::string_view kind() const = 0;
  virtual bool is_leaf() const { return false; }

  // The node in paths and messages: "kernel 'solarise' (filters.cl)", "pipeline", or the
  // user's name for it: "pipeline 'edges'".
  virtual std::string title() const;
  // The subtree in a few words: the user's name, else its leaves in their skeletons,
  // "map(saxpy)", "pipeline(gaussian_noise, solarise, mirror)".
  std::string summary() const;
  // A leaf in summary(): a kernel's entry, "axpy", "fft", ...; an inner node's kind.
  virtual std::string short_label() const { return std::string(kind()); }
  // dump(): what follows the title on the node's line (" entry=f elements_per_thread=2").
  virtual void dump_settings(std::ostream&) const {}
  // signature(): what the kind adds to its kind, arguments and children (source hashes,
  // counts). `id` numbers vectors by first appearance, as the signature does everywhere.
  virtual void sign(std::ostream&, const std::function<std::string(const VectorState*)>& id) const { (void)id; }
  // A vector the node reads beyond its arguments (a map_reduce's reduced vector); it takes its
  // place in the order of first appearance after the arguments.
  virtual const VectorState* extra_vector() const { return nullptr; }

  // Checks of the node on its own, before sizes are known; notes what it produces.
  virtual void check_structure(const std::string& path, StructureFacts& facts) const {
    (void)path;
    (void)facts;
  }
  // Checks once every node's data flow is known (the reduced vector is written, ...).
  virtual void check_flow(const Analysis& an, const std::string& path) const {
    (void)an;
    (void)path;
  }
  // Checks against the resolved sizes (a kernel's range, a gemm's shapes).
  virtual void check_shapes(const Analysis& an, const std::string& path) const {
    (void)an;
    (void)path;
  }
  // Narrows the granule for a leaf whose NDRange depends on the units it gets.
  virtual void constrain(GranuleRules& rules, const std::vector<DeviceInfo>& devices) const {
    (void)rules;
    (void)devices;
  }
  // Units every partition must be a multiple of under `plan`, beyond the granule (a
  // divide-and-conquer node's split levels need whole subproblems on each device).
  virtual std::size_t plan_granule(const Config& plan) const {
    (void)plan;
    return 1;
  }
  // The trainer that trains what this kind adds to a plan beyond the split (a registered
  // trainer's name, lib/schedule/trainer.hpp; empty for none: the strategy's trainer serves).
  // A divide-and-conquer node's crossover is trained by "dc_model".
  virtual std::string_view trainer() const { return {}; }
  // A node that works in levels (divide and conquer), for its bound sizes: the units its levels
  // cover and the units of one subproblem at each level, lowest first (none for other kinds).
  // Its trainer sizes plans by the subproblems per level; where several nodes name a trainer,
  // the one with most levels is trained. A Cluster chooses its crossover from them.
  struct LevelShape {
    std::size_t units = 0;
    std::vector<std::size_t> subproblem_units;
    // Subproblems at `level`, a ragged last one counted.
    std::size_t subproblems(std::size_t level) const {
      return (units + subproblem_units[level] - 1) / subproblem_units[level];
    }
  };
  virtual LevelShape level_shape(const Analysis& an) const {
    (void)an;
    return {};
  }
  // The reduction the node computes (a map_reduce's reducer), or none.
  virtual const Reducer* reduction() const { return nullptr; }
  // The subtree whose results a predicate reads while the node runs (a loop with .until: its
  // body), or none.
  virtual const NodeImpl* predicate_scope() const { return nullptr; }
  // Its kernels (a library's, tuned per device) may read its buffers as wide vectors: they count
  // on OpenCL's alignment of a buffer to the device's base address alignment, which user memory
  // handed over as it is (zero copy) need not have, and may crash without it. Where the user's
  // memory is not so aligned, its vectors' slices are staged in buffers of the device's
  // (docs/decisions/081).
  virtual bool assumes_aligned_buffers() const { return false; }
  // The vector as large a slice of which the leaf's library call takes as scratch on the device
  // (clFFT's intermediate buffer: a long transform needs one, a short one none, so this is an
  // upper bound), for the tree's memory footprint; null: none.
  virtual const VectorState* library_scratch() const { return nullptr; }
  // The partitions must meet while the node runs (a loop's predicate reads every partition):
  // a tree with such a node cannot stream its partitions one by one.
  virtual bool joins_partitions() const { return false; }
  // The leaf runs as one partition on one device (Kernel::whole_range).
  virtual bool runs_whole() const { return false; }
  // The vector whose units define a leaf's NDRange or extent: the first partitioned argument.
  virtual std::shared_ptr<VectorState> range() const;
  // Argument i in messages: "argument 1 (out 'y')"; a kernel adds its parameter's name.
  virtual std::string argument_label(std::size_t i) const;
  // The leaves that stand in for this one on some devices (a variants node's implementations,
  // tree/nodes/variants.hpp), each with the word its path adds to this node's ("variant gpu").
  // They are no children: the tree's walks see this node alone, and its runner runs one of them
  // per device; their paths name them in messages and traces.
  virtual std::vector<std::pair<std::string, const NodeImpl*>> stand_ins() const { return {}; }

  std::string name;  // Node::name; "" for none
  std::vector<Arg> args;
  std::vector<std::shared_ptr<NodeImpl>> children;
  std::atomic<std::uint64_t> version{0};  // builder calls that changed it

  void changed() { version.fetch_add(1, std::memory_order_acq_rel); }
};

// Visits every node, parents before children, with its path ("pipeline/1:kernel 'x'").
void walk(const NodeImpl& root, const std::function<void(const NodeImpl&, const std::string& path)>& f);
// The same without building the paths.
void visit(const NodeImpl& root, const std::function<void(const NodeImpl&)>& f);
// Every vector of the tree in order of first appearance (a node's arguments, then its extra
// vector, then its children): the order Node::signature() numbers them in, and the position an
// unnamed vector's knowledge-base feature is named by ("v0.size").
std::vector<const VectorState*> vectors_in_order(const NodeImpl& root);
// A number that changes whenever a builder call changes the tree (a node or a vector of it):
// what is derived from a tree (its checked analysis) holds while it stays the same.
std::uint64_t tree_version(const NodeImpl& root);

// A halo's boundary in dumps and messages: "clamped", "zero", ...
const char* boundary_name(Boundary b);

// Throws sinew::Error(code) naming the node, the argument and the fix.
[[noreturn]] void fail(errc code, const std::string& node, const std::string& argument, const std::string& message,
                       const std::string& fix);

// The node of a public handle; throws when the handle is empty (`where` names the builder).
std::shared_ptr<NodeImpl> impl_of(const Node& n, const char* where);

// The shared state behind public handles, for the builders.
struct VectorAccess : VectorRef {
  static std::shared_ptr<VectorState> get(const VectorRef& v) { return static_cast<const VectorAccess&>(v).state_; }
};
struct ResultAccess : ResultRef {
  static std::shared_ptr<ResultState> get(const ResultRef& r) { return static_cast<const ResultAccess&>(r).state_; }
};

}  // namespace sinew::detail
