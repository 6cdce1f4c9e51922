// sinew/types.hpp — element types that vectors, scalars and results may hold.
//
// ElementType describes a C++ type in OpenCL C terms ("float", "uchar4") so that arguments can be
// checked against a kernel's signature before any device work. Types Sinew does not know (user
// structs) are still accepted; they are only checked by size.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl_platform.h>

#include <cstddef>
#include <string>
#include <type_traits>

namespace sinew {

/// The scalar type of an element (of each lane of a vector type): signed and unsigned integers
/// of 8 to 64 bits, float, double; opaque for a type Sinew does not know (a user struct).
enum class ScalarKind { i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, opaque };

/// A C++ element type in OpenCL C terms, checked against kernel signatures before device work.
struct ElementType {
  std::string name;                    ///< OpenCL C spelling: "float", "uchar4"; "" for opaque
  std::size_t size = 0;                ///< bytes
  ScalarKind scalar = ScalarKind::opaque;  ///< the type of each lane
  unsigned lanes = 1;                      ///< 1 for a scalar, 2 to 16 for an OpenCL vector type

  /// Whether Sinew knows the type (else it is checked by size only).
  bool known() const noexcept { return scalar != ScalarKind::opaque; }
  /// Same name, size, scalar kind and lanes.
  friend bool operator==(const ElementType&, const ElementType&) = default;
};

namespace detail {
template <class T>
struct cl_type_traits {
  static ElementType get() { return {"", sizeof(T), ScalarKind::opaque, 1}; }
};
#define SINEW_CL_SCALAR(T, NAME, KIND)                                                   \
  template <>                                                                            \
  struct cl_type_traits<T> {                                                             \
    static ElementType get() { return {NAME, sizeof(T), ScalarKind::KIND, 1}; }          \
  };
// Every OpenCL vector of 2, 4, 8 and 16 lanes (cl_float3 and the other 3-lane types are the
// 4-lane ones in cl_platform.h).
#define SINEW_CL_VECTOR(T, NAME, KIND, N)                                                \
  template <>                                                                            \
  struct cl_type_traits<T> {                                                             \
    static ElementType get() { return {NAME, sizeof(T), ScalarKind::KIND, N}; }          \
  };
SINEW_CL_SCALAR(cl_char, "char", i8)
SINEW_CL_SCALAR(cl_uchar, "uchar", u8)
SINEW_CL_SCALAR(cl_short, "short", i16)
SINEW_CL_SCALAR(cl_ushort, "ushort", u16)
SINEW_CL_SCALAR(cl_int, "int", i32)
SINEW_CL_SCALAR(cl_uint, "uint", u32)
SINEW_CL_SCALAR(cl_long, "long", i64)
SINEW_CL_SCALAR(cl_ulong, "ulong", u64)
SINEW_CL_SCALAR(cl_float, "float", f32)
SINEW_CL_SCALAR(cl_double, "double", f64)
SINEW_CL_VECTOR(cl_char2, "char2", i8, 2)
SINEW_CL_VECTOR(cl_char4, "char4", i8, 4)
SINEW_CL_VECTOR(cl_char8, "char8", i8, 8)
SINEW_CL_VECTOR(cl_char16, "char16", i8, 16)
SINEW_CL_VECTOR(cl_uchar2, "uchar2", u8, 2)
SINEW_CL_VECTOR(cl_uchar4, "uchar4", u8, 4)
SINEW_CL_VECTOR(cl_uchar8, "uchar8", u8, 8)
SINEW_CL_VECTOR(cl_uchar16, "uchar16", u8, 16)
SINEW_CL_VECTOR(cl_short2, "short2", i16, 2)
SINEW_CL_VECTOR(cl_short4, "short4", i16, 4)
SINEW_CL_VECTOR(cl_short8, "short8", i16, 8)
SINEW_CL_VECTOR(cl_short16, "short16", i16, 16)
SINEW_CL_VECTOR(cl_ushort2, "ushort2", u16, 2)
SINEW_CL_VECTOR(cl_ushort4, "ushort4", u16, 4)
SINEW_CL_VECTOR(cl_ushort8, "ushort8", u16, 8)
SINEW_CL_VECTOR(cl_ushort16, "ushort16", u16, 16)
SINEW_CL_VECTOR(cl_int2, "int2", i32, 2)
SINEW_CL_VECTOR(cl_int4, "int4", i32, 4)
SINEW_CL_VECTOR(cl_int8, "int8", i32, 8)
SINEW_CL_VECTOR(cl_int16, "int16", i32, 16)
SINEW_CL_VECTOR(cl_uint2, "uint2", u32, 2)
SINEW_CL_VECTOR(cl_uint4, "uint4", u32, 4)
SINEW_CL_VECTOR(cl_uint8, "uint8", u32, 8)
SINEW_CL_VECTOR(cl_uint16, "uint16", u32, 16)
SINEW_CL_VECTOR(cl_long2, "long2", i64, 2)
SINEW_CL_VECTOR(cl_long4, "long4", i64, 4)
SINEW_CL_VECTOR(cl_long8, "long8", i64, 8)
SINEW_CL_VECTOR(cl_long16, "long16", i64, 16)
SINEW_CL_VECTOR(cl_ulong2, "ulong2", u64, 2)
SINEW_CL_VECTOR(cl_ulong4, "ulong4", u64, 4)
SINEW_CL_VECTOR(cl_ulong8, "ulong8", u64, 8)
SINEW_CL_VECTOR(cl_ulong16, "ulong16", u64, 16)
SINEW_CL_VECTOR(cl_float2, "float2", f32, 2)
SINEW_CL_VECTOR(cl_float4, "float4", f32, 4)
SINEW_CL_VECTOR(cl_float8, "float8", f32, 8)
SINEW_CL_VECTOR(cl_float16, "float16", f32, 16)
SINEW_CL_VECTOR(cl_double2, "double2", f64, 2)
SINEW_CL_VECTOR(cl_double4, "double4", f64, 4)
SINEW_CL_VECTOR(cl_double8, "double8", f64, 8)
SINEW_CL_VECTOR(cl_double16, "double16", f64, 16)
#undef SINEW_CL_SCALAR
#undef SINEW_CL_VECTOR
}  // namespace detail

/// The ElementType of `T`: its OpenCL C name for cl_float, cl_uchar4 and the other OpenCL
/// scalar and vector types, an opaque type of sizeof(T) bytes for any other.
template <class T>
ElementType element_type() {
  return detail::cl_type_traits<std::remove_cv_t<T>>::get();
}

}  // namespace sinew
