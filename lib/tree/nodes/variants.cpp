// tree/nodes/variants.cpp — building per-device kernel variants and checking that every variant
// reads and writes what the fallback does (see variants.hpp).
#include "tree/nodes/variants.hpp"

#include "platform/error.hpp"
#include "tree/nodes/copy.hpp"

#include <algorithm>

namespace sinew {
namespace detail {
namespace {

// What moves data between the host and the devices: the arguments every variant must share.
bool carries_data(const Arg& a) {
  return a.kind == Arg::Kind::partitioned || a.kind == Arg::Kind::whole || a.kind == Arg::Kind::halo;
}

std::vector<std::size_t> data_arguments(const NodeImpl& n) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n.args.size(); ++i)
    if (carries_data(n.args[i])) out.push_back(i);
  return out;
}

bool same_data(const Arg& a, const Arg& b) {
  return a.vector == b.vector && a.kind == b.kind && a.access == b.access && a.halo_before == b.halo_before &&
         a.halo_after == b.halo_after && a.boundary == b.boundary && a.bytes == b.bytes;
}

std::string variant_label(const std::string& word, const NodeImpl& leaf) { return word + ": " + leaf.title(); }

// Guarantees: `leaf` runs on its own partitions as a leaf of its own would, so that it may stand
// for the fallback on some devices.
void check_runs_alone(const std::string& path, const std::string& label, const NodeImpl& leaf, const NodeImpl& fallback) {
  if (!leaf.is_leaf() || dynamic_cast<const VariantsNode*>(&leaf) || dynamic_cast<const CopyNode*>(&leaf) ||
      leaf.joins_partitions())
    fail(errc::invalid_tree, path, label,
         "a variant must be a kernel or library leaf that runs on its own partitions, not " + leaf.title(),
         "give sinew::variants kernel, blas or fft leaves");
  if (leaf.runs_whole() != fallback.runs_whole())
    fail(errc::invalid_tree, path, label,
         std::string("the variant ") + (leaf.runs_whole() ? "runs whole (whole_range) and the fallback does not"
                                                          : "runs partitioned and the fallback runs whole (whole_range)"),
         "mark every variant whole_range, or none");
}

// Guarantees: the variant reads and writes the fallback's vectors, in its order, with its access;
// whatever else it names of a vector (offset, count, size) is of one of them; it takes no value.
void check_same_data(const std::string& path, const std::string& label, const NodeImpl& leaf, const NodeImpl& fallback) {
  const std::vector<std::size_t> want = data_arguments(fallback), have = data_arguments(leaf);
  for (std::size_t j = 0; j < std::max(want.size(), have.size()); ++j) {
    if (j < want.size() && j < have.size() && same_data(fallback.args[want[j]], leaf.args[have[j]])) continue;
    const std::string expected =
        j < want.size() ? fallback.args[want[j]].describe() + " as the fallback's " + fallback.argument_label(want[j])
                        : "nothing more (the fallback moves " + std::to_string(want.size()) + " vector(s))";
    fail(errc::invalid_argument, path,
         label + ": " + (j < have.size() ? leaf.argument_label(have[j]) : "argument list"),
         "the variant's vector argument " + std::to_string(j) + " is " +
             (j < have.size() ? leaf.args[have[j]].describe() : std::string("missing")) + " but must be " + expected +
             ": every variant reads and writes the same vectors, in the same order, with the same access",
         "give the variant the fallback's vector arguments (scalars, local memory, offset/count/size may differ)");
  }
  for (std::size_t i = 0; i < leaf.args.size(); ++i) {
    const Arg& a = leaf.args[i];
    if (a.kind == Arg::Kind::value)
      fail(errc::invalid_argument, path, label + ": " + leaf.argument_label(i),
           "a variant takes no result as an argument (sinew::value)",
           "pass the result to a kernel of its own, outside sinew::variants");
    if (a.vector && !carries_data(a) &&
        std::none_of(want.begin(), want.end(), [&](std::size_t w) { return fallback.args[w].vector == a.vector; }))
      fail(errc::invalid_argument, path, label + ": " + leaf.argument_label(i),
           "names vector '" + a.vector->name + "', which the fallback neither reads nor writes",
           "name one of the fallback's vectors");
  }
  if (leaf.range() != fallback.range())
    fail(errc::invalid_argument, path, label + ": range",
         "the variant's range is sized by vector '" + (leaf.range() ? leaf.range()->name : std::string("?")) +
             "', the fallback's by '" + (fallback.range() ? fallback.range()->name : std::string("?")) + "'",
         "size every variant's range by the same vector (Kernel::range_of)");
}

std::string word_for(DeviceKind kind) { return std::string("variant ") + to_string(kind); }

}  // namespace

std::string VariantsNode::title() const {
  return name.empty() ? "variants of " + fallback->title() : "variants '" + name + "'";
}

std::vector<std::pair<std::string, const NodeImpl*>> VariantsNode::stand_ins() const {
  std::vector<std::pair<std::string, const NodeImpl*>> out{{"default: " + fallback->title(), fallback.get()}};
  for (const auto& [kind, leaf] : by_kind) out.emplace_back(variant_label(word_for(kind), *leaf), leaf.get());
  return out;
}

const NodeImpl& VariantsNode::leaf_for(DeviceKind kind) const {
  for (const auto& [k, leaf] : by_kind)
    if (k == kind) return *leaf;
  return *fallback;
}

void VariantsNode::dump_settings(std::ostream& s) const {
  s << " default=" << fallback->title();
  for (const auto& [kind, leaf] : by_kind) s << " " << to_string(kind) << "=" << leaf->title();
}

void VariantsNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const {
  (void)id;  // every variant's vectors are the fallback's, which the node's own arguments sign
  s << "default:" << Node(fallback).signature() << ";";
  for (const auto& [kind, leaf] : by_kind) s << word_for(kind) << ":" << Node(leaf).signature() << ";";
}

void VariantsNode::check_structure(const std::string& path, StructureFacts& facts) const {
  check_runs_alone(path, "default: " + fallback->title(), *fallback, *fallback);
  for (const auto& [kind, leaf] : by_kind) {
    const std::string label = variant_label(word_for(kind), *leaf);
    check_runs_alone(path, label, *leaf, *fallback);
    check_same_data(path, label, *leaf, *fallback);
  }
  for (const auto& [word, leaf] : stand_ins()) leaf->check_structure(path + "/" + word, facts);
}

void VariantsNode::check_flow(const Analysis& an, const std::string& path) const {
  for (const auto& [word, leaf] : stand_ins()) leaf->check_flow(an, path + "/" + word);
}

void VariantsNode::check_shapes(const Analysis& an, const std::string& path) const {
  for (const auto& [word, leaf] : stand_ins()) leaf->check_shapes(an, path + "/" + word);
}

void VariantsNode::constrain(GranuleRules& rules, const std::vector<DeviceInfo>& devices) const {
  for (const auto& [word, leaf] : stand_ins()) leaf->constrain(rules, devices);
}

bool VariantsNode::assumes_aligned_buffers() const {
  const auto all = stand_ins();
  return std::any_of(all.begin(), all.end(), [](const auto& s) { return s.second->assumes_aligned_buffers(); });
}

const VectorState* VariantsNode::library_scratch() const {
  const VectorState* largest = nullptr;
  for (const auto& [word, leaf] : stand_ins())
    if (const VectorState* v = leaf->library_scratch(); v && (!largest || v->unit * v->type.size > largest->unit * largest->type.size))
      largest = v;
  return largest;
}

}  // namespace detail

Node variants(Node fallback, std::vector<Variant> by_kind) {
  auto n = std::make_shared<detail::VariantsNode>();
  n->fallback = detail::impl_of(fallback, "variants");
  n->args = n->fallback->args;
  for (const Variant& v : by_kind) {
    auto leaf = detail::impl_of(v.leaf, "variants");
    if (std::any_of(n->by_kind.begin(), n->by_kind.end(), [&](const auto& k) { return k.first == v.kind; }))
      detail::throw_error(errc::invalid_argument,
                          std::string("two variants for ") + to_string(v.kind) + " devices",
                          {.node = "variants(" + n->fallback->title() + ")", .argument = to_string(v.kind),
                           .fix = "give each device kind one variant"});
    n->by_kind.emplace_back(v.kind, std::move(leaf));
  }
  return Node(n);
}

}  // namespace sinew
