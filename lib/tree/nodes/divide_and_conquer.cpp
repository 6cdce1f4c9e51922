// tree/nodes/divide_and_conquer.cpp — building divide-and-conquer leaves and checking them: the
// settings, the vector, and the two kernels' parameters against what the skeleton passes them.
#include "tree/nodes/divide_and_conquer.hpp"

#include "platform/plan_items.hpp"
#include "tree/analysis.hpp"

#include <cstdint>
#include <limits>
#include <numeric>

namespace sinew {
namespace detail {

namespace {
const PlanItemRegistrar kCrossoverItem{PlanItem{
    .name = "crossover",
    .owner = "divide and conquer",
    .accepts = [](const std::string& text) -> std::string {
      const auto level = whole_number(text);
      if (level && *level <= kMaxCrossover) return "";
      // Appended, not `literal + std::to_string(...)`: GCC 12's -Warray-bounds misfires on that
      // once inlined here with the other sources of its unity batch.
      std::string why = "a level from 0 to ";
      return why.append(std::to_string(kMaxCrossover));
    }}};
const PlanItemRegistrar kUpperItem{PlanItem{
    .name = "upper",
    .owner = "divide and conquer",
    .accepts = [](const std::string& text) -> std::string {
      return whole_number(text) ? "" : "a runtime device index (0, 1, ...)";
    },
    .fits = [](const std::string& text, std::size_t devices) -> std::string {
      const auto device = whole_number(text);
      return *device < devices ? ""
                               : "upper device " + text + " is not one of the " + std::to_string(devices) + " devices";
    }}};
}  // namespace

std::optional<unsigned> crossover_item(const Config& plan) {
  const auto level = whole_item(plan, "crossover");
  return level ? std::optional<unsigned>(static_cast<unsigned>(*level)) : std::nullopt;
}

std::optional<std::size_t> upper_item(const Config& plan) {
  const auto device = whole_item(plan, "upper");
  return device ? std::optional<std::size_t>(static_cast<std::size_t>(*device)) : std::nullopt;
}

void set_crossover_item(Config& plan, unsigned level) { plan.items.insert_or_assign("crossover", std::to_string(level)); }
void set_upper_item(Config& plan, std::size_t device) { plan.items.insert_or_assign("upper", std::to_string(device)); }

std::size_t DivideAndConquerNode::subproblem(std::size_t level) const {
  std::size_t s = settings.leaf_size;
  for (std::size_t l = 0; l < level; ++l) {
    if (s > std::numeric_limits<std::uint32_t>::max()) return s;  // beyond any vector it runs on
    s *= settings.fanout;
  }
  return s;
}

std::size_t DivideAndConquerNode::levels(std::size_t n) const {
  std::size_t levels = 1;
  while (subproblem(levels - 1) < n) ++levels;
  return levels;
}

std::size_t DivideAndConquerNode::crossover(const Config& plan, std::size_t levels) {
  return std::min<std::size_t>(crossover_item(plan).value_or(0), levels);
}

std::size_t DivideAndConquerNode::plan_granule(const Config& plan) const {
  // The levels below the crossover run on each device's part alone: it must hold whole
  // subproblems of the highest of them. (A granule beyond the vector puts it on one device.)
  const std::size_t c = crossover_item(plan).value_or(0);
  return c <= 1 ? settings.leaf_size : subproblem(c - 1);
}

NodeImpl::LevelShape DivideAndConquerNode::level_shape(const Analysis& an) const {
  LevelShape shape{.units = an.use(&vector()).elements, .subproblem_units = {}};
  for (std::size_t l = 0; l < levels(shape.units); ++l) shape.subproblem_units.push_back(subproblem(l));
  return shape;
}

void DivideAndConquerNode::constrain(GranuleRules& rules, const std::vector<DeviceInfo>&) const {
  rules.hard = std::lcm(rules.hard, settings.leaf_size);
}

std::string DivideAndConquerNode::short_label() const {
  return "divide_and_conquer(" + leaf->short_label() + ", " + combine->short_label() + ")";
}

void DivideAndConquerNode::dump_settings(std::ostream& s) const {
  s << " leaf=" << leaf->entry << " combine=" << combine->entry << " (" << leaf->source->origin
    << ") fanout=" << settings.fanout << " leaf_size=" << settings.leaf_size;
}

void DivideAndConquerNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const {
  s << "dc;k=" << settings.fanout << ";leaf=" << settings.leaf_size << ";";
  leaf->sign(s, id);
  combine->sign(s, id);
}

void DivideAndConquerNode::check_structure(const std::string& path, StructureFacts&) const {
  const VectorState& v = vector();
  if (settings.fanout < 2)
    fail(errc::invalid_argument, path, "fanout",
         "a divide-and-conquer fan-out of " + std::to_string(settings.fanout) +
             " merges fewer than two subproblems: the levels would never end",
         "give a fan-out k >= 2 (2 for a binary mergesort)");
  if (settings.leaf_size < 1)
    fail(errc::invalid_argument, path, "leaf_size", "a leaf of 0 elements solves nothing",
         "give a leaf size of at least 1 element (e.g. 4096)");
  if (v.unit != 1)
    fail(errc::invalid_argument, path, "vector '" + v.name + "'",
         "divide and conquer works on elements, but the vector has units of " + std::to_string(v.unit),
         "use a vector of unit 1 (the default)");
  if (!v.type.known())
    fail(errc::invalid_argument, path, "vector '" + v.name + "'",
         "the kernels are built with SINEW_T as the element type, which needs an OpenCL type; the vector's type is "
         "opaque to Sinew",
         "use a vector of an OpenCL C type (uint, float, int2, ...)");
  // The kernels' parameters against what the skeleton passes (when the parser found them).
  auto check = [&](const KernelNode& k, const char* role, const std::vector<Arg>& passed, std::size_t optional,
                   const char* signature) {
    const std::string where = path + "/" + role + ":" + k.title();
    if (!k.args.empty())
      fail(errc::invalid_argument, where, "arguments",
           "the " + std::string(role) + " kernel was given " + std::to_string(k.args.size()) +
               " arguments, but divide_and_conquer passes them itself",
           std::string("drop .args(...); the kernel's parameters must be ") + signature);
    if (!k.params) return;
    const std::size_t count = k.params->size();
    if (count != passed.size() && count != passed.size() - optional)
      fail(errc::invalid_argument, where, "parameters",
           "the " + std::string(role) + " kernel '" + k.entry + "' has " + std::to_string(count) +
               " parameters, not the skeleton's " + std::to_string(passed.size() - optional) +
               (optional ? " or " + std::to_string(passed.size()) : std::string()),
           std::string("declare it as ") + signature);
    for (std::size_t i = 0; i < count; ++i) {
      const KernelParam& p = (*k.params)[i];
      // SINEW_T is the element type's own name once the macro is defined.
      if (p.type == "SINEW_T" && passed[i].vector) continue;
      k.check_parameter(where, i, passed[i]);
    }
  };
  Arg n_arg;  // uint n: the elements of the part
  n_arg.kind = Arg::Kind::count;
  n_arg.vector = args.front().vector;
  const Arg uint_arg = scalar(std::uint32_t{0});
  Arg scratch;
  scratch.kind = Arg::Kind::local;
  scratch.type = v.type;
  check(*leaf, "leaf", {args.front(), n_arg, uint_arg, scratch}, 1,
        "__kernel void leaf(__global T* data, uint n, uint leaf_size [, __local T* scratch])");
  Arg src = args.front(), dst = args.front();
  src.access = Access::read;
  dst.access = Access::write;
  check(*combine, "combine", {src, dst, n_arg, uint_arg, uint_arg}, 0,
        "__kernel void combine(__global const T* src, __global T* dst, uint n, uint run, uint fanout)");
  // The skeleton hands the combine a level's solved runs to read: a src it may write (in place of
  // dst, or as scratch) is a kernel that relies on what the skeleton does not promise.
  if (combine->params && !combine->params->empty()) {
    const KernelParam& p = combine->params->front();
    if (p.pointer && !p.is_const && p.address_space != "constant")
      fail(errc::invalid_argument, path + "/combine:" + combine->title(),
           "argument 0" + (p.name.empty() ? std::string() : " '" + p.name + "'"),
           "the combine kernel's source parameter is not const, but the skeleton passes it the runs to read only",
           "declare it __global const " + p.type + "* " + (p.name.empty() ? "src" : p.name));
  }
}

void DivideAndConquerNode::check_shapes(const Analysis& an, const std::string& path) const {
  // The kernels index with 32-bit unsigned integers, and a combine's group of runs may reach past
  // the end: half the range keeps every index from wrapping.
  const std::size_t elements = an.use(&vector()).elements;
  if (elements > std::numeric_limits<std::int32_t>::max())
    fail(errc::invalid_argument, path, "vector '" + vector().name + "'",
         "divide and conquer handles up to 2147483647 elements, not " + std::to_string(elements),
         "split the vector into parts of at most 2^31 - 1 elements");
}

}  // namespace detail

Node divide_and_conquer(const VectorRef& v, const Kernel& leaf, const Kernel& combine,
                        DivideAndConquerSettings settings) {
  auto n = std::make_shared<detail::DivideAndConquerNode>();
  n->args = {inout(v)};
  n->leaf = std::static_pointer_cast<const detail::KernelNode>(detail::impl_of(leaf, "divide_and_conquer leaf"));
  n->combine = std::static_pointer_cast<const detail::KernelNode>(detail::impl_of(combine, "divide_and_conquer combine"));
  n->settings = settings;
  return Node(n);
}

}  // namespace sinew
