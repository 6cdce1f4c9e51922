// tree/parse.cpp — reading a kernel's parameter list from its OpenCL C source.
//
// Validation must happen before any device work, and clGetKernelArgInfo is unavailable for
// programs loaded from binaries on several drivers, so Sinew reads the signature itself. The
// parser handles what kernels really contain: comments, __kernel/kernel, attributes, qualifiers
// with or without underscores. A kernel it cannot find (made by a macro) is not checked here.
#include "tree/nodes/kernel.hpp"
#include "tree/source_text.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace sinew::detail {

std::string strip_comments(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      std::size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? s.size() : e + 2;
      out += ' ';
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> t;
  for (std::size_t i = 0; i < s.size();) {
    if (is_identifier_char(s[i])) {
      std::size_t j = i;
      while (j < s.size() && is_identifier_char(s[j])) ++j;
      t.push_back(s.substr(i, j - i));
      i = j;
    } else if (!std::isspace(static_cast<unsigned char>(s[i]))) {
      t.push_back(std::string(1, s[i++]));
    } else {
      ++i;
    }
  }
  return t;
}

namespace {
std::string canonical(std::string w) {
  if (w.rfind("__", 0) == 0) w = w.substr(2);
  return w;
}
}  // namespace

KernelParam parse_param(const std::string& text) {
  KernelParam p;
  auto t = tokens(text);
  std::vector<std::string> words;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == "__attribute__" || t[i] == "[") {  // skip attribute (( ... )) and array bounds
      int depth = 0;
      for (++i; i < t.size(); ++i) {
        if (t[i] == "(" || t[i] == "[") ++depth;
        if (t[i] == ")" || t[i] == "]") {
          if (--depth <= 0) break;
        }
      }
      continue;
    }
    if (t[i] == "*") {
      p.pointer = true;
      continue;
    }
    if (canonical(t[i]) == "const") {
      if (!p.pointer) p.is_const = true;  // `const T*` or `T const*`: the data is const
      else p.const_pointer = true;         // `T* const`: the pointer is
      continue;
    }
    words.push_back(t[i]);
  }
  std::vector<std::string> type_words;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string w = canonical(words[i]);
    if (w == "global" || w == "local" || w == "constant" || w == "private") {
      p.address_space = w == "private" ? "" : w;
    } else if (w == "restrict" || w == "volatile" || w == "read_only" || w == "write_only" || w == "read_write") {
    } else if (i + 1 == words.size() && !type_words.empty()) {
      p.name = words[i];
    } else {
      type_words.push_back(words[i]);
    }
  }
  for (std::size_t i = 0; i < type_words.size(); ++i) p.type += (i ? " " : "") + type_words[i];
  if (p.type == "unsigned int" || p.type == "unsigned") p.type = "uint";
  if (p.type == "unsigned char") p.type = "uchar";
  if (p.type == "unsigned short") p.type = "ushort";
  if (p.type == "unsigned long") p.type = "ulong";
  return p;
}

std::string blank_comments(const std::string& s) {
  std::string out = s;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') out[i++] = ' ';
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t close = s.find("*/", i + 2);
      for (const std::size_t e = close == std::string::npos ? s.size() : close + 2; i < e; ++i)
        if (s[i] != '\n') out[i] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

std::optional<KernelDefinition> locate_kernel(const std::string& source, const std::string& entry) {
  const std::string s = blank_comments(source);
  for (std::size_t pos = 0; (pos = s.find(entry, pos)) != std::string::npos; pos += entry.size()) {
    if (pos > 0 && is_identifier_char(s[pos - 1])) continue;
    std::size_t after = pos + entry.size();
    if (after < s.size() && is_identifier_char(s[after])) continue;
    // Must be preceded by `kernel void` (with attributes possibly in between).
    std::size_t line_start = s.rfind(';', pos);
    std::size_t brace = s.rfind('}', pos);
    std::size_t start = std::max(line_start == std::string::npos ? 0 : line_start + 1,
                                 brace == std::string::npos ? 0 : brace + 1);
    bool is_kernel = false;
    for (auto& w : tokens(s.substr(start, pos - start)))
      if (w == "kernel" || w == "__kernel") is_kernel = true;
    if (!is_kernel) continue;
    std::size_t open = s.find_first_not_of(" \t\r\n", after);
    if (open == std::string::npos || s[open] != '(') continue;
    int depth = 0;
    std::size_t close = open;
    for (; close < s.size(); ++close) {
      if (s[close] == '(') ++depth;
      if (s[close] == ')' && --depth == 0) break;
    }
    if (close >= s.size()) return std::nullopt;
    // The body's brace: a prototype (`;` first) is no definition.
    const std::size_t body = s.find_first_of("{;", close);
    return KernelDefinition{open, close, body != std::string::npos && s[body] == '{' ? body : std::string::npos};
  }
  return std::nullopt;
}

std::optional<std::vector<KernelParam>> parse_kernel_params(const std::string& source, const std::string& entry) {
  const auto at = locate_kernel(source, entry);
  if (!at) return std::nullopt;
  return parse_param_list(blank_comments(source.substr(at->open + 1, at->close - at->open - 1)));
}

std::vector<KernelParam> parse_param_list(const std::string& list) {
  std::vector<KernelParam> params;
  std::string cur;
  int depth = 0;
  for (char c : list) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      params.push_back(parse_param(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  auto rest = tokens(cur);
  if (!rest.empty() && !(rest.size() == 1 && rest[0] == "void")) params.push_back(parse_param(cur));
  return params;
}

}  // namespace sinew::detail
