// tree/nodes/kernel.cpp — the kernel leaf: building it, loading its source, checking its
// arguments against the kernel's parsed signature, its NDRange and granularity.
#include "tree/nodes/kernel.hpp"

#include "platform/error.hpp"
#include "platform/hash.hpp"
#include "platform/plan_items.hpp"
#include "tree/analysis.hpp"
#include "tree/source_text.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace sinew {
namespace detail {
namespace {

// The device a leaf marked whole_range() runs on (exec/whole_leaves.hpp), by runtime index.
const PlanItemRegistrar kWholeItem{PlanItem{
    .name = "whole",
    .owner = "a kernel marked whole_range()",
    .accepts = [](const std::string& text) -> std::string {
      return whole_number(text) ? "" : "a runtime device index (0, 1, ...)";
    },
    .fits = [](const std::string& text, std::size_t devices) -> std::string {
      const auto device = whole_number(text);
      return *device < devices ? ""
                               : "whole device " + text + " is not one of the " + std::to_string(devices) + " devices";
    }}};

// A leaf marked whole_range() runs as one partition whose slices are the whole vectors: its
// vectors are in(), out() or inout() (each every unit), never a halo or a replica read whole.
void check_whole_range_arguments(const KernelNode& n, const std::string& path) {
  if (!n.whole_range) return;
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    const Arg& a = n.args[i];
    if (a.kind != Arg::Kind::halo && a.kind != Arg::Kind::whole) continue;
    fail(errc::invalid_argument, path, n.argument_label(i),
         std::string("a leaf marked whole_range() runs as one partition of every unit, so ") +
             (a.kind == Arg::Kind::halo ? "a halo" : "a vector read whole") + " of '" + a.vector->name +
             "' is every unit of it already",
         "pass it as sinew::in('" + a.vector->name + "') (or inout()): the whole-range leaf reads all of it");
  }
}

std::string argument_label_of(std::size_t i, const Arg& a, const std::optional<std::vector<KernelParam>>& params) {
  std::string s = "argument " + std::to_string(i);
  if (params && i < params->size() && !(*params)[i].name.empty()) s += " '" + (*params)[i].name + "'";
  s += " (" + a.describe() + ")";
  return s;
}

bool is_uint_like(const std::string& t) { return t == "uint" || t == "unsigned int" || t == "int" || t == "size_t"; }

// A result passed with sinew::value: a by-value parameter of the result's type, or a read-only
// pointer to one (__global const T*, __constant T*). A struct's size is compared where the
// kernel's source defines it readably.
void check_value_parameter(const KernelNode& n, const std::string& path, const std::string& label, const Arg& a,
                           const KernelParam& p) {
  const ResultState& r = *a.result;
  const std::string spelled = r.type.known() ? r.type.name : "T";
  if (p.address_space == "local" || (p.pointer && p.address_space != "global" && p.address_space != "constant"))
    fail(errc::invalid_argument, path, label,
         "result '" + r.name + "' is passed to a parameter that is neither a value nor a __global or __constant "
         "pointer",
         "declare the parameter as '" + spelled + " " + p.name + "' or '__global const " + spelled + "* " + p.name + "'");
  if (p.pointer && !p.is_const && p.address_space != "constant")
    fail(errc::invalid_argument, path, label,
         "result '" + r.name + "' is read-only, but the kernel's pointer parameter is not const",
         "declare the parameter as '__global const " + spelled + "* " + p.name + "'");
  if (r.type.known() && p.type != r.type.name)
    fail(errc::invalid_argument, path, label,
         "result '" + r.name + "' holds " + r.type.name + " but the kernel parameter is " + p.type +
             (p.pointer ? "*" : ""),
         "declare the parameter with type " + r.type.name + ", or pass a result of type cl_" + p.type);
  if (!r.type.known()) {
    const auto layout = opencl_type_layout(n.source->text, p.type);
    if (layout && layout->size != r.type.size)
      fail(errc::invalid_argument, path, label,
           "result '" + r.name + "' is a struct of " + std::to_string(r.type.size) + " bytes in C++, but '" + p.type +
               "' is " + std::to_string(layout->size) + " bytes in OpenCL C",
           "declare the same members in the same order on both sides (OpenCL C aligns vectors, long and double to "
           "their size)");
  }
}

// The parameter's type as written, and as the compiler sees it where that differs:
// "DATA_TYPE (double as the compiler sees it: typedef double DATA_TYPE)".
std::string spelled(const std::string& written, const TypeNames& names) {
  const std::string resolved = names.resolve(written);
  if (resolved.empty() || resolved == written) return written;
  return written + " (" + resolved + " as the compiler sees it: " + names.how(written) + ")";
}

// Whether an element of type `t` may be given to a parameter of element type `written`, as the
// compiler resolves it: a known type must be that type (a name whose type the check cannot tell,
// defined under an #if or twice differently, is left to the compiler); an opaque one (a C++
// struct) a struct of the source of its size, or any built-in type (a view of its bytes).
bool element_fits(const ElementType& t, const std::string& written, const TypeNames& names, const std::string& source) {
  const std::string resolved = names.resolve(written);
  if (written == "void" || resolved.empty() || resolved == t.name) return true;
  if (t.known()) return false;
  if (opencl_type_layout("", resolved)) return true;
  const auto layout = opencl_type_layout(source, resolved);
  return !layout || layout->size == t.size;
}

// "cl_double" for a type the parameter resolves to, for fixes.
std::string cpp_name(const std::string& written, const TypeNames& names) {
  const std::string resolved = names.resolve(written);
  return "cl_" + (resolved.empty() ? written : resolved);
}

void check_vector_parameter(const KernelNode& n, const std::string& path, const std::string& label, const Arg& a,
                            const KernelParam& p, const TypeNames& names) {
  if (!p.pointer || (p.address_space != "global" && p.address_space != "constant"))
    fail(errc::invalid_argument, path, label,
         "a vector is passed where the kernel expects '" + p.type + (p.pointer ? "*" : "") + "'",
         "pass a vector only to a __global pointer parameter, or give this parameter sinew::scalar(...)");
  const auto& t = a.vector->type;
  if (!element_fits(t, p.type, names, n.source->text))
    fail(errc::invalid_argument, path, label,
         "vector '" + a.vector->name + "' holds " +
             (t.known() ? t.name : "elements of " + std::to_string(t.size) + " bytes (a C++ type OpenCL C cannot name)") +
             " but the kernel parameter is " + spelled(p.type, names) + "*",
         t.known() ? "declare the vector as sinew::vector<" + cpp_name(p.type, names) +
                         "> or change the kernel's parameter type"
                   : "give the vector a C++ type of the parameter's size, or change the kernel's parameter type");
  if (a.access != Access::read && (p.is_const || p.address_space == "constant"))
    fail(errc::invalid_argument, path, label,
         "the kernel declares this parameter read-only but the tree writes vector '" + a.vector->name + "'",
         "use sinew::in(...) for it, or drop const from the kernel parameter");
  // A halo's units beyond the slice are copies of the neighbours' (or boundary values): what
  // the kernel wrote there would go nowhere, and other partitions read the slice meanwhile.
  if (a.kind == Arg::Kind::halo && !p.is_const && p.address_space != "constant")
    fail(errc::invalid_argument, path, label,
         "a halo of vector '" + a.vector->name + "' is read-only, but the kernel parameter is not const",
         "declare the parameter __global const " + p.type + "*, and write results to another vector (out)");
}

// Checks one kernel argument against the parsed parameter.
void check_against_parameter(const KernelNode& n, const std::string& path, std::size_t i, const Arg& a,
                             const KernelParam& p, const TypeNames& names) {
  const std::string label = argument_label_of(i, a, n.params);
  switch (a.kind) {
    case Arg::Kind::partitioned:
    case Arg::Kind::whole:
    case Arg::Kind::halo:
      check_vector_parameter(n, path, label, a, p, names);
      break;
    case Arg::Kind::scalar:
      if (p.pointer || p.address_space == "local" || p.address_space == "global")
        fail(errc::invalid_argument, path, label, "a scalar is passed where the kernel expects a pointer",
             "pass a vector with sinew::in/out/inout/whole, or sinew::local<T>(n) for __local memory");
      if (a.type.known() && !element_fits(a.type, p.type, names, n.source->text))
        fail(errc::invalid_argument, path, label,
             "scalar of type " + a.type.name + " passed to a parameter of type " + spelled(p.type, names),
             "pass sinew::scalar(" + cpp_name(p.type, names) + "(value))");
      break;
    case Arg::Kind::local:
      if (!p.pointer || p.address_space != "local")
        fail(errc::invalid_argument, path, label, "local memory passed to a parameter that is not __local",
             "declare the parameter as __local T*, or pass another kind of argument");
      break;
    case Arg::Kind::value: check_value_parameter(n, path, label, a, p); break;
    case Arg::Kind::iteration:
    case Arg::Kind::offset:
    case Arg::Kind::count:
    case Arg::Kind::size:
      if (p.pointer || !is_uint_like(names.resolve(p.type)))
        fail(errc::invalid_argument, path, label, "this argument is a uint but the kernel parameter is " + p.type,
             "declare the parameter as uint");
      break;
  }
}

KernelNode& kernel_of(const std::shared_ptr<NodeImpl>& impl) { return static_cast<KernelNode&>(*impl); }

Kernel make_kernel(std::shared_ptr<const KernelSource> src, const std::string& entry) {
  if (entry.empty())
    throw_error(errc::invalid_tree, "kernel from '" + src->origin + "' has no entry name",
                {.node = "kernel", .kernel_file = src->origin, .fix = "name the __kernel function to run"});
  auto n = std::make_shared<KernelNode>();
  n->params = parse_kernel_params(src->text, entry);
  n->source = std::move(src);
  n->entry = entry;
  return Kernel(n);
}

}  // namespace

std::string KernelNode::title() const {
  return "kernel '" + (name.empty() ? entry : name) + "'" + (source ? " (" + source->origin + ")" : "");
}

void KernelNode::dump_settings(std::ostream& s) const {
  s << " entry=" << entry;
  if (elements_per_thread != 1) s << " elements_per_thread=" << elements_per_thread;
  if (dims != 1) s << " dims=" << dims << (dim_x ? "(x=" + std::to_string(dim_x) + ")" : "");
  if (!local_size.empty()) {
    s << " local_size=";
    for (std::size_t i = 0; i < local_size.size(); ++i) s << (i ? "x" : "") << local_size[i];
  }
  if (local_multiple) s << " local_multiple=" << local_multiple;
  if (!build_options.empty()) s << " options='" << build_options << "'";
  if (global_indices) s << " global_indices";
  if (whole_range) s << " whole_range";
}

void KernelNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>&) const {
  s << entry << "@" << source->hash << ";ept=" << elements_per_thread << ";dims=" << dims << ";opt=" << build_options
    << ";" << (global_indices ? "global;" : "") << (whole_range ? "whole;" : "");
}

void KernelNode::check_structure(const std::string& path, StructureFacts&) const {
  if (params) {
    if (params->size() != args.size()) fail_argument_count(params->size(), path);
    const TypeNames names(source->text, build_options);
    for (std::size_t i = 0; i < args.size(); ++i) check_against_parameter(*this, path, i, args[i], (*params)[i], names);
  }
  check_global_indices(*this, path);
  check_whole_range_arguments(*this, path);
  bool partitioned = false;
  for (const auto& a : args) partitioned = partitioned || a.kind == Arg::Kind::partitioned || a.kind == Arg::Kind::halo;
  if (range_vector && std::none_of(args.begin(), args.end(), [&](const Arg& a) { return a.vector == range_vector; })) {
    std::string taken;
    for (const auto& a : args)
      if (a.vector && taken.find("'" + a.vector->name + "'") == std::string::npos)
        taken += (taken.empty() ? "'" : ", '") + a.vector->name + "'";
    fail(errc::invalid_argument, path, "range_of",
         "range_of('" + range_vector->name + "') names a vector the kernel does not take: its units would size the "
         "NDRange of a kernel that never sees it",
         taken.empty() ? "pass '" + range_vector->name + "' to the kernel, or drop range_of"
                       : "name one of the kernel's vectors (" + taken + ") in range_of, or pass '" +
                             range_vector->name + "' to the kernel");
  }
  if (!partitioned && !range_vector)
    fail(errc::invalid_argument, path, "arguments", "the kernel has no partitioned vector argument to size its range",
         "pass at least one vector with sinew::in/out/inout, or name one with .range_of(v)");
}

void KernelNode::check_shapes(const Analysis& an, const std::string& path) const {
  auto rv = range();
  const std::size_t unit = rv ? rv->unit : 1;
  const std::size_t ept = elements_per_thread;
  if (dims == 1 && (an.units * unit) % ept)
    fail(errc::invalid_argument, path, "elements_per_thread",
         std::to_string(an.units * unit) + " elements of '" + rv->name + "' are not a multiple of " +
             std::to_string(ept) + " elements per work-item",
         "choose a size that is a multiple of " + std::to_string(ept));
  if (dims >= 2 && (dims == 2 ? unit : dim_x) % ept)
    fail(errc::invalid_argument, path, "elements_per_thread",
         "a row of " + std::to_string(dims == 2 ? unit : dim_x) + " elements is not a multiple of " +
             std::to_string(ept) + " elements per work-item",
         "choose a row length that is a multiple of " + std::to_string(ept));
  if (dims == 3 && unit % dim_x)
    fail(errc::invalid_argument, path, "dims",
         "a unit of " + std::to_string(unit) + " elements is not a whole number of rows of " + std::to_string(dim_x),
         "set dims(3, x) with x dividing the unit");
  if (!local_size.empty()) {
    if (local_size.size() != dims)
      fail(errc::invalid_argument, path, "local_size",
           "local_size has " + std::to_string(local_size.size()) + " dimensions but the range has " +
               std::to_string(dims),
           "give one local size per range dimension");
    auto g = global_range(unit, an.units);
    for (std::size_t d = 0; d < g.size(); ++d)
      if (local_size[d] == 0 || g[d] % local_size[d])
        fail(errc::invalid_argument, path, "local_size",
             "local size " + std::to_string(local_size[d]) + " does not divide the range's dimension " +
                 std::to_string(d) + " (" + std::to_string(g[d]) + ")",
             "choose a local size that divides " + std::to_string(g[d]));
  }
}

void KernelNode::constrain(GranuleRules& rules, const std::vector<DeviceInfo>& devices) const {
  auto rv = range();
  const std::size_t unit = rv ? rv->unit : 1;
  if (dims == 1) {
    // units*unit must be a multiple of ept*local: g = ept*local / gcd(unit, ept*local).
    const std::size_t need = elements_per_thread * (local_size.empty() ? 1 : local_size[0]);
    rules.hard = std::lcm(rules.hard, need / std::gcd(unit, need));
    for (const auto& d : devices) {
      const std::size_t w = elements_per_thread * std::max<std::size_t>(1, d.preferred_work_group_multiple);
      rules.soft = std::lcm(rules.soft, w / std::gcd(unit, w));
    }
  } else if (!local_size.empty()) {
    rules.hard = std::lcm(rules.hard, local_size.back());  // the last dimension counts units
  }
}

void KernelNode::fail_argument_count(std::size_t parameters, const std::string& path, const std::string& device) const {
  throw_error(errc::invalid_argument,
              "the kernel '" + entry + "' has " + std::to_string(parameters) + " parameters but " +
                  std::to_string(args.size()) + " arguments were given",
              {.node = path, .argument = "arguments", .device = device,
               .fix = "give .args(...) one argument per kernel parameter, in order"});
}

void KernelNode::check_parameter(const std::string& path, std::size_t i, const Arg& a) const {
  if (params && i < params->size())
    detail::check_against_parameter(*this, path, i, a, (*params)[i], TypeNames(source->text, build_options));
}

std::shared_ptr<VectorState> KernelNode::range() const { return range_vector ? range_vector : NodeImpl::range(); }

std::string KernelNode::argument_label(std::size_t i) const { return argument_label_of(i, args.at(i), params); }

std::vector<std::size_t> KernelNode::global_range(std::size_t unit, std::size_t units) const {
  const std::size_t ept = elements_per_thread;
  switch (dims) {
    case 1: return {units * unit / ept};
    case 2: return {unit / ept, units};
    default: return {dim_x / ept, unit / dim_x, units};
  }
}

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

using detail::kernel_of;

Kernel kernel(const std::string& file, const std::string& entry) {
  return detail::make_kernel(detail::load_kernel_source(file), entry);
}

Kernel kernel_source(const std::string& source, const std::string& entry, const std::string& origin) {
  auto src = std::make_shared<detail::KernelSource>();
  src->text = source;
  src->origin = origin;
  src->hash = detail::hash_hex(source);
  return detail::make_kernel(std::move(src), entry);
}

Kernel& Kernel::args(std::vector<Arg> a) {
  impl_->args = std::move(a);
  impl_->changed();
  return *this;
}
Kernel& Kernel::elements_per_thread(std::size_t n) {
  if (n == 0)
    detail::throw_error(errc::invalid_argument, "elements_per_thread(0)",
                        {.node = impl_->title(), .fix = "each work-item computes at least 1 element"});
  kernel_of(impl_).elements_per_thread = n;
  impl_->changed();
  return *this;
}
Kernel& Kernel::dims(unsigned n, std::size_t x) {
  if (n < 1 || n > 3 || (n == 3 && x == 0))
    detail::throw_error(errc::invalid_argument, "dims(" + std::to_string(n) + ", " + std::to_string(x) + ")",
                        {.node = impl_->title(),
                         .fix = "use dims(1), dims(2) or dims(3, x) with x the row length of one unit's plane"});
  kernel_of(impl_).dims = n;
  kernel_of(impl_).dim_x = x;
  impl_->changed();
  return *this;
}
Kernel& Kernel::range_of(const VectorRef& v) {
  kernel_of(impl_).range_vector = detail::VectorAccess::get(v);
  impl_->changed();
  return *this;
}
Kernel& Kernel::local_size(std::vector<std::size_t> sizes) {
  kernel_of(impl_).local_size = std::move(sizes);
  impl_->changed();
  return *this;
}
Kernel& Kernel::local_multiple(std::size_t n) {
  kernel_of(impl_).local_multiple = n;
  impl_->changed();
  return *this;
}
Kernel& Kernel::build_options(std::string options) {
  kernel_of(impl_).build_options = std::move(options);
  impl_->changed();
  return *this;
}
Kernel& Kernel::global_indices() {
  auto& n = kernel_of(impl_);
  n.global_indices = true;
  detail::make_global_index_source(n);
  impl_->changed();
  return *this;
}
Kernel& Kernel::whole_range() {
  kernel_of(impl_).whole_range = true;
  impl_->changed();
  return *this;
}
Kernel& Kernel::label(std::string text) { return name(std::move(text)); }
Kernel& Kernel::name(std::string text) {
  Node::name(std::move(text));
  return *this;
}

}  // namespace sinew
