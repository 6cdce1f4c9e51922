// tree/analysis.cpp — the checks of a tree and its bindings that can be made before a device is
// touched: bindings, data flow, sizes; each node's own checks (tree/nodes/) at the right moment.
#include "tree/analysis.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <cstring>
#include <set>

namespace sinew::detail {
namespace {

// What a leaf writes with out() goes to the host memory its vector is bound to, or to a leaf that
// reads it later (a channel: a later stage, a loop's next iteration, a copy, a reducer). A vector
// with neither would take the result with it at the end of the run, without a word.
void check_outputs_are_kept(const NodeImpl& root, const Analysis& an) {
  std::set<const VectorState*> read;
  visit(root, [&](const NodeImpl& n) {
    if (const VectorState* v = n.extra_vector()) read.insert(v);  // a reducer's input
    if (!n.is_leaf()) return;
    for (const auto& a : n.args) {
      const bool reads = (a.kind == Arg::Kind::partitioned && a.access != Access::write) ||
                         a.kind == Arg::Kind::whole || a.kind == Arg::Kind::halo;
      if (reads && a.vector) read.insert(a.vector.get());
    }
  });
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    if (!n.is_leaf()) return;
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      const Arg& a = n.args[i];
      if (a.kind != Arg::Kind::partitioned || a.access != Access::write) continue;
      if (an.use(a.vector.get()).bound() || read.count(a.vector.get())) continue;
      const std::string& name = a.vector->name;
      fail(errc::invalid_argument, path, n.argument_label(i),
           "vector '" + name + "' is written here, but it is bound to nothing and no leaf of the tree reads it: "
           "what the kernel writes would be dropped",
           "bind '" + name + "' to host memory in run() to receive it, read it in a later stage, or write to a "
           "vector that is bound");
    }
  });
}

// Where each bound vector's binding is in the request's binding list.
using VectorBindings = std::map<const VectorState*, std::size_t>;

// Guarantees: each vector and each result is bound at most once, and every bound vector to
// non-null memory of at least one element of its type. Fills `an.result_bindings`.
VectorBindings check_bindings(const std::vector<Binding>& bindings, Analysis& an) {
  VectorBindings vector_bindings;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const Binding& b = bindings[i];
    if (b.vector) {
      if (!vector_bindings.emplace(b.vector.get(), i).second)
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'", "the vector is bound twice",
             "bind each vector to one host array");
      if (b.data == nullptr && b.elements > 0)
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'", "bound to a null pointer",
             "bind it to valid host memory");
      if (b.elements == 0)
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'",
             "bound to an empty array (0 elements): a tree runs on at least one element of every vector it is given",
             "bind host data with at least one element, or skip the run when there is nothing to compute");
      if (b.vector->type.known() && b.type.known() && !(b.vector->type == b.type))
        fail(errc::invalid_argument, "bindings", "vector '" + b.vector->name + "'",
             "host data of type " + b.type.name + " bound to a vector of " + b.vector->type.name,
             "bind a std::vector<cl_" + b.vector->type.name + ">");
    } else if (b.result) {
      if (!an.result_bindings.emplace(b.result.get(), i).second)
        fail(errc::invalid_argument, "bindings", "result '" + b.result->name + "'", "the result is bound twice",
             "bind each result to one host variable");
    }
  }
  return vector_bindings;
}

// The use of `v` in `an`, added (with its binding, if any) at its first appearance.
VectorUse& use_of(Analysis& an, const VectorBindings& vector_bindings, const std::shared_ptr<VectorState>& v) {
  auto [it, inserted] = an.index.emplace(v.get(), an.vectors.size());
  if (inserted) {
    VectorUse u;
    u.vector = v;
    if (auto b = vector_bindings.find(v.get()); b != vector_bindings.end())
      u.binding = static_cast<std::ptrdiff_t>(b->second);
    an.vectors.push_back(u);
  }
  return an.vectors[it->second];
}

// Guarantees one halo layout per vector: every partition keeps one halo buffer, whichever leaf
// reads it. Records argument `i`'s halo in `u`.
void note_halo_read(VectorUse& u, const Arg& a, std::size_t i, const std::string& path) {
  if (u.read_halo && (u.halo_before != a.halo_before || u.halo_after != a.halo_after || u.boundary != a.boundary ||
                      u.fill != a.bytes))
    fail(errc::invalid_argument, path, "argument " + std::to_string(i) + " (" + a.describe() + ")",
         "vector '" + a.vector->name + "' is read with another halo elsewhere in the tree (" +
             std::to_string(u.halo_before) + " before, " + std::to_string(u.halo_after) +
             " after): every halo of one vector must be the same",
         "declare the same halo (the widest, with one boundary) on every read of '" + a.vector->name + "'");
  u.partitioned = true;
  u.read_halo = true;
  u.halo_before = a.halo_before;
  u.halo_after = a.halo_after;
  u.boundary = a.boundary;
  u.fill = a.bytes;
}

// Records how leaf `n` uses each vector. Guarantees that no leaf writes the slice of a vector it
// also reads whole or with a halo (other partitions would read it while it changes).
void note_leaf_uses(const NodeImpl& n, const std::string& path, Analysis& an, const VectorBindings& vector_bindings) {
  std::set<const VectorState*> read_whole_here, written_here, read_halo_here;
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    const Arg& a = n.args[i];
    if (!a.vector) continue;
    VectorUse& u = use_of(an, vector_bindings, a.vector);
    if (n.assumes_aligned_buffers()) u.aligned = true;
    if (a.kind == Arg::Kind::partitioned) {
      u.partitioned = true;
      if (a.access != Access::write) u.read_partitioned = true;
      if (a.access != Access::read) {
        u.written = true;
        written_here.insert(a.vector.get());
      }
    } else if (a.kind == Arg::Kind::whole) {
      u.read_whole = true;
      read_whole_here.insert(a.vector.get());
    } else if (a.kind == Arg::Kind::halo) {
      note_halo_read(u, a, i, path);
      read_halo_here.insert(a.vector.get());
    }
  }
  for (const VectorState* v : read_halo_here)
    if (written_here.count(v))
      fail(errc::invalid_argument, path, "vector '" + v->name + "'",
           "the same leaf reads the vector with a halo and writes its slice: neighbours would read rows while "
           "they change",
           "write to a second vector (out) and copy it back with sinew::copy in a later stage");
  for (const VectorState* v : read_whole_here)
    if (written_here.count(v))
      fail(errc::invalid_argument, path, "vector '" + v->name + "'",
           "the same leaf reads the vector whole and writes its slice: other devices would read it while it changes",
           "write to a second vector and copy it back with sinew::copy in a later stage");
  if (auto range = n.range()) use_of(an, vector_bindings, range).partitioned = true;  // a kernel's .range_of(v)
}

// Every node's structure checked and its path recorded (returned), every vector the leaves use
// noted in `an` in order of first appearance; `facts` gathers what the nodes produce.
std::shared_ptr<std::map<const NodeImpl*, std::string>> collect_uses(const NodeImpl& root, Analysis& an,
                                                                     const VectorBindings& vector_bindings,
                                                                     StructureFacts& facts) {
  auto paths = std::make_shared<std::map<const NodeImpl*, std::string>>();
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    paths->emplace(&n, path);
    for (const auto& [word, leaf] : n.stand_ins()) paths->emplace(leaf, path + "/" + word);
    n.check_structure(path, facts);
    if (n.is_leaf()) note_leaf_uses(n, path, an, vector_bindings);
  });
  return paths;
}

// Guarantees: every bound result is produced by the tree (a map_reduce node) into a host variable
// of its type, and every bound vector is used by the tree.
void check_bindings_are_used(const Analysis& an, const std::vector<Binding>& bindings,
                             const VectorBindings& vector_bindings, const StructureFacts& facts) {
  for (const auto& [r, at] : an.result_bindings) {
    const Binding* b = &bindings[at];
    if (std::find(facts.produced.begin(), facts.produced.end(), r) == facts.produced.end())
      fail(errc::invalid_argument, "bindings", "result '" + r->name + "'", "the result is not produced by this tree",
           "bind only results written by one of the tree's map_reduce nodes");
    if (b->type.size != r->type.size)
      fail(errc::invalid_argument, "bindings", "result '" + r->name + "'", "host variable of another type",
           "bind a variable of type cl_" + r->type.name);
  }
  for (const auto& [v, b] : vector_bindings)
    if (!an.index.count(v))
      fail(errc::invalid_argument, "bindings", "vector '" + v->name + "'", "the vector is not used by this tree",
           "bind only the tree's vectors (see tree.dump())");
}

// Each vector's elements: a bound vector's are its binding's (which must match a declared size,
// and be writable where the tree writes it), any other's its declared size (0 when none).
void take_bound_sizes(Analysis& an, const std::vector<Binding>& bindings) {
  for (auto& u : an.vectors) {
    const auto& v = *u.vector;
    if (!u.bound()) {
      u.elements = v.size;
      continue;
    }
    const Binding* b = &bindings[static_cast<std::size_t>(u.binding)];
    if (v.size && v.size != b->elements)
      fail(errc::invalid_argument, "bindings", "vector '" + v.name + "'",
           "declared with " + std::to_string(v.size) + " elements but bound to " + std::to_string(b->elements),
           "bind a host array of " + std::to_string(v.size) + " elements, or declare the vector without a size");
    if (b->read_only && u.written)
      fail(errc::invalid_argument, "bindings", "vector '" + v.name + "'",
           "the tree writes this vector but it is bound to const host data", "bind a non-const std::vector or span");
    u.elements = b->elements;
  }
}

// Guarantees every sized partitioned vector holds whole units and as many units as the first such
// vector, whose count becomes the tree's (`an.units`).
void count_common_units(Analysis& an) {
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
               std::to_string(an.units) + " (every partitioned vector of a tree is split at the same unit boundaries)",
           "give '" + u.vector->name + "' a unit of " + std::to_string(u.elements / std::max<std::size_t>(1, an.units)) +
               " elements, or a size of " + std::to_string(an.units * u.vector->unit));
    }
  }
}

// Guarantees every vector has a size (an unsized partitioned one, a channel, is sized like its
// neighbours), every vector the tree reads gets data (bound or written by a leaf), and the tree
// has units.
void size_channels_and_check_data(Analysis& an) {
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
    if ((u.read_partitioned || u.read_whole) && !u.bound() && !u.written)
      fail(errc::invalid_argument, "vector '" + u.vector->name + "'", "data",
           "the tree reads this vector but nothing gives it data: it is not bound and no leaf writes it",
           "bind it to host data in run(), or write it in an earlier stage");
  }
  if (an.units == 0)
    fail(errc::invalid_tree, "tree", "vectors", "the tree has no partitioned vector with elements",
         "bind a non-empty vector to at least one in/out/inout argument");
}

// Guarantees no halo is wider than its vector.
void check_halo_widths(const Analysis& an) {
  for (const auto& u : an.vectors)
    if (u.read_halo && (u.halo_before > u.units || u.halo_after > u.units))
      fail(errc::invalid_argument, "vector '" + u.vector->name + "'", "halo",
           "a halo of " + std::to_string(std::max(u.halo_before, u.halo_after)) + " units is wider than the vector (" +
               std::to_string(u.units) + " units of " + std::to_string(u.vector->unit) + " elements)",
           "read at most " + std::to_string(u.units) + " units on each side, or give the vector more units");
}

// The path of the first node reading `vector` as `kind` ("" when none does).
std::string first_reader(const NodeImpl& root, const std::shared_ptr<VectorState>& vector, Arg::Kind kind) {
  std::string path;
  walk(root, [&](const NodeImpl& n, const std::string& p) {
    for (const auto& a : n.args)
      if (path.empty() && a.kind == kind && a.vector == vector) path = p;
  });
  return path;
}

// Whether the partitions meet while the tree runs (replicas re-synchronised, halos exchanged, a
// node that joins them), with the first reason found in `an.joined`; and the bytes per unit over
// every partitioned vector.
void find_where_partitions_meet(const NodeImpl& root, Analysis& an) {
  for (const auto& u : an.vectors) {
    if (u.read_whole && u.written) {
      if (an.streamable)
        an.joined = {first_reader(root, u.vector, Arg::Kind::whole), "vector '" + u.vector->name + "'",
                     "reads vector '" + u.vector->name + "' whole while the tree writes its slices, so the partitions "
                     "meet to re-synchronise its replicas",
                     "read '" + u.vector->name + "' partitioned or with a halo, or write it in another tree"};
      an.streamable = false;
      an.refreshes_replicas = true;
    }
    if (u.exchanged()) {  // partitions meet to exchange halo units
      if (an.streamable)
        an.joined = {first_reader(root, u.vector, Arg::Kind::halo), "vector '" + u.vector->name + "'",
                     "reads a halo of vector '" + u.vector->name + "', which the tree writes, so the partitions "
                     "exchange halo units as it runs",
                     "read the halo of a vector the tree only reads, e.g. ping-pong between two trees"};
      an.streamable = false;
      an.exchanges_halos = true;
    }
    if (u.partitioned) an.bytes_per_unit += u.vector->unit * u.vector->type.size;
  }
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    if (!n.runs_whole() || !an.whole_range.empty()) return;
    // The reason a dynamic plan is refused with: the leaf the user marked, whatever else joins.
    an.whole_range = path;
    an.joined = {path, "whole_range",
                 "runs whole (whole_range): every partition meets before it, and it runs as one partition on one "
                 "device, its vectors gathered from the partitions and scattered back",
                 "the leaf marked whole_range() runs on the plan's whole=<device>, by default the device with the "
                 "largest share"};
    an.streamable = false;
  });
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    if (!n.joins_partitions()) return;
    if (an.streamable)
      an.joined = {path, std::string(n.kind()),
                   "its partitions meet while it runs (a loop's predicate reads every partition's values each "
                   "iteration; a scan carries each partition's total to the next)",
                   "run it with the static schedule, or move it to a tree of its own"};
    an.streamable = false;
  });
}

}  // namespace

Analysis analyze(const NodeImpl& root, const std::vector<Binding>& bindings) {
  Analysis an;
  const VectorBindings vector_bindings = check_bindings(bindings, an);
  StructureFacts facts;
  auto paths = collect_uses(root, an, vector_bindings, facts);
  check_bindings_are_used(an, bindings, vector_bindings, facts);
  walk(root, [&](const NodeImpl& n, const std::string& path) { n.check_flow(an, path); });
  check_outputs_are_kept(root, an);
  check_value_arguments(root, an);

  take_bound_sizes(an, bindings);
  count_common_units(an);
  size_channels_and_check_data(an);
  walk(root, [&](const NodeImpl& n, const std::string& path) { n.check_shapes(an, path); });

  an.paths = std::move(paths);
  check_halo_widths(an);
  find_where_partitions_meet(root, an);
  an.swap_copies = swap_copies(root, an);
  return an;
}

std::vector<std::pair<std::string, double>> input_features(const NodeImpl& root, const Analysis& an,
                                                           std::optional<double> pinned_fraction,
                                                           const std::set<const VectorState*>& resident) {
  std::vector<std::pair<std::string, double>> features;
  const auto order = vectors_in_order(root);
  for (const auto& u : an.vectors) {
    if (!u.bound()) continue;
    std::string name = u.vector->name;
    if (!u.vector->named) {
      // By position, not by the process-wide counter in the default name: the same tree made by
      // another process, after other vectors, has the same features.
      const auto at = std::find(order.begin(), order.end(), u.vector.get()) - order.begin();
      name = 'v' + std::to_string(at);
    }
    features.emplace_back(name + ".size", static_cast<double>(u.elements));
    if (resident.contains(u.vector.get())) features.emplace_back(name + ".resident", 1.0);
  }
  visit(root, [&](const NodeImpl& n) {
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
      features.emplace_back(a.feature, v);
    }
  });
  if (pinned_fraction) features.emplace_back("host.pinned", *pinned_fraction);
  return features;
}

}  // namespace sinew::detail
