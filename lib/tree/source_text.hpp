// tree/source_text.hpp — the small OpenCL C reader behind the checks made before device work:
// comments removed, tokens, one parameter's declaration (tree/parse.cpp), and the element type
// of a user reduction (tree/reduce_type.cpp).
#pragma once

#include "tree/nodes/kernel.hpp"

#include <cstddef>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

std::string strip_comments(const std::string& s);
// The source with every comment's characters but its line breaks made spaces: the same length, so
// a position in it is the same position in the source.
std::string blank_comments(const std::string& s);
bool is_identifier_char(char c);
// Identifiers and numbers as one token each, every other non-space character alone.
std::vector<std::string> tokens(const std::string& s);
// One parameter's declaration ("__global const float* x") read into its parts.
KernelParam parse_param(const std::string& text);
// A parameter list's text (between the parentheses) read parameter by parameter; "void" is none.
std::vector<KernelParam> parse_param_list(const std::string& list);

// Where kernel `entry` is defined in `source`: its parameter list's parentheses and its body's
// opening brace (npos for a prototype), as positions in the source. Empty when the kernel cannot be
// found (it is produced by a macro).
struct KernelDefinition {
  std::size_t open = 0, close = 0, body = 0;
};
std::optional<KernelDefinition> locate_kernel(const std::string& source, const std::string& entry);

// The type names a kernel source defines, as the compiler sees them (tree/type_names.cpp): the
// build options' -D macros, the source's object-like #defines (under the #ifdef / #ifndef branches
// the options select) and its typedefs of scalar and vector types.
class TypeNames {
 public:
  TypeNames(const std::string& source, const std::string& build_options);
  // The type `written` names, followed through macros and typedefs ("DATA_TYPE" -> "float");
  // `written` itself when it names nothing defined; empty when that cannot be told (defined under
  // an #if, or differently twice).
  std::string resolve(const std::string& written) const;
  // How `written` was resolved, for messages: "typedef float DATA_TYPE", "-DREAL=double"; empty
  // when it names nothing defined.
  std::string how(const std::string& written) const;

 private:
  void read_source(const std::string& source);
  void read_typedefs(const std::vector<std::string>& tokens, bool certain);
  void define(std::map<std::string, std::string>& table, const std::string& name, const std::string& value,
              bool certain);
  std::map<std::string, std::string> macros_, typedefs_;
  std::set<std::string> given_;      // macros of the build options
  std::set<std::string> ambiguous_;  // names whose type cannot be told before the compiler
};

// The parameters of the function `function` *defined* in `source` (a prototype or a call is not a
// definition). Empty when no definition is found (a macro, a misspelling).
std::optional<std::vector<KernelParam>> function_params(const std::string& source, const std::string& function);

// The type of the first parameter of the function `function` *defined* in `source` (a prototype or
// a call is not a definition): for a reducer `T f(T a, T b)`, its element type T as written
// ("hist", "struct hist", "float2"). Empty when no definition is found (a macro, a misspelling).
std::string first_param_type(const std::string& source, const std::string& function);

// Size and alignment of a type under OpenCL C's rules (scalars and vectors aligned to their size,
// 3-lane vectors as 4, structs padded to their widest member), for the struct types `source`
// defines ("struct tag" or a typedef name) and the built-in ones. Empty when the definition
// cannot be read exactly (attributes, macros as array bounds, unknown member types): the kernel's
// compile-time size check is then the only one.
struct TypeLayout {
  std::size_t size = 0, align = 1;
};
std::optional<TypeLayout> opencl_type_layout(const std::string& source, const std::string& type);

}  // namespace sinew::detail
