// tree/global_indices.cpp — a kernel written for the whole range (Kernel::global_indices): the
// source it is launched from, and the checks it needs before any device work.
//
// Each partition is launched at the global work offset of its first unit, so get_global_id() is a
// position in the whole range. Its buffers stay what they are for any leaf (a slice, a halo
// buffer, a replica, or the user's memory on a zero-copy device: nothing is allocated beyond
// them, docs/decisions/100); the kernel sees each one at its place in the whole vector: its
// entry gets one `long` parameter per __global or __constant pointer, the element index of the
// buffer's first element in the whole vector, and its body starts by moving the pointer back by
// that many elements. An index that the kernel computes from its global position then lands on
// the same element in every partition, its halo units included.
#include "tree/nodes/kernel.hpp"
#include "tree/source_text.hpp"

#include "platform/hash.hpp"

namespace sinew::detail {
namespace {

// A pointer that can be moved: one to elements of a type (not void) that is not itself const.
bool takes_origin(const KernelParam& p) {
  return p.pointer && (p.address_space == "global" || p.address_space == "constant") && p.type != "void" &&
         !p.const_pointer;
}

}  // namespace

void make_global_index_source(KernelNode& n) {
  n.launched_source.reset();
  n.origin_parameters.clear();
  if (!n.params) return;
  const auto at = locate_kernel(n.source->text, n.entry);
  if (!at || at->body == std::string::npos) return;
  std::string parameters, moves;
  for (std::size_t i = 0; i < n.params->size(); ++i) {
    const KernelParam& p = (*n.params)[i];
    if (!takes_origin(p)) continue;
    const std::string origin = "sinew_origin_" + std::to_string(n.origin_parameters.size());
    parameters += ", long " + origin;
    if (!p.name.empty()) moves += " " + p.name + " -= " + origin + ";";
    n.origin_parameters.push_back(i);
  }
  // Inserted on the lines they join, so the driver's build log names the user's lines.
  std::string text = n.source->text;
  text.insert(at->body + 1, moves);
  text.insert(at->close, parameters);
  auto launched = std::make_shared<KernelSource>();
  launched->text = std::move(text);
  launched->origin = n.source->origin;
  launched->hash = hash_hex(launched->text);
  n.launched_source = std::move(launched);
}

void check_global_indices(const KernelNode& n, const std::string& path) {
  if (!n.global_indices) return;
  if (!n.launched_source)
    fail(errc::invalid_argument, path, "global_indices",
         "the definition of kernel '" + n.entry + "' was not found in " + n.source->origin +
             " (a kernel made by a macro, or only declared): its pointers cannot be presented at their global "
             "positions",
         "define the kernel in the source as `__kernel void " + n.entry + "(...) { ... }`, or index by slices "
         "(drop global_indices and pass sinew::offset(v))");
  // A slice or a halo buffer must be moved; a replica is the whole vector already.
  for (std::size_t i = 0; i < n.args.size() && i < n.params->size(); ++i) {
    const Arg& a = n.args[i];
    const KernelParam& p = (*n.params)[i];
    if ((a.kind != Arg::Kind::partitioned && a.kind != Arg::Kind::halo) || takes_origin(p) || !p.pointer) continue;
    if (p.type == "void")
      fail(errc::invalid_argument, path, n.argument_label(i),
           "a void* parameter cannot be moved to its global position (its elements have no size)",
           "declare the parameter with its element type, e.g. __global " +
               (a.vector->type.known() ? a.vector->type.name : std::string("T")) + "*");
    if (p.const_pointer)
      fail(errc::invalid_argument, path, n.argument_label(i),
           "the pointer itself is const (`" + p.type + "* const " + p.name + "`), so it cannot be moved to its global "
           "position",
           "drop the const after '*' (the data may stay const: `const " + p.type + "* " + p.name + "`)");
  }
}

bool moves_pointers_off_the_start(const NodeImpl& root) {
  bool moves = false;
  visit(root, [&](const NodeImpl& n) {
    const auto* k = dynamic_cast<const KernelNode*>(&n);
    moves = moves || (k && k->global_indices && !k->origin_parameters.empty());
  });
  return moves;
}

}  // namespace sinew::detail
