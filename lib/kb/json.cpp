// kb/json.cpp — JSON parsing and writing for the knowledge base (see json.hpp).
#include "kb/json.hpp"

#include "platform/json_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace sinew::detail::kb::json {

const Value* Value::find(std::string_view key) const {
  if (type_ != Type::object) return nullptr;
  for (const auto& [k, v] : object_)
    if (k == key) return &v;
  return nullptr;
}

Value& Value::set(std::string key, Value v) {
  if (type_ == Type::null) type_ = Type::object;
  object_.emplace_back(std::move(key), std::move(v));
  return object_.back().second;
}

const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Type::null: return "null";
    case Value::Type::boolean: return "a boolean";
    case Value::Type::number: return "a number";
    case Value::Type::string: return "a string";
    case Value::Type::array: return "an array";
    case Value::Type::object: return "an object";
  }
  return "?";
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (position_ != text_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < position_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw std::invalid_argument("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
  }

  void skip_space() {
    while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\t' || text_[position_] == '\n' || text_[position_] == '\r'))
      ++position_;
  }

  bool consume(std::string_view word) {
    if (text_.substr(position_, word.size()) != word) return false;
    position_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > 64) fail("nested too deeply");
    skip_space();
    if (position_ >= text_.size()) fail("unexpected end of text");
    char c = text_[position_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(string());
    if (consume("true")) return Value(true);
    if (consume("false")) return Value(false);
    if (consume("null")) return Value();
    if (c == '-' || (c >= '0' && c <= '9')) return Value(number());
    fail(std::string("unexpected character '") + c + "'");
  }

  Value object(int depth) {
    ++position_;  // {
    Value v{Value::Object{}};
    skip_space();
    if (position_ < text_.size() && text_[position_] == '}') {
      ++position_;
      return v;
    }
    for (;;) {
      skip_space();
      if (position_ >= text_.size() || text_[position_] != '"') fail("expected a member name in quotes");
      std::string key = string();
      skip_space();
      if (position_ >= text_.size() || text_[position_] != ':') fail("expected ':' after member name");
      ++position_;
      v.set(std::move(key), value(depth + 1));
      skip_space();
      if (position_ < text_.size() && text_[position_] == ',') {
        ++position_;
        continue;
      }
      if (position_ < text_.size() && text_[position_] == '}') {
        ++position_;
        return v;
      }
      fail("expected ',' or '}' in object");
    }
  }

  Value array(int depth) {
    ++position_;  // [
    Value v{Value::Array{}};
    skip_space();
    if (position_ < text_.size() && text_[position_] == ']') {
      ++position_;
      return v;
    }
    for (;;) {
      v.array().push_back(value(depth + 1));
      skip_space();
      if (position_ < text_.size() && text_[position_] == ',') {
        ++position_;
        continue;
      }
      if (position_ < text_.size() && text_[position_] == ']') {
        ++position_;
        return v;
      }
      fail("expected ',' or ']' in array");
    }
  }

  unsigned hex4() {
    if (position_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned u = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[position_++];
      u <<= 4;
      if (c >= '0' && c <= '9') u |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') u |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') u |= unsigned(c - 'A' + 10);
      else fail("bad hex digit in \\u escape");
    }
    return u;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  std::string string() {
    ++position_;  // "
    std::string out;
    for (;;) {
      if (position_ >= text_.size()) fail("unterminated string");
      char c = text_[position_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (position_ >= text_.size()) fail("unterminated string");
      char e = text_[position_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00) {
            if (!consume("\\u")) fail("unpaired surrogate in \\u escape");
            unsigned low = hex4();
            if (low < 0xdc00 || low >= 0xe000) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            fail("unpaired surrogate in \\u escape");
          }
          utf8(out, cp);
          break;
        }
        default: fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  double number() {
    std::size_t start = position_;
    if (text_[position_] == '-') ++position_;
    auto digits = [&] {
      std::size_t s = position_;
      while (position_ < text_.size() && text_[position_] >= '0' && text_[position_] <= '9') ++position_;
      return position_ - s;
    };
    if (position_ < text_.size() && text_[position_] == '0') ++position_;
    else if (digits() == 0) fail("bad number");
    if (position_ < text_.size() && text_[position_] == '.') {
      ++position_;
      if (digits() == 0) fail("bad number: no digits after '.'");
    }
    if (position_ < text_.size() && (text_[position_] == 'e' || text_[position_] == 'E')) {
      ++position_;
      if (position_ < text_.size() && (text_[position_] == '+' || text_[position_] == '-')) ++position_;
      if (digits() == 0) fail("bad number: no exponent digits");
    }
    double v = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + position_, v);
    if (ec != std::errc() || ptr != text_.data() + position_) {
      position_ = start;
      fail("number out of range");
    }
    return v;
  }

  std::string_view text_;
  std::size_t position_ = 0;
};

void write(std::string& out, const Value& v, int depth, int multiline_depth) {
  const bool lines = depth < multiline_depth;
  auto newline = [&](int d) {
    out += '\n';
    out.append(std::size_t(2 * d), ' ');
  };
  switch (v.type()) {
    case Value::Type::null: out += "null"; break;
    case Value::Type::boolean: out += v.boolean() ? "true" : "false"; break;
    case Value::Type::number: out += number(v.number()); break;
    case Value::Type::string: out += quote(v.string()); break;
    case Value::Type::array: {
      out += '[';
      const auto& a = v.array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i) out += lines ? "," : ", ";
        if (lines) newline(depth + 1);
        write(out, a[i], depth + 1, multiline_depth);
      }
      if (lines && !a.empty()) newline(depth);
      out += ']';
      break;
    }
    case Value::Type::object: {
      out += '{';
      const auto& o = v.object();
      for (std::size_t i = 0; i < o.size(); ++i) {
        if (i) out += lines ? "," : ", ";
        if (lines) newline(depth + 1);
        out += quote(o[i].first);
        out += ": ";
        write(out, o[i].second, depth + 1, multiline_depth);
      }
      if (lines && !o.empty()) newline(depth);
      out += '}';
      break;
    }
  }
}

}  // namespace

Value parse(std::string_view text) { return Parser(text).document(); }

std::string dump(const Value& v, int multiline_depth) {
  std::string out;
  write(out, v, 0, multiline_depth);
  return out;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";  // also -0: one text per value
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ptr);
}

std::string quote(std::string_view s) { return json_quote(s); }

}  // namespace sinew::detail::kb::json
