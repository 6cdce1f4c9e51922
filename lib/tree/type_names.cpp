// tree/type_names.cpp — a kernel parameter's type as the compiler sees it: the `-D` macros of the
// build options, the source's own `#define`s and `typedef`s followed to the type they name, so
// that `typedef float DATA_TYPE; __global DATA_TYPE* a` is checked as a float*.
//
// The source is read line by line with its conditionals (#ifdef, #ifndef, #else, #endif) taken as
// the build options decide them; an `#if` expression is not evaluated, so a name defined under
// one (or defined twice differently) is ambiguous and left unchecked rather than refused.
#include "tree/source_text.hpp"

#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace sinew::detail {
namespace {

enum class Region { active, inactive, unknown };

// "unsigned int" -> "uint": the spelling ElementType and the parser use.
std::string canonical_type(const std::vector<std::string>& words) {
  std::string t;
  for (const auto& w : words) {
    if (w == "const" || w == "__const" || w == "volatile") continue;
    t += (t.empty() ? "" : " ") + w;
  }
  if (t == "unsigned int" || t == "unsigned") return "uint";
  if (t == "unsigned char") return "uchar";
  if (t == "unsigned short") return "ushort";
  if (t == "unsigned long") return "ulong";
  return t;
}

// The source's logical lines: comments blanked, continuations joined.
std::vector<std::string> logical_lines(const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(blank_comments(source));
  std::string line, joined;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    lines.push_back(joined + line);
    joined.clear();
  }
  if (!joined.empty()) lines.push_back(joined);
  return lines;
}

}  // namespace

TypeNames::TypeNames(const std::string& source, const std::string& build_options) {
  // -DNAME=VALUE, -D NAME=VALUE, -DNAME (1).
  std::istringstream options(build_options);
  std::vector<std::string> words;
  for (std::string w; options >> w;) words.push_back(w);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string d;
    if (words[i] == "-D" && i + 1 < words.size()) d = words[++i];
    else if (words[i].rfind("-D", 0) == 0) d = words[i].substr(2);
    else continue;
    const std::size_t eq = d.find('=');
    if (eq == std::string::npos) macros_[d] = std::string(1, '1');  // (not = "1": a GCC 12 -Wstringop-overflow false positive)
    else macros_[d.substr(0, eq)] = d.substr(eq + 1);
    given_.insert(eq == std::string::npos ? d : d.substr(0, eq));
  }
  read_source(source);
}

void TypeNames::define(std::map<std::string, std::string>& table, const std::string& name, const std::string& value,
                       bool certain) {
  if (!certain) {
    ambiguous_.insert(name);
    return;
  }
  auto [it, added] = table.try_emplace(name, value);
  if (!added && it->second != value) ambiguous_.insert(name);
}

void TypeNames::read_source(const std::string& source) {
  std::vector<Region> stack;
  auto region = [&] {
    Region r = Region::active;
    for (Region s : stack) {
      if (s == Region::inactive) return Region::inactive;
      if (s == Region::unknown) r = Region::unknown;
    }
    return r;
  };
  for (const std::string& line : logical_lines(source)) {
    const auto t = tokens(line);
    if (t.size() >= 2 && t[0] == "#") {
      const std::string& d = t[1];
      if ((d == "ifdef" || d == "ifndef") && t.size() >= 3) {
        const bool defined = macros_.count(t[2]) > 0;
        // A name the source itself defines earlier counts as the compiler would see it.
        stack.push_back((d == "ifdef") == defined ? Region::active : Region::inactive);
      } else if (d == "if") {
        stack.push_back(Region::unknown);
      } else if ((d == "else" || d == "elif") && !stack.empty()) {
        stack.back() = d == "elif" || stack.back() == Region::unknown ? Region::unknown
                       : stack.back() == Region::active               ? Region::inactive
                                                                      : Region::active;
      } else if (d == "endif" && !stack.empty()) {
        stack.pop_back();
      } else if (d == "define" && t.size() >= 3 && region() != Region::inactive && !given_.count(t[2])) {
        // Object-like macros only: `#define NAME(x)` is a function-like one.
        const std::size_t at = line.find(t[2], line.find("define")) + t[2].size();
        if (at < line.size() && line[at] == '(') continue;
        std::vector<std::string> value(t.begin() + 3, t.end());
        define(macros_, t[2], canonical_type(value), region() == Region::active);
      }
      continue;
    }
    if (region() == Region::inactive) continue;
    read_typedefs(t, region() == Region::active);
  }
}

// `typedef <type words> NAME;` of a scalar or vector alias (a struct's typedef is a type of its
// own: opencl_type_layout reads it).
void TypeNames::read_typedefs(const std::vector<std::string>& t, bool certain) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != "typedef") continue;
    std::size_t end = i + 1;
    while (end < t.size() && t[end] != ";" && t[end] != "{" && t[end] != "*" && t[end] != "[") ++end;
    if (end >= t.size() || t[end] != ";" || end < i + 3) continue;
    std::vector<std::string> type(t.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                  t.begin() + static_cast<std::ptrdiff_t>(end) - 1);
    if (type.front() == "struct" || type.front() == "union" || type.front() == "enum") continue;
    define(typedefs_, t[end - 1], canonical_type(type), certain);
    i = end;
  }
}

std::string TypeNames::resolve(const std::string& written) const {
  std::string type = written;
  for (int depth = 0; depth < 16; ++depth) {
    if (ambiguous_.count(type)) return {};
    if (auto m = macros_.find(type); m != macros_.end()) {
      type = m->second;
      continue;
    }
    if (auto d = typedefs_.find(type); d != typedefs_.end()) {
      type = d->second;
      continue;
    }
    // Words of a multi-word type resolved one by one ("unsigned DTYPE" is rare: left as written).
    return type;
  }
  return {};  // a cycle
}

std::string TypeNames::how(const std::string& written) const {
  std::string type = written, trail;
  for (int depth = 0; depth < 16; ++depth) {
    if (auto m = macros_.find(type); m != macros_.end()) {
      trail += (trail.empty() ? "" : ", ") + std::string(given_.count(type) ? "-D" : "#define ") + type +
               (given_.count(type) ? "=" : " ") + m->second;
      type = m->second;
    } else if (auto d = typedefs_.find(type); d != typedefs_.end()) {
      trail += (trail.empty() ? "" : ", ") + std::string("typedef ") + d->second + " " + type;
      type = d->second;
    } else {
      break;
    }
  }
  return trail;
}

}  // namespace sinew::detail
