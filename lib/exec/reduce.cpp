// exec/reduce.cpp — reduction kernel source, identities and host combination for map_reduce.
#include "exec/reduce.hpp"

#include "tree/nodes/kernel.hpp"

#include "platform/error.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

namespace sinew::detail {
namespace {

// Calls f(T{}) with T the C++ type of one lane of t.
template <class F>
auto with_lane_type(const ElementType& t, F&& f) {
  switch (t.scalar) {
    case ScalarKind::i8: return f(cl_char{});
    case ScalarKind::u8: return f(cl_uchar{});
    case ScalarKind::i16: return f(cl_short{});
    case ScalarKind::u16: return f(cl_ushort{});
    case ScalarKind::i32: return f(cl_int{});
    case ScalarKind::u32: return f(cl_uint{});
    case ScalarKind::i64: return f(cl_long{});
    case ScalarKind::u64: return f(cl_ulong{});
    case ScalarKind::f32: return f(cl_float{});
    case ScalarKind::f64: return f(cl_double{});
    default: break;
  }
  throw_error(errc::invalid_argument, "built-in reduction of an opaque type");
}

// Lane i of an element's bytes (vectors are arrays of their lanes, as in cl_platform.h).
template <class T>
T lane(const unsigned char* element, unsigned i) {
  T v;
  std::memcpy(&v, element + i * sizeof(T), sizeof(T));
  return v;
}

// a + b as the device computes it: integers wrap (in their unsigned type, since a signed
// overflow is undefined in C++), floats round.
template <class T>
T sum_wrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(a + b);
  }
}

}  // namespace

// One code path for scalars and vectors: a scalar is a vector of one lane, each lane combined as
// the device's SINEW_OP does (sum wraps for integers; min and max keep the first of equals).
Value combine_builtin(Reducer::Op op, const std::vector<std::vector<unsigned char>>& parts, const ElementType& t) {
  return with_lane_type(t, [&](auto zero) {
    using T = decltype(zero);
    Value out{t, parts.front()};
    for (std::size_t p = 1; p < parts.size(); ++p)
      for (unsigned i = 0; i < t.lanes; ++i) {
        const T acc = lane<T>(out.bytes.data(), i), v = lane<T>(parts[p].data(), i);
        T r;
        if (op == Reducer::Op::sum) r = sum_wrapping(acc, v);
        else if (op == Reducer::Op::min) r = v < acc ? v : acc;
        else r = v > acc ? v : acc;
        std::memcpy(out.bytes.data() + i * sizeof(T), &r, sizeof(T));
      }
    return out;
  });
}

// The identity element of a built-in reduction, as bytes of the element type (every lane).
std::vector<unsigned char> identity_of(Reducer::Op op, const ElementType& t) {
  if (!t.known()) return {};
  return with_lane_type(t, [&](auto zero) {
    using T = decltype(zero);
    using limits = std::numeric_limits<T>;
    T v = T(0);
    if (op == Reducer::Op::min) v = limits::has_infinity ? limits::infinity() : limits::max();
    if (op == Reducer::Op::max) v = limits::has_infinity ? -limits::infinity() : limits::lowest();
    std::vector<unsigned char> b(t.size);
    for (unsigned i = 0; i < t.lanes; ++i) std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
    return b;
  });
}

std::string operator_prelude(Reducer::Op op, const std::string& source, const std::string& function,
                             const ElementType& t) {
  std::string src;
  if (t.scalar == ScalarKind::f64) src += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  if (op == Reducer::Op::custom) src += source + "\n#define SINEW_OP(a, b) " + function + "((a), (b))\n";
  // On vectors, `<` yields a lane mask and `?:` selects lane by lane: one definition for all.
  if (op == Reducer::Op::sum) src += "#define SINEW_OP(a, b) ((a) + (b))\n";
  if (op == Reducer::Op::min) src += "#define SINEW_OP(a, b) ((b) < (a) ? (b) : (a))\n";
  if (op == Reducer::Op::max) src += "#define SINEW_OP(a, b) ((b) > (a) ? (b) : (a))\n";
  return src;
}

std::string reduce_source(const Reducer& r, const ElementType& t) {
  std::string src = operator_prelude(r.op, r.source, r.function, t);
  src += "#define SINEW_T " + reduction_type_name(r) + "\n";
  // The host reads and writes elements as the C++ type's bytes: a struct that the source lays out
  // otherwise fails to compile here, naming the mismatch, rather than reducing garbage.
  src += "typedef char " + std::string(kSizeCheck) + "[sizeof(SINEW_T) == " + std::to_string(t.size) + " ? 1 : -1];\n";
  src += embedded_kernels().at("reduce.cl");
  return src;
}

}  // namespace sinew::detail
