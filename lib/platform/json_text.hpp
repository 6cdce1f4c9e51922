// platform/json_text.hpp — a string as a JSON string literal, quotes included (the one escaper
// of the knowledge base's JSON, the Chrome traces and the command line's --json output), and a
// number as the shortest JSON text that reads back as the same double.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace sinew::detail {

inline std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

// Every digit a double needs to read back unchanged (std::to_chars' shortest form): a trace's
// microsecond timestamps keep sub-microsecond steps at any distance from the start. A value JSON
// cannot hold (NaN, infinity) is null.
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";  // also -0: one text per value
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

}  // namespace sinew::detail
