// tree/nodes/kernel.hpp — the kernel leaf: an OpenCL C kernel, its interface and its NDRange.
#pragma once

#include "tree/node.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

// OpenCL C source of a kernel leaf, with where it came from.
struct KernelSource {
  std::string text;
  std::string origin;  // the path or embedded file name
  std::string hash;
};

// One parameter of an OpenCL C kernel, as parsed from its source.
struct KernelParam {
  std::string name;
  std::string address_space;  // "global", "local", "constant" or "" (private)
  std::string type;           // base type without qualifiers, e.g. "float", "uchar4"
  bool pointer = false;
  bool is_const = false;
  bool const_pointer = false;  // `T* const p`: the pointer itself cannot be changed
};

class KernelNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "kernel"; }
  bool is_leaf() const override { return true; }
  std::string title() const override;
  std::string short_label() const override { return name.empty() ? entry : name; }
  void dump_settings(std::ostream& s) const override;
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_shapes(const Analysis& an, const std::string& path) const override;
  void constrain(GranuleRules& rules, const std::vector<DeviceInfo>& devices) const override;
  std::shared_ptr<VectorState> range() const override;
  bool runs_whole() const override { return whole_range; }
  std::string argument_label(std::size_t i) const override;  // "argument 1 'y' (out 'y')"

  std::shared_ptr<const KernelSource> source;
  std::string entry;
  std::size_t elements_per_thread = 1;
  unsigned dims = 1;
  std::size_t dim_x = 0;
  std::shared_ptr<VectorState> range_vector;
  std::vector<std::size_t> local_size;
  std::size_t local_multiple = 0;
  std::string build_options;
  std::optional<std::vector<KernelParam>> params;  // parsed signature, when the parser found it
  // Kernel::global_indices: launched at each partition's global work offset, from
  // `launched_source` (the source with one `long` origin parameter appended per pointer
  // parameter listed in `origin_parameters`, tree/global_indices.cpp); null where the kernel's
  // definition was not found (the tree check refuses it).
  bool global_indices = false;
  bool whole_range = false;  // Kernel::whole_range
  std::shared_ptr<const KernelSource> launched_source;
  std::vector<std::size_t> origin_parameters;

  // The source the devices build: launched_source under global indices, else the user's.
  const std::shared_ptr<const KernelSource>& built_source() const {
    return global_indices ? launched_source : source;
  }
  // Parameters of the built kernel: the arguments and, under global indices, the origins.
  std::size_t launched_parameters() const {
    return args.size() + (global_indices ? origin_parameters.size() : 0);
  }

  // The NDRange over `units` units of `unit` elements of the range vector:
  // dims 1: {units*unit/ept}; dims 2: {unit/ept, units}; dims 3: {x/ept, unit/x, units}.
  // The decomposer and the executor compute it the same way through this function.
  std::vector<std::size_t> global_range(std::size_t unit, std::size_t units) const;

  // Throws the error for a kernel of `parameters` parameters (parsed from its source before any
  // device work, or counted by the driver on `device`) given another number of arguments.
  // Checks parameter i of the parsed signature (if parsed) against the argument `a` meant for it:
  // for skeletons that pass a kernel's arguments themselves (sinew::divide_and_conquer).
  void check_parameter(const std::string& path, std::size_t i, const Arg& a) const;

  [[noreturn]] void fail_argument_count(std::size_t parameters, const std::string& path,
                                        const std::string& device = "") const;
};

// Kernel::global_indices' source and checks (tree/global_indices.cpp).
void make_global_index_source(KernelNode& n);
void check_global_indices(const KernelNode& n, const std::string& path);
// Whether a leaf of the tree under `root` is written for the whole range and its launched source
// moves a pointer: on a discrete device each of its partitions but the one at the range's first
// unit runs that kernel, which costs device time the user's own does not (docs/decisions/167).
bool moves_pointers_off_the_start(const NodeImpl& root);

// Loads a .cl file: a path first, else a file embedded from kernels/. Throws errc::io.
std::shared_ptr<const KernelSource> load_kernel_source(const std::string& file);
// Parses the parameters of kernel `entry` from OpenCL C source; nullopt if it cannot be found
// (e.g. the kernel is produced by a macro).
std::optional<std::vector<KernelParam>> parse_kernel_params(const std::string& source, const std::string& entry);

const std::map<std::string, const char*>& embedded_kernels();  // generated at build time

}  // namespace sinew::detail
