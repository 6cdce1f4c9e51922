// tree/tree.cpp — vectors, results and arguments; what every node shares (titles, summaries,
// walks, versions); printing trees (text, DOT) and their structural signature.
#include "tree/node.hpp"

#include "platform/error.hpp"
#include "platform/hash.hpp"

#include <sinew/binding.hpp>

#include <algorithm>
#include <charconv>
#include <atomic>
#include <map>
#include <sstream>

namespace sinew {
using detail::NodeImpl;
using detail::throw_error;

namespace {
// "v12": a prefix and a number. (Through std::to_chars: GCC 12 warns falsely (-Wrestrict) about
// std::to_string inlined into some of these callers.)
std::string prefixed(const char* prefix, std::uint64_t n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  return std::string(prefix).append(digits, end);
}
}  // namespace

namespace {
std::atomic<std::uint64_t> next_id{1};
}  // namespace

// ----- vectors and results -------------------------------------------------------------------

VectorRef::VectorRef(ElementType type, std::size_t size) : state_(std::make_shared<detail::VectorState>()) {
  state_->id = next_id++;
  state_->name = prefixed("v", state_->id);
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
  state_->version.fetch_add(1, std::memory_order_acq_rel);
}
void VectorRef::set_name(std::string name) {
  state_->name = std::move(name);
  state_->named = true;
  state_->version.fetch_add(1, std::memory_order_acq_rel);
}

ResultRef::ResultRef(ElementType type, std::string name) : state_(std::make_shared<detail::ResultState>()) {
  state_->id = next_id++;
  state_->name = name.empty() ? prefixed("r", state_->id) : std::move(name);
  state_->type = std::move(type);
}
const std::string& ResultRef::name() const { return state_->name; }
const ElementType& ResultRef::type() const { return state_->type; }

// ----- arguments -----------------------------------------------------------------------------

namespace {
Arg vector_argument(const VectorRef& v, Arg::Kind kind, Access access) {
  Arg a;
  a.kind = kind;
  a.access = access;
  a.vector = detail::VectorAccess::get(v);
  return a;
}
}  // namespace

Arg in(const VectorRef& v) { return vector_argument(v, Arg::Kind::partitioned, Access::read); }
Arg out(const VectorRef& v) { return vector_argument(v, Arg::Kind::partitioned, Access::write); }
Arg inout(const VectorRef& v) { return vector_argument(v, Arg::Kind::partitioned, Access::read_write); }
Arg whole(const VectorRef& v) { return vector_argument(v, Arg::Kind::whole, Access::read); }
Arg offset(const VectorRef& v) { return vector_argument(v, Arg::Kind::offset, Access::read); }
Arg count(const VectorRef& v) { return vector_argument(v, Arg::Kind::count, Access::read); }
Arg size(const VectorRef& v) { return vector_argument(v, Arg::Kind::size, Access::read); }
Arg iteration() {
  Arg a;
  a.kind = Arg::Kind::iteration;
  return a;
}

Arg value(const ResultRef& r) {
  Arg a;
  a.kind = Arg::Kind::value;
  a.result = detail::ResultAccess::get(r);
  a.type = r.type();
  return a;
}

std::shared_ptr<detail::VectorState> Binding::state_of(const VectorRef& v) { return detail::VectorAccess::get(v); }
std::shared_ptr<detail::ResultState> Binding::state_of(const ResultRef& r) { return detail::ResultAccess::get(r); }

std::string Arg::describe() const {
  std::ostringstream s;
  auto vname = [&] { return vector ? "'" + vector->name + "'" : std::string("?"); };
  switch (kind) {
    case Kind::partitioned:
      s << (access == Access::read ? "in" : access == Access::write ? "out" : "inout") << " " << vname();
      break;
    case Kind::whole: s << "whole " << vname(); break;
    case Kind::halo:
      s << "halo " << vname() << " (" << halo_before << " before, " << halo_after << " after, "
        << detail::boundary_name(boundary) << ")";
      break;
    case Kind::scalar: s << "scalar " << (type.known() ? type.name : std::to_string(type.size) + "-byte value"); break;
    case Kind::local: s << "local " << local_bytes << " bytes"; break;
    case Kind::iteration: s << "iteration"; break;
    case Kind::offset: s << "offset of " << vname(); break;
    case Kind::count: s << "count of " << vname(); break;
    case Kind::size: s << "size of " << vname(); break;
    case Kind::value: s << "value of result '" << (result ? result->name : std::string("?")) << "'"; break;
  }
  if (!feature.empty()) s << " (feature '" << feature << "')";
  return s.str();
}

// ----- what every node shares ----------------------------------------------------------------

namespace detail {

std::string NodeImpl::title() const {
  return name.empty() ? std::string(kind()) : std::string(kind()) + " '" + name + "'";
}

std::string NodeImpl::summary() const {
  if (!name.empty()) return name;
  if (is_leaf() || children.empty()) return short_label();
  // Enough to recognise a tree in a list; long skeletons are cut.
  constexpr std::size_t kMax = 72;
  std::string s = short_label() + "(";
  for (std::size_t i = 0; i < children.size(); ++i) {
    std::string part = (i ? ", " : "") + children[i]->summary();
    if (s.size() + part.size() > kMax) {
      s += i ? ", ..." : "...";
      break;
    }
    s += part;
  }
  return s + ")";
}

std::shared_ptr<VectorState> NodeImpl::range() const {
  for (const auto& a : args)
    if (a.kind == Arg::Kind::partitioned || a.kind == Arg::Kind::halo) return a.vector;
  return nullptr;
}

std::string NodeImpl::argument_label(std::size_t i) const {
  return "argument " + std::to_string(i) + " (" + args.at(i).describe() + ")";
}

namespace {
void walk_impl(const NodeImpl& n, const std::string& parent,
               const std::function<void(const NodeImpl&, const std::string&)>& f, std::size_t index) {
  std::string path = parent.empty() ? n.title() : parent + "/" + std::to_string(index) + ":" + n.title();
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

std::vector<const VectorState*> vectors_in_order(const NodeImpl& root) {
  std::vector<const VectorState*> out;
  auto note = [&](const VectorState* v) {
    if (v && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  visit(root, [&](const NodeImpl& n) {
    for (const auto& a : n.args) note(a.vector.get());
    note(n.extra_vector());
  });
  return out;
}

std::uint64_t tree_version(const NodeImpl& root) {
  // Every builder call increments one version by one, so the sum changes with any of them.
  std::uint64_t sum = 0;
  visit(root, [&](const NodeImpl& n) {
    sum += n.version.load(std::memory_order_acquire);
    for (const auto& a : n.args)
      if (a.vector) sum += a.vector->version.load(std::memory_order_acquire);
  });
  return sum;
}

void fail(errc code, const std::string& node, const std::string& argument, const std::string& message,
          const std::string& fix) {
  throw_error(code, message, {.node = node, .argument = argument, .fix = fix});
}

std::shared_ptr<NodeImpl> impl_of(const Node& n, const char* where) {
  if (!n.impl())
    throw_error(errc::invalid_tree, std::string(where) + " was given an empty node",
                {.node = where, .fix = "pass a node built with sinew::kernel, pipeline, loop, map or map_reduce"});
  return n.impl();
}

}  // namespace detail

// ----- printing ------------------------------------------------------------------------------

namespace {
std::string vector_description(const detail::VectorState& v) {
  std::ostringstream s;
  s << v.name << " [" << (v.type.known() ? v.type.name : std::to_string(v.type.size) + "-byte") << ", unit " << v.unit;
  if (v.size) s << ", " << v.size << " elements";
  s << "]";
  return s.str();
}

void dump_node(const NodeImpl& n, std::ostringstream& s, const std::string& indent) {
  s << indent << n.title();
  n.dump_settings(s);
  s << "\n";
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    const auto& a = n.args[i];
    s << indent << "    " << i << ": " << a.describe();
    if (a.vector && (a.kind == Arg::Kind::partitioned || a.kind == Arg::Kind::whole || a.kind == Arg::Kind::halo))
      s << "  " << vector_description(*a.vector);
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
  auto quoted = [](std::string text) {
    for (auto& ch : text)
      if (ch == '"') ch = '\'';
    return text;
  };
  std::function<int(const NodeImpl&)> emit = [&](const NodeImpl& n) -> int {
    int id = static_cast<int>(ids.size());
    ids[&n] = id;
    s << "  n" << id << " [label=\"" << quoted(n.title());
    for (const auto& a : n.args) s << "\\n" << quoted(a.describe());
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
  // Vectors are named by order of first appearance so that two builds of the same tree agree
  // (the knowledge base keys on this text's hash: its format must not change).
  std::map<const detail::VectorState*, int> vid;
  auto vref = [&](const detail::VectorState* v) -> std::string {
    auto [it, inserted] = vid.emplace(v, static_cast<int>(vid.size()));
    return prefixed("v", it->second) + ":" + v->type.name + "/" + std::to_string(v->type.size);
  };
  // Results passed as values are named the same way, by first appearance among the values.
  std::map<const detail::ResultState*, int> rid;
  auto rref = [&](const detail::ResultState* r) -> std::string {
    auto [it, inserted] = rid.emplace(r, static_cast<int>(rid.size()));
    return prefixed("r", static_cast<std::uint64_t>(it->second)) + ":" + r->type.name + "/" +
           prefixed("", r->type.size);
  };
  std::ostringstream s;
  std::function<void(const NodeImpl&)> sig = [&](const NodeImpl& n) {
    s << n.kind() << "(";
    n.sign(s, vref);
    for (const auto& a : n.args) {
      s << static_cast<int>(a.kind) << static_cast<int>(a.access);
      if (a.vector) s << vref(a.vector.get());
      if (a.kind == Arg::Kind::scalar) s << a.type.name << a.bytes.size();
      if (a.kind == Arg::Kind::value) s << rref(a.result.get());
      // A halo's widths and boundary change what the kernel computes (and what moves).
      if (a.kind == Arg::Kind::halo) s << "h" << a.halo_before << "/" << a.halo_after << "/" << static_cast<int>(a.boundary);
      s << ",";
    }
    for (const auto& c : n.children) sig(*c);
    s << ")";
  };
  sig(*impl_);
  return detail::hash_hex(s.str());
}

Node& Node::name(std::string text) {
  detail::impl_of(*this, "name()")->name = std::move(text);
  impl_->changed();
  return *this;
}

std::string Node::label() const { return impl_ ? impl_->summary() : std::string(); }

}  // namespace sinew
