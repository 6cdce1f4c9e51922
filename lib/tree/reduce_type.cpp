// tree/reduce_type.cpp — reading a user's operator (a reduction's or a scan's function) before
// device work: its parameters; the reducer's first parameter gives the struct's OpenCL C name, and
// the struct's members under OpenCL C's layout rules give its size, compared with sizeof in C++ by
// the tree check.
#include "tree/source_text.hpp"

#include <cctype>
#include <map>

namespace sinew::detail {
namespace {

std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

// "float4" -> {16, 16}; "float3" -> {16, 16}; names that are no OpenCL scalar or vector: empty.
std::optional<TypeLayout> builtin_layout(const std::string& name) {
  static const std::map<std::string, std::size_t> base = {
      {"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"half", 2}, {"int", 4},
      {"uint", 4}, {"float", 4}, {"long", 8},  {"ulong", 8},  {"double", 8}};
  std::size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  auto b = base.find(name.substr(0, digits));
  if (b == base.end()) return std::nullopt;
  std::size_t lanes = 1;
  if (digits < name.size()) {
    lanes = std::stoul(name.substr(digits));
    if (lanes != 2 && lanes != 3 && lanes != 4 && lanes != 8 && lanes != 16) return std::nullopt;
    if (lanes == 3) lanes = 4;
  }
  return TypeLayout{b->second * lanes, b->second * lanes};
}

// An array bound written as a number ("64", "64u"); anything else (a macro) is not read.
std::optional<std::size_t> bound(const std::string& t) {
  std::size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0 || t.find_first_not_of("uUlL", i) != std::string::npos) return std::nullopt;
  return std::stoull(t.substr(0, i));
}

bool qualifier(const std::string& w) {
  return w == "const" || w == "__const" || w == "volatile" || w == "private" || w == "__private";
}

// The struct definitions and typedefs of one source.
class Definitions {
 public:
  explicit Definitions(const std::string& source) {
    const auto t = tokens(strip_comments(source));
    for (std::size_t i = 0; i < t.size(); ++i) {
      const bool is_typedef = t[i] == "typedef";
      if (!is_typedef && t[i] != "struct") continue;
      // The declaration up to its ';' (outside braces).
      std::size_t end = i;
      int depth = 0;
      for (; end < t.size(); ++end) {
        if (t[end] == "{") ++depth;
        if (t[end] == "}") --depth;
        if (t[end] == ";" && depth == 0) break;
      }
      std::vector<std::string> d(t.begin() + static_cast<std::ptrdiff_t>(i) + (is_typedef ? 1 : 0),
                                 t.begin() + static_cast<std::ptrdiff_t>(std::min(end, t.size())));
      if (!is_typedef && (d.size() < 3 || d[2] != "{")) continue;  // `struct hist x` uses, not defines
      i = end;
      read(d, is_typedef);
    }
  }

  std::optional<TypeLayout> layout(const std::string& type, int depth = 0) const {
    if (depth > 16) return std::nullopt;  // a typedef cycle
    if (auto b = builtin_layout(type)) return b;
    if (type.rfind("struct ", 0) == 0) {
      auto s = structs_.find(type.substr(7));
      if (s == structs_.end() || !s->second) return std::nullopt;
      return members(*s->second, depth);
    }
    auto a = aliases_.find(type);
    if (a == aliases_.end()) return std::nullopt;
    return layout(a->second, depth + 1);
  }

 private:
  // A declaration after `typedef` (is_typedef) or one starting with `struct tag {`.
  void read(const std::vector<std::string>& d, bool is_typedef) {
    bool attributes = false;
    for (const auto& w : d) attributes |= w == "__attribute__" || w == "__attribute";
    if (!d.empty() && d[0] == "struct") {
      std::size_t at = 1;
      std::string key;
      if (at < d.size() && d[at] != "{") key = d[at++];
      if (key.empty()) key = "<anonymous " + std::to_string(structs_.size()) + ">";
      if (at < d.size() && d[at] == "{") {
        std::size_t close = at;
        for (int depth = 0; close < d.size(); ++close) {
          if (d[close] == "{") ++depth;
          if (d[close] == "}" && --depth == 0) break;
        }
        std::optional<std::vector<std::string>> body;
        if (!attributes && close < d.size()) body.emplace(d.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                                                          d.begin() + static_cast<std::ptrdiff_t>(close));
        structs_[key] = std::move(body);
        at = close + 1;
      }
      // `typedef struct tag { ... } name;` or `typedef struct tag name;`
      if (is_typedef && at + 1 == d.size() && is_identifier_char(d[at][0])) aliases_[d[at]] = "struct " + key;
      return;
    }
    // `typedef float4 pair;`, `typedef unsigned int count_t;`
    if (!is_typedef || d.size() < 2 || attributes) return;
    std::string type;
    for (std::size_t k = 0; k + 1 < d.size(); ++k) {
      if (qualifier(d[k])) continue;
      if (!is_identifier_char(d[k][0])) return;  // a pointer or an array typedef: not read
      type += (type.empty() ? "" : " ") + d[k];
    }
    aliases_[d.back()] = parse_param(type + " x").type;
  }

  std::optional<TypeLayout> members(const std::vector<std::string>& body, int depth) const {
    TypeLayout out{0, 1};
    std::vector<std::string> decl;
    for (const auto& w : body) {
      if (w != ";") {
        if (!qualifier(w)) decl.push_back(w);
        continue;
      }
      if (decl.empty()) continue;
      // Type: `struct tag`, `unsigned int`, or one word; then declarators `name[N][M], name2`.
      std::size_t at = 1;
      std::string type = decl[0];
      if (decl[0] == "struct" && decl.size() > 1) type = "struct " + decl[at++];
      if (decl[0] == "unsigned" || decl[0] == "signed") {
        const std::string next = decl.size() > 2 ? decl[at] : "int";
        if (decl.size() > 2) ++at;
        const std::string u = decl[0] == "unsigned" ? "u" : "";
        type = next == "char" || next == "short" || next == "int" || next == "long" ? u + next : std::string("?");
      }
      auto t = layout(type, depth + 1);
      if (!t) return std::nullopt;
      for (; at < decl.size(); ++at) {
        if (!is_identifier_char(decl[at][0]) || std::isdigit(static_cast<unsigned char>(decl[at][0]))) return std::nullopt;
        std::size_t count = 1;
        while (at + 1 < decl.size() && decl[at + 1] == "[") {
          if (at + 3 >= decl.size() || decl[at + 3] != "]") return std::nullopt;
          auto n = bound(decl[at + 2]);
          if (!n) return std::nullopt;
          count *= *n;
          at += 3;
        }
        out.size = align_up(out.size, t->align) + t->size * count;
        out.align = std::max(out.align, t->align);
        if (at + 1 < decl.size() && decl[at + 1] != ",") return std::nullopt;  // pointers, bit-fields, ...
        ++at;  // the ','
      }
      decl.clear();
    }
    if (!decl.empty() || out.size == 0) return std::nullopt;
    out.size = align_up(out.size, out.align);
    return out;
  }

  std::map<std::string, std::optional<std::vector<std::string>>> structs_;  // tag -> members (none: unreadable)
  std::map<std::string, std::string> aliases_;                              // typedef name -> type
};

}  // namespace

std::optional<std::vector<KernelParam>> function_params(const std::string& source, const std::string& function) {
  const std::string s = strip_comments(source);
  if (function.empty()) return std::nullopt;
  for (std::size_t pos = 0; (pos = s.find(function, pos)) != std::string::npos; pos += function.size()) {
    const std::size_t after = pos + function.size();
    if ((pos > 0 && is_identifier_char(s[pos - 1])) || (after < s.size() && is_identifier_char(s[after]))) continue;
    std::size_t open = s.find_first_not_of(" \t\r\n", after);
    if (open == std::string::npos || s[open] != '(') continue;
    std::size_t close = open;
    for (int depth = 0; close < s.size(); ++close) {
      if (s[close] == '(') ++depth;
      if (s[close] == ')' && --depth == 0) break;
    }
    const std::size_t body = s.find_first_not_of(" \t\r\n", close + 1);
    if (close >= s.size() || body == std::string::npos || s[body] != '{') continue;  // a call or a prototype
    return parse_param_list(s.substr(open + 1, close - open - 1));
  }
  return std::nullopt;
}

std::string first_param_type(const std::string& source, const std::string& function) {
  const auto params = function_params(source, function);
  if (!params || params->empty() || params->front().pointer) return "";
  return params->front().type;
}

std::optional<TypeLayout> opencl_type_layout(const std::string& source, const std::string& type) {
  return Definitions(source).layout(type);
}

}  // namespace sinew::detail
