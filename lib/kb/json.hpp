// kb/json.hpp — the little JSON the knowledge base needs: a value tree, a strict parser (RFC
// 8259, with positions in its errors), and a writer whose numbers round-trip exactly.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail::kb::json {

class Value {
 public:
  enum class Type { null, boolean, number, string, array, object };
  using Array = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;  // members in document order

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::boolean), bool_(b) {}
  Value(double n) : type_(Type::number), number_(n) {}
  Value(int n) : Value(double(n)) {}
  Value(long n) : Value(double(n)) {}
  Value(long long n) : Value(double(n)) {}
  Value(unsigned n) : Value(double(n)) {}
  Value(std::string s) : type_(Type::string), string_(std::move(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(Array a) : type_(Type::array), array_(std::move(a)) {}
  Value(Object o) : type_(Type::object), object_(std::move(o)) {}

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::null; }
  bool is_number() const { return type_ == Type::number; }
  bool is_string() const { return type_ == Type::string; }
  bool is_array() const { return type_ == Type::array; }
  bool is_object() const { return type_ == Type::object; }

  bool boolean() const { return bool_; }
  double number() const { return number_; }
  const std::string& string() const { return string_; }
  const Array& array() const { return array_; }
  const Object& object() const { return object_; }
  Array& array() { return array_; }
  Object& object() { return object_; }

  // The member `key` of an object, or nullptr (also when this is no object).
  const Value* find(std::string_view key) const;
  // Appends a member (objects) — no check for duplicates.
  Value& set(std::string key, Value v);

 private:
  Type type_ = Type::null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  Array array_;
  Object object_;
};

const char* type_name(Value::Type t);

// Throws std::invalid_argument("line L, column C: what").
Value parse(std::string_view text);

// Containers nested less than `multiline_depth` deep get one member per line (two-space
// indent); deeper ones stay on one line. Non-finite numbers are written as null.
std::string dump(const Value& v, int multiline_depth = 0);

// Shortest text that reads back as the same double ("1024", "0.6", "1e+300").
std::string number(double v);
// A JSON string literal, quotes included.
std::string quote(std::string_view s);

}  // namespace sinew::detail::kb::json
