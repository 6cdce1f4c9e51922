// tree/validate.cpp — every check that can be made before a device is touched.
#include "tree/validate.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <set>

namespace sinew::detail {
namespace {

[[noreturn]] void fail(errc code, const std::string& node, const std::string& argument, const std::string& message,
                       const std::string& fix) {
  throw_error(code, message, {.node = node, .argument = argument, .fix = fix});
}

std::string arg_label(std::size_t i, const Arg& a, const std::optional<std::vector<KernelParam>>& params) {
  std::string s = "argument " + std::to_string(i);
  if (params && i < params->size() && !(*params)[i].name.empty()) s += " '" + (*params)[i].name + "'";
  s += " (" + a.describe() + ")";
  return s;
}

bool is_uint_like(const std::string& t) { return t == "uint" || t == "unsigned int" || t == "int" || t == "size_t"; }

// Checks one kernel argument against the parsed parameter.
void check_param(const NodeImpl& n, const std::string& path, std::size_t i, const Arg& a, const KernelParam& p) {
  const std::string label = arg_label(i, a, n.params);
  switch (a.kind) {
    case Arg::Kind::partitioned:
    case Arg::Kind::whole: {
      if (!p.pointer || (p.address_space != "global" && p.address_space != "constant"))
        fail(errc::invalid_argument, path, label,
             "a vector is passed where the kernel expects '" + p.type + (p.pointer ? "*" : "") + "'",
             "pass a vector only to a __global pointer parameter, or give this parameter sinew::scalar(...)");
      const auto& t = a.vector->type;
      if (t.known() && p.type != "void" && p.type != t.name)
        fail(errc::invalid_argument, path, label,
             "vector '" + a.vector->name + "' holds " + t.name + " but the kernel parameter is " + p.type + "*",
             "declare the vector as sinew::vector<cl_" + p.type + "> or change the kernel's parameter type");
      if (a.access != Access::read && (p.is_const || p.address_space == "constant"))
        fail(errc::invalid_argument, path, label,
             "the kernel declares this parameter read-only but the tree writes vector '" + a.vector->name + "'",
             "use sinew::in(...) for it, or drop const from the kernel parameter");
      break;
    }
    case Arg::Kind::scalar:
      if (p.pointer || p.address_space == "local" || p.address_space == "global")
        fail(errc::invalid_argument, path, label, "a scalar is passed where the kernel expects a pointer",
             "pass a vector with sinew::in/out/inout/whole, or sinew::local<T>(n) for __local memory");
      if (a.type.known() && p.type != a.type.name)
        fail(errc::invalid_argument, path, label,
             "scalar of type " + a.type.name + " passed to a parameter of type " + p.type,
             "pass sinew::scalar(cl_" + p.type + "(value))");
      break;
    case Arg::Kind::local:
      if (!p.pointer || p.address_space != "local")
        fail(errc::invalid_argument, path, label, "local memory passed to a parameter that is not __local",
             "declare the parameter as __local T*, or pass another kind of argument");
      break;
    case Arg::Kind::iteration:
    case Arg::Kind::offset:
    case Arg::Kind::count:
    case Arg::Kind::size:
      if (p.pointer || !is_uint_like(p.type))
        fail(errc::invalid_argument, path, label, "this argument is a uint but the kernel parameter is " + p.type,
             "declare the parameter as uint");
      break;
  }
}

}  // namespace

std::vector<std::size_t> global_range(const NodeImpl& leaf, std::size_t unit, std::size_t units) {
  const std::size_t ept = leaf.elements_per_thread;
  switch (leaf.dims) {
    case 1: return {units * unit / ept};
    case 2: return {unit / ept, units};
    default: return {leaf.dim_x / ept, unit / leaf.dim_x, units};
  }
}

Analysis analyze(const NodeImpl& root, const std::vector<Binding>& bindings) {
  Analysis an;

  // Bindings: each names a vector or result at most once.
  std::map<const VectorState*, const Binding*> vbind;
  for (const auto& b : bindings) {
    if (b.vector) {
      if (!vbind.emplace(b.vector.get(), &b).second)
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'", "the vector is bound twice",
             "bind each vector to one host array");
      if (b.data == nullptr && b.elements > 0)
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'", "bound to a null pointer",
             "bind it to valid host memory");
      if (b.vector->type.known() && b.type.known() && !(b.vector->type == b.type))
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'",
             "host data of type " + b.type.name + " bound to a vector of " + b.vector->type.name,
             "bind a std::vector<cl_" + b.vector->type.name + ">");
    } else if (b.result) {
      if (!an.result_bindings.emplace(b.result.get(), &b).second)
        fail(errc::invalid_argument, "bindings", "result '" + b.result->name + "'", "the result is bound twice",
             "bind each result to one host variable");
    }
  }

  // Collect vectors and their uses, checking each leaf.
  auto note_vector = [&](const std::shared_ptr<VectorState>& v) -> VectorUse& {
    auto [it, inserted] = an.index.emplace(v.get(), an.vectors.size());
    if (inserted) {
      VectorUse u;
      u.vector = v;
      if (auto b = vbind.find(v.get()); b != vbind.end()) u.binding = b->second;
      an.vectors.push_back(u);
    }
    return an.vectors[it->second];
  };

  std::set<const ResultState*> produced;
  std::vector<std::pair<const NodeImpl*, std::string>> loops;
  auto paths = std::make_shared<std::map<const NodeImpl*, std::string>>();
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    paths->emplace(&n, path);
    if (n.kind == NodeKind::loop) {
      if (!n.times && !n.until_result && !n.until_state)
        fail(errc::invalid_tree, path, "", "a loop with neither .times(n) nor .until(...)",
             "give the loop a count with .times(n) or a stop condition with .until(result, predicate)");
      loops.emplace_back(&n, path);
    }
    if (n.kind == NodeKind::map_reduce) {
      const Reducer& r = *n.reducer;
      if (!r.input || !r.output)
        fail(errc::invalid_tree, path, "reducer", "the reducer has no input vector or no result",
             "build it with sinew::reduce::sum(partial, result) or another sinew::reduce function");
      if (r.op != Reducer::Op::custom && (!r.input->type.known() || r.input->type.lanes != 1))
        fail(errc::invalid_argument, path, "reducer input '" + r.input->name + "'",
             "built-in reductions work on scalar element types, not " +
                 (r.input->type.known() ? r.input->type.name : std::string("opaque types")),
             "reduce a vector of float, int, uint, ... or use sinew::reduce::custom");
      if (!(r.input->type == r.output->type) && r.output->type.size != r.input->type.size)
        fail(errc::invalid_argument, path, "result '" + r.output->name + "'",
             "the result's type differs from the reduced vector's (" + r.input->type.name + ")",
             "declare the result as sinew::result<cl_" + r.input->type.name + ">");
      if (r.op == Reducer::Op::custom) {
        if (r.identity.size() != r.input->type.size)
          fail(errc::invalid_argument, path, "reducer identity", "the identity's size differs from the element size",
               "pass an identity of the vector's element type");
        if (r.source.find(r.function) == std::string::npos)
          fail(errc::invalid_argument, path, "reducer function '" + r.function + "'",
               "the function is not defined in '" + r.origin + "'", "name a function T f(T a, T b) defined in that file");
      }
      if (!produced.insert(r.output.get()).second)
        fail(errc::invalid_tree, path, "result '" + r.output->name + "'", "two map_reduce nodes write the same result",
             "give each map_reduce its own sinew::result");
      an.results.push_back(r.output);
    }
    if (!n.is_leaf()) return;

    // Kernel signature.
    if (n.kind == NodeKind::kernel && n.params) {
      if (n.params->size() != n.args.size())
        fail(errc::invalid_argument, path, "arguments",
             "the kernel '" + n.entry + "' has " + std::to_string(n.params->size()) + " parameters but " +
                 std::to_string(n.args.size()) + " arguments were given",
             "give .args(...) one argument per kernel parameter, in order");
      for (std::size_t i = 0; i < n.args.size(); ++i) check_param(n, path, i, n.args[i], (*n.params)[i]);
    }
    bool has_partitioned = false;
    std::set<const VectorState*> whole_here, written_here;
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      const Arg& a = n.args[i];
      if (!a.vector) continue;
      VectorUse& u = note_vector(a.vector);
      if (a.kind == Arg::Kind::partitioned) {
        has_partitioned = true;
        u.partitioned = true;
        if (a.access != Access::write) u.read_partitioned = true;
        if (a.access != Access::read) {
          u.written = true;
          written_here.insert(a.vector.get());
        }
      } else if (a.kind == Arg::Kind::whole) {
        u.read_whole = true;
        whole_here.insert(a.vector.get());
      }
    }
    for (const VectorState* v : whole_here)
      if (written_here.count(v))
        fail(errc::invalid_argument, path, "vector '" + v->name + "'",
             "the same leaf reads the vector whole and writes its slice: other devices would read it while it changes",
             "write to a second vector and copy it back with sinew::copy in a later stage");
    if (n.kind == NodeKind::kernel && !has_partitioned && !n.range_vector)
      fail(errc::invalid_argument, path, "arguments", "the kernel has no partitioned vector argument to size its range",
           "pass at least one vector with sinew::in/out/inout, or name one with .range_of(v)");
    if (n.range_vector) note_vector(n.range_vector).partitioned = true;
  });

  // Results produced by map_reduce nodes; loop predicates and bindings must refer to them.
  for (auto& [loop, path] : loops) {
    if (!loop->until_result) continue;
    bool inside = false;
    walk(*loop->children[0], [&](const NodeImpl& n, const std::string&) {
      if (n.kind == NodeKind::map_reduce && n.reducer->output == loop->until_result) inside = true;
    });
    if (!inside)
      fail(errc::invalid_tree, path, "until(" + loop->until_result->name + ")",
           "the loop waits on a result that no map_reduce inside its body produces",
           "put the map_reduce that computes '" + loop->until_result->name + "' inside the loop body");
  }
  for (const auto& [r, b] : an.result_bindings) {
    if (!produced.count(r))
      fail(errc::invalid_argument, "bindings", "result '" + r->name + "'", "the result is not produced by this tree",
           "bind only results written by one of the tree's map_reduce nodes");
    if (b->type.size != r->type.size)
      fail(errc::invalid_argument, "bindings", "result '" + r->name + "'", "host variable of another type",
           "bind a variable of type cl_" + r->type.name);
  }
  for (const auto& [v, b] : vbind)
    if (!an.index.count(v))
      fail(errc::invalid_argument, "bindings", "vector '" + v->name + "'", "the vector is not used by this tree",
           "bind only the tree's vectors (see tree.dump())");
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    if (n.kind == NodeKind::map_reduce) {
      auto it = an.index.find(n.reducer->input.get());
      if (it == an.index.end() || !an.vectors[it->second].written)
        fail(errc::invalid_tree, path, "reducer input '" + n.reducer->input->name + "'",
             "the reduced vector is not written by any leaf of the tree",
             "reduce a vector that the map_reduce body writes with sinew::out or sinew::inout");
    }
  });

  // Sizes: bound vectors take the binding's size; the common unit count sizes the rest.
  for (auto& u : an.vectors) {
    const auto& v = *u.vector;
    if (u.binding) {
      if (v.size && v.size != u.binding->elements)
        fail(errc::invalid_argument, "bindings", "vector '" + v.name + "'",
             "declared with " + std::to_string(v.size) + " elements but bound to " +
                 std::to_string(u.binding->elements),
             "bind a host array of " + std::to_string(v.size) + " elements, or declare the vector without a size");
      if (u.binding->read_only && u.written)
        fail(errc::invalid_argument, "bindings", "vector '" + v.name + "'",
             "the tree writes this vector but it is bound to const host data",
             "bind a non-const std::vector or span");
      u.elements = u.binding->elements;
    } else {
      u.elements = v.size;
    }
  }
  const VectorUse* first = nullptr;  // the vector that set the tree's unit count
  for (auto& u : an.vectors) {
    if (!u.partitioned || !u.elements) continue;
    if (u.elements % u.vector->unit)
      fail(errc::invalid_argument, "vector '" + u.vector->name + "'", "size",
           std::to_string(u.elements) + " elements are not a whole number of units of " +
               std::to_string(u.vector->unit),
           "make the size a multiple of " + std::to_string(u.vector->unit) + " or change unit()");
    u.units = u.elements / u.vector->unit;
    if (!first) {
      first = &u;
      an.units = u.units;
    }
    if (u.units != an.units) {
      fail(errc::invalid_argument, "vector '" + u.vector->name + "'", "size",
           "has " + std::to_string(u.units) + " units but '" + first->vector->name + "' has " +
               std::to_string(an.units) +
               " (every partitioned vector of a tree is split at the same unit boundaries)",
           "give '" + u.vector->name + "' a unit of " + std::to_string(u.elements / std::max<std::size_t>(1, an.units)) +
               " elements, or a size of " + std::to_string(an.units * u.vector->unit));
    }
  }
  for (auto& u : an.vectors) {
    if (u.elements == 0) {
      if (u.partitioned && an.units) {
        u.elements = an.units * u.vector->unit;  // a channel sized like its neighbours
      } else {
        fail(errc::invalid_argument, "vector '" + u.vector->name + "'", "size",
             "the vector has no size: it is neither bound nor declared with one",
             "bind it to host data in run(), or declare sinew::vector<T>(n)");
      }
    }
    if (u.partitioned) u.units = u.elements / u.vector->unit;
    if ((u.read_partitioned || u.read_whole) && !u.binding && !u.written)
      fail(errc::invalid_argument, "vector '" + u.vector->name + "'", "data",
           "the tree reads this vector but nothing gives it data: it is not bound and no leaf writes it",
           "bind it to host data in run(), or write it in an earlier stage");
  }
  if (an.units == 0)
    fail(errc::invalid_tree, "tree", "vectors", "the tree has no partitioned vector with elements",
         "bind a non-empty vector to at least one in/out/inout argument");

  // Leaf shapes against the resolved sizes.
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    if (!n.is_leaf()) return;
    auto rv = n.range();
    const std::size_t unit = rv ? rv->unit : 1;
    switch (n.kind) {
      case NodeKind::kernel: {
        const std::size_t ept = n.elements_per_thread;
        if (n.dims == 1 && (an.units * unit) % ept)
          fail(errc::invalid_argument, path, "elements_per_thread",
               std::to_string(an.units * unit) + " elements of '" + rv->name + "' are not a multiple of " +
                   std::to_string(ept) + " elements per work-item",
               "choose a size that is a multiple of " + std::to_string(ept));
        if (n.dims >= 2 && (n.dims == 2 ? unit : n.dim_x) % ept)
          fail(errc::invalid_argument, path, "elements_per_thread",
               "a row of " + std::to_string(n.dims == 2 ? unit : n.dim_x) + " elements is not a multiple of " +
                   std::to_string(ept) + " elements per work-item",
               "choose a row length that is a multiple of " + std::to_string(ept));
        if (n.dims == 3 && unit % n.dim_x)
          fail(errc::invalid_argument, path, "dims",
               "a unit of " + std::to_string(unit) + " elements is not a whole number of rows of " +
                   std::to_string(n.dim_x),
               "set dims(3, x) with x dividing the unit");
        if (!n.local_size.empty()) {
          if (n.local_size.size() != n.dims)
            fail(errc::invalid_argument, path, "local_size",
                 "local_size has " + std::to_string(n.local_size.size()) + " dimensions but the range has " +
                     std::to_string(n.dims),
                 "give one local size per range dimension");
          auto g = global_range(n, unit, an.units);
          for (std::size_t d = 0; d < g.size(); ++d)
            if (n.local_size[d] == 0 || g[d] % n.local_size[d])
              fail(errc::invalid_argument, path, "local_size",
                   "local size " + std::to_string(n.local_size[d]) + " does not divide the range's dimension " +
                       std::to_string(d) + " (" + std::to_string(g[d]) + ")",
                   "choose a local size that divides " + std::to_string(g[d]));
          if (n.dims == 1 && n.local_size[0] == 0)
            fail(errc::invalid_argument, path, "local_size", "a local size of 0", "use a positive local size");
        }
        break;
      }
      case NodeKind::axpy:
        for (const auto& a : n.args)
          if (a.vector->type.name != "float")
            fail(errc::invalid_argument, path, "vector '" + a.vector->name + "'",
                 "blas::axpy works on float vectors, not " + a.vector->type.name, "use sinew::vector<cl_float>");
        if (an.use(n.args[0].vector.get()).elements != an.use(n.args[1].vector.get()).elements)
          fail(errc::invalid_argument, path, "x, y", "x and y have different sizes", "give x and y the same size");
        break;
      case NodeKind::gemm: {
        const auto& a = an.use(n.args[0].vector.get());
        const auto& b = an.use(n.args[1].vector.get());
        const auto& c = an.use(n.args[2].vector.get());
        for (const auto* u : {&a, &b, &c})
          if (u->vector->type.name != "float")
            fail(errc::invalid_argument, path, "vector '" + u->vector->name + "'",
                 "blas::gemm works on float matrices", "use sinew::vector<cl_float>");
        if (a.vector->unit != n.gemm_k)
          fail(errc::invalid_argument, path, "A '" + a.vector->name + "'",
               "A's unit must be one row of k=" + std::to_string(n.gemm_k) + " elements, not " +
                   std::to_string(a.vector->unit),
               "declare A with .unit(k)");
        if (c.vector->unit != n.gemm_n)
          fail(errc::invalid_argument, path, "C '" + c.vector->name + "'",
               "C's unit must be one row of n=" + std::to_string(n.gemm_n) + " elements", "declare C with .unit(n)");
        if (b.elements != n.gemm_k * n.gemm_n)
          fail(errc::invalid_argument, path, "B '" + b.vector->name + "'",
               "B has " + std::to_string(b.elements) + " elements, not k*n = " + std::to_string(n.gemm_k * n.gemm_n),
               "bind a k-by-n matrix to B");
        break;
      }
      case NodeKind::fft: {
        const auto& v = *n.args[0].vector;
        if (v.type.name != "float2")
          fail(errc::invalid_argument, path, "vector '" + v.name + "'",
               "fft works on complex single precision (cl_float2), not " + v.type.name,
               "use sinew::vector<cl_float2>");
        std::size_t len = v.unit;
        for (std::size_t p : {2, 3, 5, 7, 11, 13})
          while (len % p == 0) len /= p;
        if (len != 1)
          fail(errc::invalid_argument, path, "vector '" + v.name + "' unit",
               "clFFT cannot transform length " + std::to_string(v.unit) + " (only products of 2, 3, 5, 7, 11, 13)",
               "use a transform length such as a power of two");
        break;
      }
      case NodeKind::copy: {
        const auto& s = *n.args[0].vector;
        const auto& d = *n.args[1].vector;
        if (s.type.size != d.type.size || s.unit != d.unit)
          fail(errc::invalid_argument, path, "'" + s.name + "' -> '" + d.name + "'",
               "copy needs vectors of the same element size and unit", "copy between vectors of one shape");
        break;
      }
      default: break;
    }
  });

  an.paths = std::move(paths);
  for (const auto& u : an.vectors) {
    if (u.read_whole && u.written) an.streamable = false;
    if (u.partitioned) an.bytes_per_unit += u.vector->unit * u.vector->type.size;
  }
  for (auto& [loop, path] : loops)
    if (loop->until_result || loop->until_state) an.streamable = false;

  // Knowledge-base features: vector sizes in elements, and scalars marked as features.
  for (const auto& u : an.vectors)
    if (u.binding) an.features.emplace_back(u.vector->name + ".size", static_cast<double>(u.elements));
  walk(root, [&](const NodeImpl& n, const std::string&) {
    for (const auto& a : n.args) {
      if (a.kind != Arg::Kind::scalar || a.feature.empty()) continue;
      double v = 0;
      switch (a.type.scalar) {
        case ScalarKind::i32: { cl_int x; std::memcpy(&x, a.bytes.data(), 4); v = x; break; }
        case ScalarKind::u32: { cl_uint x; std::memcpy(&x, a.bytes.data(), 4); v = x; break; }
        case ScalarKind::i64: { cl_long x; std::memcpy(&x, a.bytes.data(), 8); v = static_cast<double>(x); break; }
        case ScalarKind::u64: { cl_ulong x; std::memcpy(&x, a.bytes.data(), 8); v = static_cast<double>(x); break; }
        case ScalarKind::f32: { cl_float x; std::memcpy(&x, a.bytes.data(), 4); v = x; break; }
        case ScalarKind::f64: { cl_double x; std::memcpy(&x, a.bytes.data(), 8); v = x; break; }
        default: break;
      }
      an.features.emplace_back(a.feature, v);
    }
  });
  return an;
}

}  // namespace sinew::detail
