// exec/reduce.cpp — reduction kernel source, identities and host combination for map_reduce.
#include "exec/reduce.hpp"

#include "tree/nodes/kernel.hpp"

#include "platform/error.hpp"

#include <cstring>
#include <limits>

namespace sinew::detail {
namespace {

template <class T>
Value combine_typed(Reducer::Op op, const std::vector<std::vector<unsigned char>>& parts, const ElementType& type) {
  T acc{};
  bool first = true;
  for (const auto& b : parts) {
    T v;
    std::memcpy(&v, b.data(), sizeof(T));
    if (first) {
      acc = v;
      first = false;
    } else if (op == Reducer::Op::sum) {
      acc = static_cast<T>(acc + v);
    } else if (op == Reducer::Op::min) {
      acc = v < acc ? v : acc;
    } else {
      acc = v > acc ? v : acc;
    }
  }
  Value out{type, std::vector<unsigned char>(sizeof(T))};
  std::memcpy(out.bytes.data(), &acc, sizeof(T));
  return out;
}

template <class T>
std::vector<unsigned char> bytes_of(T v) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

}  // namespace

Value combine_builtin(Reducer::Op op, const std::vector<std::vector<unsigned char>>& parts, const ElementType& t) {
  switch (t.scalar) {
    case ScalarKind::i8: return combine_typed<cl_char>(op, parts, t);
    case ScalarKind::u8: return combine_typed<cl_uchar>(op, parts, t);
    case ScalarKind::i16: return combine_typed<cl_short>(op, parts, t);
    case ScalarKind::u16: return combine_typed<cl_ushort>(op, parts, t);
    case ScalarKind::i32: return combine_typed<cl_int>(op, parts, t);
    case ScalarKind::u32: return combine_typed<cl_uint>(op, parts, t);
    case ScalarKind::i64: return combine_typed<cl_long>(op, parts, t);
    case ScalarKind::u64: return combine_typed<cl_ulong>(op, parts, t);
    case ScalarKind::f32: return combine_typed<cl_float>(op, parts, t);
    case ScalarKind::f64: return combine_typed<cl_double>(op, parts, t);
    default: break;
  }
  throw_error(errc::invalid_argument, "built-in reduction of an opaque type");
}

// The identity element of a built-in reduction, as bytes of the element type.
std::vector<unsigned char> identity_of(Reducer::Op op, const ElementType& t) {
  auto pick = [&](auto zero) {
    using T = decltype(zero);
    if (op == Reducer::Op::sum) return bytes_of<T>(T(0));
    if (op == Reducer::Op::min)
      return bytes_of<T>(std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::max());
    return bytes_of<T>(std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                            : std::numeric_limits<T>::lowest());
  };
  switch (t.scalar) {
    case ScalarKind::i8: return pick(cl_char{});
    case ScalarKind::u8: return pick(cl_uchar{});
    case ScalarKind::i16: return pick(cl_short{});
    case ScalarKind::u16: return pick(cl_ushort{});
    case ScalarKind::i32: return pick(cl_int{});
    case ScalarKind::u32: return pick(cl_uint{});
    case ScalarKind::i64: return pick(cl_long{});
    case ScalarKind::u64: return pick(cl_ulong{});
    case ScalarKind::f32: return pick(cl_float{});
    case ScalarKind::f64: return pick(cl_double{});
    default: return {};
  }
}

std::string reduce_source(const Reducer& r, const ElementType& t) {
  std::string src;
  if (t.scalar == ScalarKind::f64) src += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  if (r.op == Reducer::Op::custom) src += r.source + "\n#define SINEW_OP(a, b) " + r.function + "((a), (b))\n";
  if (r.op == Reducer::Op::sum) src += "#define SINEW_OP(a, b) ((a) + (b))\n";
  if (r.op == Reducer::Op::min) src += "#define SINEW_OP(a, b) ((b) < (a) ? (b) : (a))\n";
  if (r.op == Reducer::Op::max) src += "#define SINEW_OP(a, b) ((b) > (a) ? (b) : (a))\n";
  src += "#define SINEW_T " + t.name + "\n";
  src += embedded_kernels().at("reduce.cl");
  return src;
}

}  // namespace sinew::detail
