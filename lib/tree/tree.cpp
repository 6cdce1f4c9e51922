// tree/tree.cpp — building skeleton trees, and printing them (text, DOT, signature).
#include "tree/nodes.hpp"

#include "platform/error.hpp"
#include "platform/hash.hpp"

#include <sinew/binding.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace sinew {
using detail::NodeImpl;
using detail::NodeKind;
using detail::throw_error;

namespace {
std::atomic<std::uint64_t> next_id{1};

std::shared_ptr<NodeImpl> need(const Node& n, const char* where) {
  if (!n.impl())
    throw_error(errc::invalid_tree, std::string(where) + " was given an empty node",
                {.node = where, .fix = "pass a node built with sinew::kernel, pipeline, loop, map or map_reduce"});
  return n.impl();
}
}  // namespace

// ----- vectors and results -------------------------------------------------------------------

VectorRef::VectorRef(ElementType type, std::size_t size) : state_(std::make_shared<detail::VectorState>()) {
  state_->id = next_id++;
  state_->name = "v" + std::to_string(state_->id);
  state_->type = std::move(type);
  state_->size = size;
}
const std::string& VectorRef::name() const { return state_->name; }
const ElementType& VectorRef::type() const { return state_->type; }
std::size_t VectorRef::declared_size() const { return state_->size; }
std::size_t VectorRef::unit() const { return state_->unit; }
std::uint64_t VectorRef::id() const { return state_->id; }
void VectorRef::set_unit(std::size_t unit) {
  if (unit == 0)
    throw_error(errc::invalid_argument, "vector '" + state_->name + "': a unit of 0 elements",
                {.argument = state_->name, .fix = "give unit() the number of elements of one indivisible part (>= 1)"});
  state_->unit = unit;
  detail::note_tree_change();
}
void VectorRef::set_name(std::string name) {
  state_->name = std::move(name);
  detail::note_tree_change();
}

ResultRef::ResultRef(ElementType type, std::string name) : state_(std::make_shared<detail::ResultState>()) {
  state_->id = next_id++;
  state_->name = name.empty() ? "r" + std::to_string(state_->id) : std::move(name);
  state_->type = std::move(type);
}
const std::string& ResultRef::name() const { return state_->name; }
const ElementType& ResultRef::type() const { return state_->type; }

// ----- arguments -----------------------------------------------------------------------------

// VectorRef hands out its state through this friend-free path: the shared_ptr is recovered from
// the handle so arguments keep vectors alive.
struct VectorAccess : VectorRef {
  static std::shared_ptr<detail::VectorState> get(const VectorRef& v) { return static_cast<const VectorAccess&>(v).state_; }
};
struct ResultAccess : ResultRef {
  static std::shared_ptr<detail::ResultState> get(const ResultRef& r) { return static_cast<const ResultAccess&>(r).state_; }
};

namespace {
Arg varg(const VectorRef& v, Arg::Kind kind, Access access) {
  Arg a;
  a.kind = kind;
  a.access = access;
  a.vector = VectorAccess::get(v);
  return a;
}
}  // namespace

Arg in(const VectorRef& v) { return varg(v, Arg::Kind::partitioned, Access::read); }
Arg out(const VectorRef& v) { return varg(v, Arg::Kind::partitioned, Access::write); }
Arg inout(const VectorRef& v) { return varg(v, Arg::Kind::partitioned, Access::read_write); }
Arg whole(const VectorRef& v) { return varg(v, Arg::Kind::whole, Access::read); }
Arg offset(const VectorRef& v) { return varg(v, Arg::Kind::offset, Access::read); }
Arg count(const VectorRef& v) { return varg(v, Arg::Kind::count, Access::read); }
Arg size(const VectorRef& v) { return varg(v, Arg::Kind::size, Access::read); }
Arg iteration() {
  Arg a;
  a.kind = Arg::Kind::iteration;
  return a;
}

std::shared_ptr<detail::VectorState> Binding::state_of(const VectorRef& v) { return VectorAccess::get(v); }
std::shared_ptr<detail::ResultState> Binding::state_of(const ResultRef& r) { return ResultAccess::get(r); }

std::string Arg::describe() const {
  std::ostringstream s;
  auto vname = [&] { return vector ? "'" + vector->name + "'" : std::string("?"); };
  switch (kind) {
    case Kind::partitioned:
      s << (access == Access::read ? "in" : access == Access::write ? "out" : "inout") << " " << vname();
      break;
    case Kind::whole: s << "whole " << vname(); break;
    case Kind::scalar: s << "scalar " << (type.known() ? type.name : std::to_string(type.size) + "-byte value"); break;
    case Kind::local: s << "local " << local_bytes << " bytes"; break;
    case Kind::iteration: s << "iteration"; break;
    case Kind::offset: s << "offset of " << vname(); break;
    case Kind::count: s << "count of " << vname(); break;
    case Kind::size: s << "size of " << vname(); break;
  }
  if (!feature.empty()) s << " (feature '" << feature << "')";
  return s.str();
}

// ----- leaves --------------------------------------------------------------------------------

namespace {
std::shared_ptr<NodeImpl> make(NodeKind kind, std::string label) {
  auto n = std::make_shared<NodeImpl>();
  n->kind = kind;
  n->label = std::move(label);
  return n;
}

Kernel make_kernel(std::shared_ptr<const detail::KernelSource> src, const std::string& entry) {
  if (entry.empty())
    throw_error(errc::invalid_tree, "kernel from '" + src->origin + "' has no entry name",
                {.node = "kernel", .kernel_file = src->origin, .fix = "name the __kernel function to run"});
  auto n = make(NodeKind::kernel, entry);
  n->params = detail::parse_kernel_params(src->text, entry);
  n->source = std::move(src);
  n->entry = entry;
  return Kernel(n);
}
}  // namespace

namespace detail {
std::shared_ptr<const KernelSource> load_kernel_source(const std::string& file) {
  namespace fs = std::filesystem;
  auto src = std::make_shared<KernelSource>();
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in)
      throw_error(errc::io, "cannot read kernel file '" + file + "'", {.kernel_file = file, .fix = "check its permissions"});
    src->text = ss.str();
    src->origin = file;
  } else {
    const auto& table = embedded_kernels();
    auto it = table.find(fs::path(file).filename().string());
    if (it == table.end()) {
      std::string names;
      for (const auto& [k, v] : table) names += (names.empty() ? "" : ", ") + k;
      throw_error(errc::io, "kernel file '" + file + "' not found",
                  {.kernel_file = file,
                   .fix = "give an existing path, or one of Sinew's embedded kernel files: " + names});
    }
    src->text = it->second;
    src->origin = it->first;
  }
  src->hash = hash_hex(src->text);
  return src;
}
}  // namespace detail

Kernel kernel(const std::string& file, const std::string& entry) {
  return make_kernel(detail::load_kernel_source(file), entry);
}

Kernel kernel_source(const std::string& source, const std::string& entry, const std::string& origin) {
  auto src = std::make_shared<detail::KernelSource>();
  src->text = source;
  src->origin = origin;
  src->hash = detail::hash_hex(source);
  return make_kernel(std::move(src), entry);
}

Kernel& Kernel::args(std::vector<Arg> a) {
  impl_->args = std::move(a);
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::elements_per_thread(std::size_t n) {
  if (n == 0)
    throw_error(errc::invalid_argument, "elements_per_thread(0)",
                {.node = detail::node_name(*impl_), .fix = "each work-item computes at least 1 element"});
  impl_->elements_per_thread = n;
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::dims(unsigned n, std::size_t x) {
  if (n < 1 || n > 3 || (n == 3 && x == 0))
    throw_error(errc::invalid_argument, "dims(" + std::to_string(n) + ", " + std::to_string(x) + ")",
                {.node = detail::node_name(*impl_),
                 .fix = "use dims(1), dims(2) or dims(3, x) with x the row length of one unit's plane"});
  impl_->dims = n;
  impl_->dim_x = x;
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::range_of(const VectorRef& v) {
  impl_->range_vector = VectorAccess::get(v);
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::local_size(std::vector<std::size_t> sizes) {
  impl_->local_size = std::move(sizes);
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::local_multiple(std::size_t n) {
  impl_->local_multiple = n;
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::build_options(std::string options) {
  impl_->build_options = std::move(options);
  detail::note_tree_change();
  return *this;
}
Kernel& Kernel::label(std::string text) {
  impl_->label = std::move(text);
  detail::note_tree_change();
  return *this;
}

Node copy(const VectorRef& src, const VectorRef& dst) {
  auto n = make(NodeKind::copy, "copy");
  n->args = {in(src), out(dst)};
  return Node(n);
}

namespace blas {
Node axpy(float alpha, const VectorRef& x, const VectorRef& y) {
  auto n = make(NodeKind::axpy, "axpy");
  n->alpha = alpha;
  n->args = {in(x), inout(y)};
  return Node(n);
}
Node gemm(float alpha, const VectorRef& a, const VectorRef& b, float beta, const VectorRef& c, std::size_t k,
          std::size_t n) {
  auto node = make(NodeKind::gemm, "gemm");
  node->alpha = alpha;
  node->beta = beta;
  node->gemm_k = k;
  node->gemm_n = n;
  node->args = {in(a), whole(b), beta == 0.0f ? out(c) : inout(c)};
  return Node(node);
}
}  // namespace blas

Node fft(const VectorRef& data, FftDirection direction) {
  auto n = make(NodeKind::fft, direction == FftDirection::forward ? "fft forward" : "fft inverse");
  n->direction = direction;
  n->args = {inout(data)};
  return Node(n);
}

// ----- inner nodes ---------------------------------------------------------------------------

Node pipeline(std::vector<Node> stages) {
  if (stages.empty())
    throw_error(errc::invalid_tree, "pipeline with no stages",
                {.node = "pipeline", .fix = "give pipeline() at least one stage"});
  auto n = make(NodeKind::pipeline, "pipeline");
  for (auto& s : stages) n->children.push_back(need(s, "pipeline"));
  return Node(n);
}

Node map(Node body) {
  auto n = make(NodeKind::map, "map");
  n->children.push_back(need(body, "map"));
  return Node(n);
}

Loop loop(Node body) {
  auto n = make(NodeKind::loop, "loop");
  n->children.push_back(need(body, "loop"));
  return Loop(n);
}
Loop& Loop::times(std::size_t n) {
  impl_->times = n;
  detail::note_tree_change();
  return *this;
}
Loop& Loop::until(std::function<bool(const LoopState&)> done) {
  impl_->until_state = std::move(done);
  detail::note_tree_change();
  return *this;
}
Loop& Loop::until_value(const ResultRef& r, std::function<bool(const Value&)> done) {
  impl_->until_result = ResultAccess::get(r);
  impl_->until_value = std::move(done);
  detail::note_tree_change();
  return *this;
}

namespace reduce {
namespace {
Reducer builtin(Reducer::Op op, const VectorRef& partial, const ResultRef& out) {
  Reducer r;
  r.op = op;
  r.input = VectorAccess::get(partial);
  r.output = ResultAccess::get(out);
  return r;
}
}  // namespace
Reducer sum(const VectorRef& p, const ResultRef& o) { return builtin(Reducer::Op::sum, p, o); }
Reducer min(const VectorRef& p, const ResultRef& o) { return builtin(Reducer::Op::min, p, o); }
Reducer max(const VectorRef& p, const ResultRef& o) { return builtin(Reducer::Op::max, p, o); }
Reducer custom_source_bytes(const VectorRef& partial, const ResultRef& out, const std::string& source,
                            const std::string& function, const std::string& origin) {
  Reducer r = builtin(Reducer::Op::custom, partial, out);
  r.source = source;
  r.origin = origin;
  r.function = function;
  return r;
}
Reducer custom_bytes(const VectorRef& partial, const ResultRef& out, const std::string& file,
                     const std::string& function) {
  auto src = detail::load_kernel_source(file);
  return custom_source_bytes(partial, out, src->text, function, src->origin);
}
}  // namespace reduce

Node map_reduce(Node body, Reducer reducer) {
  auto n = make(NodeKind::map_reduce, "map_reduce");
  n->children.push_back(need(body, "map_reduce"));
  n->reducer = std::move(reducer);
  return Node(n);
}

// ----- printing ------------------------------------------------------------------------------

namespace detail {

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kernel: return "kernel";
    case NodeKind::axpy: return "blas.axpy";
    case NodeKind::gemm: return "blas.gemm";
    case NodeKind::fft: return "fft";
    case NodeKind::copy: return "copy";
    case NodeKind::pipeline: return "pipeline";
    case NodeKind::loop: return "loop";
    case NodeKind::map: return "map";
    case NodeKind::map_reduce: return "map_reduce";
  }
  return "?";
}

namespace {
std::atomic<std::uint64_t> changes{0};
}  // namespace
std::uint64_t tree_changes() { return changes.load(std::memory_order_acquire); }
void note_tree_change() { changes.fetch_add(1, std::memory_order_acq_rel); }

std::string node_name(const NodeImpl& n) {
  if (n.kind == NodeKind::kernel) return "kernel '" + n.label + "'" + (n.source ? " (" + n.source->origin + ")" : "");
  return to_string(n.kind);
}

std::shared_ptr<VectorState> NodeImpl::range() const {
  if (range_vector) return range_vector;
  for (const auto& a : args)
    if (a.kind == Arg::Kind::partitioned) return a.vector;
  return nullptr;
}

namespace {
void walk_impl(const NodeImpl& n, const std::string& parent,
               const std::function<void(const NodeImpl&, const std::string&)>& f, std::size_t index) {
  std::string path = parent.empty() ? node_name(n) : parent + "/" + std::to_string(index) + ":" + node_name(n);
  f(n, path);
  for (std::size_t i = 0; i < n.children.size(); ++i) walk_impl(*n.children[i], path, f, i);
}
}  // namespace

void walk(const NodeImpl& root, const std::function<void(const NodeImpl&, const std::string&)>& f) {
  walk_impl(root, "", f, 0);
}

void visit(const NodeImpl& root, const std::function<void(const NodeImpl&)>& f) {
  f(root);
  for (const auto& c : root.children) visit(*c, f);
}

}  // namespace detail

namespace {
const char* op_name(Reducer::Op op) {
  switch (op) {
    case Reducer::Op::sum: return "sum";
    case Reducer::Op::min: return "min";
    case Reducer::Op::max: return "max";
    case Reducer::Op::custom: return "custom";
  }
  return "?";
}

std::string vector_desc(const detail::VectorState& v) {
  std::ostringstream s;
  s << v.name << " [" << (v.type.known() ? v.type.name : std::to_string(v.type.size) + "-byte") << ", unit " << v.unit;
  if (v.size) s << ", " << v.size << " elements";
  s << "]";
  return s.str();
}

void dump_node(const NodeImpl& n, std::ostringstream& s, const std::string& indent) {
  s << indent << detail::node_name(n);
  if (n.kind == NodeKind::kernel) {
    s << " entry=" << n.entry;
    if (n.elements_per_thread != 1) s << " elements_per_thread=" << n.elements_per_thread;
    if (n.dims != 1) s << " dims=" << n.dims << (n.dim_x ? "(x=" + std::to_string(n.dim_x) + ")" : "");
    if (!n.local_size.empty()) {
      s << " local_size=";
      for (std::size_t i = 0; i < n.local_size.size(); ++i) s << (i ? "x" : "") << n.local_size[i];
    }
    if (n.local_multiple) s << " local_multiple=" << n.local_multiple;
    if (!n.build_options.empty()) s << " options='" << n.build_options << "'";
  }
  if (n.kind == NodeKind::axpy || n.kind == NodeKind::gemm) s << " alpha=" << n.alpha;
  if (n.kind == NodeKind::gemm) s << " beta=" << n.beta << " k=" << n.gemm_k << " n=" << n.gemm_n;
  if (n.kind == NodeKind::loop) {
    if (n.times) s << " times=" << n.times;
    if (n.until_result) s << " until(" << n.until_result->name << ")";
    if (n.until_state) s << " until(state)";
  }
  if (n.reducer) {
    s << " reduce=" << op_name(n.reducer->op) << "(" << (n.reducer->input ? n.reducer->input->name : "?") << ") -> "
      << (n.reducer->output ? n.reducer->output->name : "?");
    if (n.reducer->op == Reducer::Op::custom) s << " using " << n.reducer->function << " from " << n.reducer->origin;
  }
  s << "\n";
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    const auto& a = n.args[i];
    s << indent << "    " << i << ": " << a.describe();
    if (a.vector && (a.kind == Arg::Kind::partitioned || a.kind == Arg::Kind::whole)) s << "  " << vector_desc(*a.vector);
    s << "\n";
  }
  for (const auto& c : n.children) dump_node(*c, s, indent + "  ");
}
}  // namespace

std::string Node::dump() const {
  if (!impl_) return "(empty)\n";
  std::ostringstream s;
  dump_node(*impl_, s, "");
  return s.str();
}

std::string Node::dot() const {
  std::ostringstream s;
  s << "digraph sinew {\n  node [shape=box, fontname=\"monospace\"];\n";
  std::map<const NodeImpl*, int> ids;
  std::function<int(const NodeImpl&)> emit = [&](const NodeImpl& n) -> int {
    int id = static_cast<int>(ids.size());
    ids[&n] = id;
    std::string label = detail::node_name(n);
    for (auto& ch : label)
      if (ch == '"') ch = '\'';
    s << "  n" << id << " [label=\"" << label;
    for (const auto& a : n.args) {
      std::string d = a.describe();
      for (auto& ch : d)
        if (ch == '"') ch = '\'';
      s << "\\n" << d;
    }
    s << "\"" << (n.is_leaf() ? "" : ", shape=ellipse") << "];\n";
    for (const auto& c : n.children) {
      int cid = emit(*c);
      s << "  n" << id << " -> n" << cid << ";\n";
    }
    return id;
  };
  if (impl_) emit(*impl_);
  s << "}\n";
  return s.str();
}

std::string Node::signature() const {
  if (!impl_) return {};
  // Vectors are named by order of first appearance so that two builds of the same tree agree.
  std::map<const detail::VectorState*, int> vid;
  auto vref = [&](const detail::VectorState* v) {
    auto [it, inserted] = vid.emplace(v, static_cast<int>(vid.size()));
    return "v" + std::to_string(it->second) + ":" + v->type.name + "/" + std::to_string(v->type.size);
  };
  std::ostringstream s;
  std::function<void(const NodeImpl&)> sig = [&](const NodeImpl& n) {
    s << detail::to_string(n.kind) << "(";
    if (n.kind == NodeKind::kernel)
      s << n.entry << "@" << n.source->hash << ";ept=" << n.elements_per_thread << ";dims=" << n.dims << ";opt="
        << n.build_options << ";";
    if (n.kind == NodeKind::fft) s << (n.direction == FftDirection::forward ? "fwd;" : "inv;");
    if (n.kind == NodeKind::loop) s << "times=" << n.times << ";until=" << (n.until_result || n.until_state) << ";";
    for (const auto& a : n.args) {
      s << static_cast<int>(a.kind) << static_cast<int>(a.access);
      if (a.vector) s << vref(a.vector.get());
      if (a.kind == Arg::Kind::scalar) s << a.type.name << a.bytes.size();
      s << ",";
    }
    if (n.reducer) {
      s << "reduce" << static_cast<int>(n.reducer->op) << vref(n.reducer->input.get()) << n.reducer->function
        << detail::hash_hex(n.reducer->source);
    }
    for (const auto& c : n.children) sig(*c);
    s << ")";
  };
  sig(*impl_);
  return detail::hash_hex(s.str());
}

const std::string& Node::label() const {
  static const std::string empty;
  return impl_ ? impl_->label : empty;
}

}  // namespace sinew
