// sinew/tree.hpp — describing a computation: vectors, arguments and skeleton trees.
//
// A tree only describes; it never knows where it runs. Leaves are OpenCL C kernels (`kernel`),
// CLBlast routines (`blas::axpy`, `blas::gemm`), clFFT transforms (`fft`) and device copies
// (`copy`); inner nodes are `pipeline`, `loop`, `map` and `map_reduce`. Trees nest freely.
//
// Any node may be given a name (`.name("edges")`): it labels the tree in reports, training
// progress and `sinew kb list`, and the node in error messages; without one a tree is labelled by
// its kernels in their skeletons ("map(saxpy)").
//
// Handles (Vector, Result, Node and its subclasses) are cheap to copy and share their state.
// Build a tree on one thread; once built, a tree may be run by several requests at once
// (running never modifies it). Builder calls on a tree that is being run are not allowed.
#pragma once

#include <sinew/device.hpp>
#include <sinew/types.hpp>

#include <typeinfo>
#include <cstddef>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace sinew {

namespace detail {
struct VectorState;
struct ResultState;
struct NodeImpl;
struct KernelImpl;
struct LoopImpl;
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Vectors: the data a tree works on.

/// An untyped vector handle. A vector is partitioned along its only dimension in whole
/// *elementary units* of `unit()` elements (one image line, one FFT, one z-slice, one body).
class VectorRef {
 public:
  const std::string& name() const;   ///< the name given (Vector::name), else "v<N>"
  const ElementType& type() const;   ///< the element type
  std::size_t declared_size() const;  ///< elements; 0 = taken from the binding
  std::size_t unit() const;           ///< elements per elementary unit
  std::uint64_t id() const;           ///< unique per vector in the process
  /// \cond INTERNAL
  const detail::VectorState* state() const { return state_.get(); }
  /// \endcond
  /// The same vector (copies of a handle share one vector).
  friend bool operator==(const VectorRef& a, const VectorRef& b) { return a.state_ == b.state_; }

  /// \cond INTERNAL
 protected:
  VectorRef(ElementType type, std::size_t size);
  void set_unit(std::size_t unit);
  void set_name(std::string name);
  std::shared_ptr<detail::VectorState> state_;
  /// \endcond
};

/// A vector of `T` elements (an OpenCL scalar or vector type, or a trivially copyable struct):
/// what kernels read and write, bound to host memory for a run (Binding).
template <class T>
class Vector : public VectorRef {
 public:
  /// `size` elements; 0: as many as the host memory bound to it holds.
  explicit Vector(std::size_t size = 0) : VectorRef(element_type<T>(), size) {}
  /// Elements that form one indivisible unit of partitioning (default 1).
  Vector& unit(std::size_t elements) { set_unit(elements); return *this; }
  /// A name for dumps, error messages and the knowledge base's features ("x.size"). Unnamed, a
  /// vector is "v<N>" in messages (N counts the process's vectors) and its feature is named by
  /// its position in the tree ("v0.size"), so that it is the same in every process.
  Vector& name(std::string n) { set_name(std::move(n)); return *this; }
  using VectorRef::name;
  using VectorRef::unit;
  using value_type = T;  ///< the element type
};

/// `sinew::vector<cl_float>(n)`: a vector of n elements (0: size comes from the binding).
template <class T>
Vector<T> vector(std::size_t size = 0) { return Vector<T>(size); }

/// A scalar value produced by a run (the output of a map_reduce), readable from the Report, by
/// binding it to host memory, and by a loop's `until` predicate.
class ResultRef {
 public:
  const std::string& name() const;  ///< the name given, else one made up (Report::results' key)
  const ElementType& type() const;  ///< the value's type
  /// \cond INTERNAL
  const detail::ResultState* state() const { return state_.get(); }
  /// \endcond
  /// The same result (copies of a handle share one result).
  friend bool operator==(const ResultRef& a, const ResultRef& b) { return a.state_ == b.state_; }

  /// \cond INTERNAL
 protected:
  ResultRef(ElementType type, std::string name);
  std::shared_ptr<detail::ResultState> state_;
  /// \endcond
};

/// A value of type `T` a run produces (a reduction's output).
template <class T>
class Result : public ResultRef {
 public:
  /// A result named `name` (in reports and Report::results).
  explicit Result(std::string name = {}) : ResultRef(element_type<T>(), std::move(name)) {}
  using value_type = T;  ///< the value's type
};

/// `sinew::result<cl_float>("total")`: a Result named `name`.
template <class T>
Result<T> result(std::string name = {}) { return Result<T>(std::move(name)); }

// ---------------------------------------------------------------------------------------------
// Arguments: the interface of a kernel leaf, in the order of the kernel's parameters.

/// What a kernel does with a vector argument.
enum class Access { read, write, read_write };

/// What a halo holds beyond the vector's own edges (see sinew::halo).
enum class Boundary {
  none,      ///< nothing: those units are left as they are; the kernel tests offset()/size() itself
  clamp,     ///< copies of the vector's first (before it) or last (after it) unit
  zero,      ///< zero bytes
  constant,  ///< copies of one element (sinew::halo(v, before, after, value))
};

/// One kernel argument, in the order of the kernel's parameters: made by in(), out(), inout(),
/// whole(), halo(), scalar(), local(), iteration(), offset(), count() and size().
struct Arg {
  /// What the kernel receives.
  enum class Kind {
    partitioned,   ///< the device's slice of a vector (pointer to its first element)
    whole,         ///< the whole vector, replicated on every device; read-only
    scalar,        ///< a value fixed when the tree is built
    local,         ///< __local memory of `bytes` bytes
    iteration,     ///< uint: the enclosing loop's step number (0-based; 0 outside loops)
    offset,        ///< uint: index of the slice's first element within the whole vector
    count,         ///< uint: elements of the vector in this slice
    size,          ///< uint: elements of the whole vector
    halo,          ///< the device's slice with neighbour units around it; read-only
    value,         ///< a map_reduce's combined result, computed earlier in the same run (sinew::value)
  };
  Kind kind = Kind::scalar;      ///< what the kernel receives
  Access access = Access::read;  ///< what it does with a vector
  std::shared_ptr<detail::VectorState> vector;  ///< partitioned, whole, offset, count, size
  std::shared_ptr<detail::ResultState> result;  ///< value: the result passed
  ElementType type;                             ///< scalar type
  std::vector<unsigned char> bytes;             ///< scalar value
  std::size_t local_bytes = 0;                  ///< local
  std::string feature;                          ///< scalar marked as a knowledge-base feature
  std::size_t halo_before = 0;                  ///< halo: neighbour units before the slice
  std::size_t halo_after = 0;                   ///< halo: neighbour units after the slice
  Boundary boundary = Boundary::none;           ///< halo: what stands beyond the vector's edges
                                                ///< (constant: `bytes` holds the element)

  /// Marks a scalar as an input feature of the tree (the knowledge base keys entries on it).
  Arg& as_feature(std::string name) { feature = std::move(name); return *this; }
  /// The argument in a few words, as dumps and messages show it ("in 'x'", "scalar float").
  std::string describe() const;
};

Arg in(const VectorRef& v);     ///< reads this device's slice
Arg out(const VectorRef& v);    ///< writes this device's slice
Arg inout(const VectorRef& v);  ///< reads and writes this device's slice
Arg whole(const VectorRef& v);  ///< reads the whole vector (replicated to every device)
Arg iteration();                ///< the loop step number, as uint
Arg offset(const VectorRef& v); ///< first element of this slice within v, as uint
Arg count(const VectorRef& v);  ///< elements of v in this slice, as uint
Arg size(const VectorRef& v);   ///< elements of the whole v, as uint
/// Results as arguments. `value(r)` passes the combined value of the map_reduce that produces `r`
/// (an earlier stage of the same tree) to the kernel: every partition's value combined, the same on
/// every device and every process of a Cluster. The kernel declares the parameter either
///   - by value, `T name` (T the result's type: a scalar, an OpenCL vector type or a struct): the
///     partitions meet on the host before the kernel, which gets the value as its argument; or
///   - as a read-only buffer of one element, `__global const T* name` or `__constant T* name`:
///     the value stays on the devices. Where the run has one partition (one device alone) the
///     kernel reads the reduction's own result buffer, and nothing waits for the host; with several
///     partitions they meet on the host and the combined value is written to each device.
/// A kernel may take several values (CG's alpha = rr / pAp, computed in the kernel from two).
/// Inside a loop the value is the current iteration's: the map_reduce must come before the kernel
/// in the loop body (a pipeline's earlier stage, or an earlier stage around the loop). Refused
/// before any device work: a result no map_reduce of the tree produces, a kernel that reads a
/// result before (or inside) the map_reduce that produces it, a parameter of another type or a
/// pointer that is not const. A tree that passes values is never streamed (its partitions meet).
Arg value(const ResultRef& r);
// What an out() writes must go somewhere: the tree check refuses an out() vector that is bound to
// no host memory and that no leaf reads (a later stage, the next iteration of a loop, a copy, a
// reducer), since the result would be dropped. An unbound vector that a later leaf reads is a
// channel: it stays on the devices.

/// Stencils. `halo(v, before, after)` reads this device's slice of v together with `before`
/// units of v ahead of it and `after` units behind it (units: v.unit() elements, e.g. image rows),
/// read-only. The kernel gets a pointer to the first of those units: the slice's first element is
/// at index before * v.unit(), and (slice units + before + after) * v.unit() elements are
/// readable. Where the halo passes the vector's own edges it holds what `boundary` says. When a
/// tree writes v (an earlier pipeline stage, a loop's copy) only the halo units move between the
/// devices before the next read; a vector the tree only reads is read with its halo from the host.
/// Widths are checked before any device work (a negative width is an error), and the kernel's
/// parameter must be const (`__global const T*`).
Arg halo(const VectorRef& v, std::ptrdiff_t before, std::ptrdiff_t after, Boundary boundary = Boundary::none);
/// A halo whose units beyond the vector's edges are copies of `value` (Boundary::constant).
template <class T>
Arg halo(const Vector<T>& v, std::ptrdiff_t before, std::ptrdiff_t after, const T& value) {
  Arg a = halo(v, before, after, Boundary::constant);
  a.bytes.resize(sizeof(T));
  std::memcpy(a.bytes.data(), &value, sizeof(T));
  return a;
}

/// A value fixed when the tree is built, passed by value (`float a` in the kernel).
template <class T>
Arg scalar(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "sinew::scalar needs a trivially copyable type");
  Arg a;
  a.kind = Arg::Kind::scalar;
  a.type = element_type<T>();
  a.bytes.resize(sizeof(T));
  std::memcpy(a.bytes.data(), &value, sizeof(T));
  return a;
}

/// __local memory for `count` elements of T.
template <class T>
Arg local(std::size_t count) {
  Arg a;
  a.kind = Arg::Kind::local;
  a.type = element_type<T>();
  a.local_bytes = count * sizeof(T);
  return a;
}

// ---------------------------------------------------------------------------------------------
// Nodes.

/// A node of a skeleton tree: a leaf (kernel, library call, copy, scan) or a skeleton over other
/// nodes (pipeline, map, map_reduce, loop, divide_and_conquer). A cheap handle; copies share it.
class Node {
 public:
  /// No node (empty()).
  Node() = default;
  /// \cond INTERNAL
  explicit Node(std::shared_ptr<detail::NodeImpl> impl) : impl_(std::move(impl)) {}
  /// \endcond
  /// An indented text rendering of the tree: every node, its arguments and kernel settings.
  std::string dump() const;
  /// The tree in Graphviz DOT.
  std::string dot() const;
  /// Structural signature: node kinds, argument specs, kernel source hashes and build options;
  /// independent of vector sizes (those are features, not identity).
  std::string signature() const;
  /// Names this node (see the banner); "" removes the name.
  Node& name(std::string text);
  /// The node's name, else what it runs in a few words: "map(saxpy)", "pipeline(blur, sobel)".
  std::string label() const;
  /// Whether it is no node (default-constructed).
  bool empty() const { return !impl_; }
  /// \cond INTERNAL
  const std::shared_ptr<detail::NodeImpl>& impl() const { return impl_; }

 protected:
  std::shared_ptr<detail::NodeImpl> impl_;
  /// \endcond
};

/// A kernel leaf: an OpenCL C kernel and its interface. Index with get_global_id(): a 1D range
/// that is no multiple of the device's work-group multiple is launched in two parts, the second
/// at a global offset, so get_global_size() is not the slice's size (pass sinew::count(v)).
class Kernel : public Node {
 public:
  /// \cond INTERNAL
  explicit Kernel(std::shared_ptr<detail::NodeImpl> impl) : Node(std::move(impl)) {}
  /// \endcond
  /// The kernel's arguments, one per parameter in order; checked against its signature before
  /// any device work.
  Kernel& args(std::vector<Arg> args);
  /// The same: `.args(sinew::in(x), sinew::out(y), sinew::scalar(2.0f))`.
  template <class... A>
  Kernel& args(A&&... a) { return args(std::vector<Arg>{Arg(std::forward<A>(a))...}); }
  /// Elements of the range vector each work-item computes along dimension 0 (default 1).
  Kernel& elements_per_thread(std::size_t n);
  /// NDRange shape. dims 1 (default): units*unit/ept work-items. dims 2: (unit/ept, units).
  /// dims 3: (x/ept, unit/x, units) — a unit is an x-by-(unit/x) plane, e.g. one z-slice.
  Kernel& dims(unsigned n, std::size_t x = 0);
  /// The vector whose units define the NDRange (default: the first in/out/inout argument); one of
  /// the kernel's own vector arguments (the tree check refuses another).
  Kernel& range_of(const VectorRef& v);
  /// A required work-group size (the kernel depends on it) ...
  Kernel& local_size(std::vector<std::size_t> sizes);
  /// ... or only a multiple the work-group size along dimension 0 must be (the runtime picks).
  Kernel& local_multiple(std::size_t n);
  /// Options for the OpenCL compiler ("-DWIDTH=8 -cl-fast-relaxed-math"); part of the tree's
  /// signature and of the program cache's key.
  Kernel& build_options(std::string options);
  /// Runs a kernel written for the whole range, as it is: each partition is launched at the global
  /// work offset of its first unit, so get_global_id() and get_global_offset() are positions in the
  /// whole range (get_global_size() stays the partition's: pass sinew::size(v) for the whole), and
  /// every vector parameter is addressed in whole-vector coordinates: `p[i]` is element i of the
  /// vector for every i the argument holds — the slice of in/out/inout, the slice and its halo
  /// units for sinew::halo, everything for sinew::whole. A boundary test on a global row
  /// (`if (y == 0 || y >= rows - 1)`) then holds in every partition. No buffer grows: each is moved
  /// to its place by an origin the kernel gets as extra parameters (the kernel's definition must
  /// be in the source, its vector parameters typed pointers that are not themselves const); see
  /// docs/guide/existing-kernels.md for what each index style costs.
  Kernel& global_indices();
  /// Runs the kernel as one partition of every unit on one device: for a step that writes outside
  /// its slice (a transpose, a serial update, a ghost-row refresh) or reads what other partitions
  /// write in the same step. The tree's other leaves still run split by the plan: before this leaf
  /// every partition meets, the vectors it reads (in, inout) are gathered from the partitions onto
  /// its device (device-side within a context, through the host between contexts), it runs there
  /// on a queue of its own (no fission or overlap level splits it), and what it writes (out,
  /// inout) is scattered back into the partitions' slices (Report::whole_leaves). Its device is the
  /// plan's `whole=<device index>` item, else the device with the plan's largest share. Its vectors
  /// are in(), out() or inout() (each is every unit): a halo or sinew::whole argument is refused.
  /// Such a tree never streams; a dynamic or steal plan and a Cluster refuse it before any device
  /// work, naming the leaf.
  Kernel& whole_range();
  /// Names the kernel node (by default its entry): messages say "kernel 'text' (file.cl)".
  Kernel& name(std::string text);
  Kernel& label(std::string text);  ///< the same as name()
};

/// `kernel("path/to/filters.cl", "solarise")`: the kernel `entry` of a .cl file, read now. (A name
/// that is no path is looked up among the library's own embedded kernel files: reduce.cl, scan.cl.)
Kernel kernel(const std::string& file, const std::string& entry);
/// A kernel from OpenCL C source text; `origin` names it in messages.
Kernel kernel_source(const std::string& source, const std::string& entry,
                     const std::string& origin = "<source>");

/// One implementation of a leaf for the devices of one kind (see sinew::variants).
struct Variant {
  DeviceKind kind = DeviceKind::gpu;  ///< the devices that run `leaf` (DeviceInfo::variant_kind())
  Node leaf;                          ///< a kernel or library leaf
};

/// Per-device kernel variants: one leaf with an implementation per device kind, e.g. a CLBlast
/// gemm on GPUs and a blocked OpenCL kernel on CPUs. Each partition runs the variant of its
/// device's kind (DeviceInfo::variant_kind()), `fallback` where no variant names that kind; a
/// variant for a kind no device has is allowed and never runs. Every variant reads and writes
/// what `fallback` does: the same vectors, in the same order, with the same access (in, out,
/// inout, whole, halo and its widths), so that the tree's data flow is one whatever runs where;
/// each may add arguments of its own (scalars, local memory, offset/count/size of those
/// vectors), and each kernel's parameters are checked against its own arguments. Checked before
/// any device work; an error names this leaf, the variant and the argument. A variant is a leaf
/// that runs on its own partitions (no scan, no whole_range unless `fallback` is one too, no
/// sinew::value arguments) and no variants node itself. The variants must compute the same
/// results up to their floating-point rounding: what a caller compares them within is its own
/// tolerance (samples/blockmm states one). Builder calls on a leaf after it was given here do not
/// reach trees already built from it: build the leaves first.
Node variants(Node fallback, std::vector<Variant> by_kind);

/// Stages run in order on the same partitions: channels between them stay on the device.
Node pipeline(std::vector<Node> stages);
/// The same: `sinew::pipeline(noise, blur, edges)`.
template <class... N>
Node pipeline(N&&... stages) { return pipeline(std::vector<Node>{Node(std::forward<N>(stages))...}); }

/// The body applied to independent partitions of the data.
Node map(Node body);

/// Copies src into dst slice by slice, e.g. to feed a loop. Both vectors have the same element
/// type and unit (the tree check refuses others: a copy moves bytes, it converts nothing).
Node copy(const VectorRef& src, const VectorRef& dst);

/// A value produced by a run: the bytes of one element of `type`.
struct Value {
  ElementType type;                  ///< the element's type
  std::vector<unsigned char> bytes;  ///< its bytes
  /// The value as a `T` (throws std::bad_cast when the sizes differ).
  template <class T>
  T as() const {
    if (bytes.size() != sizeof(T)) throw std::bad_cast();
    T v;
    std::memcpy(&v, bytes.data(), sizeof(T));
    return v;
  }
};

/// State visible to a loop predicate after each iteration.
class LoopState {
 public:
  std::size_t iteration = 0;  ///< iterations completed so far
  /// `r`'s value after the last iteration.
  template <class T>
  T value(const Result<T>& r) const { return lookup(r).template as<T>(); }
  std::function<const Value&(const ResultRef&)> lookup;  ///< the run's results by handle
};

/// A body run again and again on the same partitions: `times(n)`, `until(...)` or both.
class Loop : public Node {
 public:
  /// \cond INTERNAL
  explicit Loop(std::shared_ptr<detail::NodeImpl> impl) : Node(std::move(impl)) {}
  /// \endcond
  /// Runs the body n times (with `until`: at most n times). n >= 1: times(0) throws
  /// sinew::Error(errc::invalid_argument) (a loop runs its body at least once).
  Loop& times(std::size_t n);
  /// Runs the body until `done(value)` is true, where value is `r` as produced by this iteration.
  template <class T, class F>
  Loop& until(const Result<T>& r, F done) {
    return until_value(r, [done = std::move(done)](const Value& v) { return static_cast<bool>(done(v.as<T>())); });
  }
  /// Runs the body until `done(state)` is true.
  Loop& until(std::function<bool(const LoopState&)> done);
  /// Names the loop (see Node::name).
  Loop& name(std::string text);

 private:
  Loop& until_value(const ResultRef& r, std::function<bool(const Value&)> done);
};

/// A loop over `body`; give it times() or until().
Loop loop(Node body);

/// A reduction of a partitioned vector to one value, written to a Result. The element type may be
/// an OpenCL scalar or vector type (the built-in operators work lane by lane: a float4 sum is four
/// sums) or, with a custom function, a user struct of any size.
class Reducer {
 public:
  /// The operator: built-in (lane by lane) or a user function.
  enum class Op { sum, min, max, custom };
  Op op = Op::sum;                               ///< the operator
  std::shared_ptr<detail::VectorState> input;    ///< the partitioned vector reduced
  std::shared_ptr<detail::ResultState> output;   ///< the Result written
  std::string function;      ///< custom: name of an OpenCL C function T f(T a, T b)
  std::string source;        ///< custom: source text defining it
  std::string origin;        ///< custom: file it came from
  std::vector<unsigned char> identity;  ///< custom: the identity element
  /// custom, on a struct: the struct's OpenCL C name ("hist", "struct hist"). Empty: the type of
  /// the function's first parameter, as its definition in `source` spells it.
  std::string type_name;
};

/// Reducers for map_reduce: `sinew::reduce::sum(partial, total)`.
namespace reduce {
Reducer sum(const VectorRef& partial, const ResultRef& out);  ///< out = the sum of every element of `partial`
Reducer min(const VectorRef& partial, const ResultRef& out);  ///< out = the least element
Reducer max(const VectorRef& partial, const ResultRef& out);  ///< out = the greatest element
/// The untyped forms of custom() and custom_source(); the identity is set by the caller.
Reducer custom_bytes(const VectorRef& partial, const ResultRef& out, const std::string& file,
                     const std::string& function);
Reducer custom_source_bytes(const VectorRef& partial, const ResultRef& out, const std::string& source,
                            const std::string& function, const std::string& origin);  ///< see custom_bytes()
/// A user reduction: `function` is an associative, commutative OpenCL C function
/// `T function(T a, T b)` defined in `file` (a path or an embedded kernel file), `identity` its
/// neutral element. Sinew generates the reduction kernels around it (the file's text comes first,
/// so the struct types it defines are known to them) and combines partial results across
/// partitions with the same function. T may be a struct: the file defines it with the same members
/// as the C++ one (the tree check compares the two sizes; OpenCL C aligns vectors, long and double
/// to their size). Structs of any size reduce: work-groups shrink to fit local memory.
template <class T>
Reducer custom(const VectorRef& partial, const Result<T>& out, const std::string& file,
               const std::string& function, const T& identity) {
  Reducer r = custom_bytes(partial, out, file, function);
  r.identity.resize(sizeof(T));
  std::memcpy(r.identity.data(), &identity, sizeof(T));
  return r;
}
/// custom() with the function given as OpenCL C source text; `origin` names it in messages.
template <class T>
Reducer custom_source(const VectorRef& partial, const Result<T>& out, const std::string& source,
                      const std::string& function, const T& identity, const std::string& origin = "<source>") {
  Reducer r = custom_source_bytes(partial, out, source, function, origin);
  r.identity.resize(sizeof(T));
  std::memcpy(r.identity.data(), &identity, sizeof(T));
  return r;
}
}  // namespace reduce

/// The body applied to independent partitions, then the reducer over everything they produced.
Node map_reduce(Node body, Reducer reducer);

// ---------------------------------------------------------------------------------------------
// Scan (prefix combination) over a whole partitioned vector, across every device of the split.

/// Inclusive: out[i] = v[0] op ... op v[i]. Exclusive: out[0] = identity, out[i] = v[0] op ... op
/// v[i-1] (std::inclusive_scan / std::exclusive_scan with the identity as init).
enum class ScanKind { inclusive, exclusive };

/// A scan's operator: sum, min, max (scalar element types), or an associative OpenCL C function
/// `T function(T a, T b)` with its identity element (any OpenCL element type). It need not be
/// commutative: operands are always combined in index order.
struct ScanOp {
  Reducer::Op op = Reducer::Op::sum;   ///< the same operators as reductions
  std::string function;                ///< custom: name of the function
  std::string source;                  ///< custom: source text defining it
  std::string origin;                  ///< custom: the file it came from, or the caller's name
  std::vector<unsigned char> identity; ///< custom: the identity element
};

/// Scan operators: `sinew::scan(v, sinew::scan_op::sum())`.
namespace scan_op {
ScanOp sum();  ///< running sums
ScanOp min();  ///< running minima
ScanOp max();  ///< running maxima
/// The untyped forms of custom() and custom_source(); the identity is set by the caller.
ScanOp custom_bytes(const std::string& file, const std::string& function);
ScanOp custom_source_bytes(const std::string& source, const std::string& function,
                           const std::string& origin);  ///< see custom_bytes()
/// `function` defined in `file` (a path or an embedded kernel file), `identity` its neutral element.
template <class T>
ScanOp custom(const std::string& file, const std::string& function, const T& identity) {
  ScanOp o = custom_bytes(file, function);
  o.identity.resize(sizeof(T));
  std::memcpy(o.identity.data(), &identity, sizeof(T));
  return o;
}
/// custom() with the function given as OpenCL C source text; `origin` names it in messages.
template <class T>
ScanOp custom_source(const std::string& source, const std::string& function, const T& identity,
                     const std::string& origin = "<source>") {
  ScanOp o = custom_source_bytes(source, function, origin);
  o.identity.resize(sizeof(T));
  std::memcpy(o.identity.data(), &identity, sizeof(T));
  return o;
}
}  // namespace scan_op

/// Scans `v` in place: a leaf, partitioned like kernels (the vector is scanned as one sequence of
/// elements, whatever its unit). Each device scans its slice, the partitions' totals meet on the
/// host, and a second pass combines each slice with the totals before it: the partitions meet
/// while it runs, so a tree with a scan is never streamed.
Node scan(const VectorRef& v, ScanOp op, ScanKind kind = ScanKind::inclusive);
/// The same from `in` into `out` (same element type and unit); `in` is left unchanged.
Node scan(const VectorRef& in, const VectorRef& out, ScanOp op, ScanKind kind = ScanKind::inclusive);

// ---------------------------------------------------------------------------------------------
// Divide and conquer (the HPU skeleton): a problem of n elements cut into leaves of `leaf_size`
// elements, each solved by `leaf`, then solved neighbouring subproblems merged `fanout` at a time
// by `combine`, level after level, until one subproblem holds every element: mergesort, a
// k-way reduction tree, ...

/// The shape of a divide_and_conquer node's problem tree.
struct DivideAndConquerSettings {
  std::size_t fanout = 2;        ///< subproblems each combine merges (k >= 2)
  std::size_t leaf_size = 4096;  ///< elements of a leaf subproblem (>= 1)
};

/// Runs breadth-first, in place on `v` (unit 1; element type T, defined for both kernels' sources
/// as the macro SINEW_T): level 0 solves the leaves, level l >= 1 merges runs of
/// leaf_size * fanout^(l-1) elements into runs of leaf_size * fanout^l, until a run holds all n
/// elements (levels: 1 + ceil(log_fanout(ceil(n / leaf_size)))). The last leaf and the last run of
/// a level may be shorter: a leaf size need not divide n. The kernels are given as sinew::kernel
/// or sinew::kernel_source without arguments (the skeleton passes them); build options apply.
///
///   __kernel void leaf(__global T* data, uint n, uint leaf_size [, __local T* scratch])
///     One work-group per leaf: leaf get_group_id(0) is data[g * leaf_size ..
///     min((g + 1) * leaf_size, n)), solved in place; get_local_size(0) is a power of two of at
///     most 256 chosen per device. `data` is this device's part of v (whole subproblems), n its
///     elements. With the fourth parameter, `scratch` holds leaf_size elements of local memory.
///   __kernel void combine(__global const T* src, __global T* dst, uint n, uint run, uint fanout)
///     One work-item per element (get_global_id(0) < n; the range is rounded up to whole
///     work-groups, so items at n and beyond must return): src holds solved runs of `run` elements
///     (the last may be shorter), every `fanout` neighbouring runs (the last group may have fewer)
///     become one solved run of fanout * run elements in dst, every element of which the kernel
///     must write. (A parallel k-way merge: each item ranks its element of one run in the other
///     runs of its group by binary search; mergesort.cl in samples/kernels.)
///
/// Where levels run is the plan's (Config::crossover, Config::upper): the levels below the
/// crossover run split over the devices by the plan's shares, each device's part aligned to whole
/// subproblems of those levels and resident on it between them; the levels from the crossover up
/// run on the one device `upper`, the data gathered to it once. Report::levels lists each level's
/// devices, time and bytes moved.
Node divide_and_conquer(const VectorRef& v, const Kernel& leaf, const Kernel& combine,
                        DivideAndConquerSettings settings = {});

// Library leaves, partitioned like kernels.
/// CLBlast routines as leaves.
namespace blas {
/// y = alpha*x + y (single precision), element-wise over the partition.
Node axpy(float alpha, const VectorRef& x, const VectorRef& y);
/// C = alpha*A*B + beta*C, row-major, single precision. A is m-by-k (unit k: one row), C is
/// m-by-n (unit n), B is k-by-n and whole on every device. Rows of A and C are partitioned.
Node gemm(float alpha, const VectorRef& a, const VectorRef& b, float beta, const VectorRef& c,
          std::size_t k, std::size_t n);
}  // namespace blas

/// Which transform fft() computes.
enum class FftDirection { forward, inverse };
/// Batched 1D complex-to-complex FFT (cl_float2 elements) in place on `data`; one transform per
/// unit (unit = transform length). The inverse is scaled by 1/length (clFFT's default).
Node fft(const VectorRef& data, FftDirection direction);

}  // namespace sinew
