// dtype.h: element types of arrays and scalars, for the core's C++: an enum over the ids of the one
// dtype table (fugue_dtypes.h) and helpers that read that table.
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fugue_plugin.h"

namespace fugue {

enum class DType : int32_t {
  None = FUGUE_DTYPE_NONE,
  F32 = FUGUE_DTYPE_F32,
  F64 = FUGUE_DTYPE_F64,
  I32 = FUGUE_DTYPE_I32,
  I64 = FUGUE_DTYPE_I64,
  U8 = FUGUE_DTYPE_U8,
  U32 = FUGUE_DTYPE_U32,
  C64 = FUGUE_DTYPE_C64,
  C128 = FUGUE_DTYPE_C128,
};

// The table's row; throws std::logic_error for None and unknown ids.
const fugue_dtype_info& dtype_info(DType dtype);
// "f32", "c64", ... ("none" for None).
std::string_view dtype_name(DType dtype);
// A supported dtype by name; reserved ones (f16, bf16) and unknown names give nullopt.
std::optional<DType> parse_dtype(std::string_view name);
// Bytes per element.
std::size_t dtype_size(DType dtype);
// OpenCL C type: "float", "uchar", "float2" (c64), ...
std::string_view dtype_ctype(DType dtype);
bool dtype_is_float(DType dtype);    // a real floating-point type
bool dtype_is_complex(DType dtype);
bool dtype_is_signed(DType dtype);
// The names of the supported dtypes in `mask`, for error messages: "f32, f64, i32, ...".
std::string dtype_names(uint32_t mask = FUGUE_DTYPES_ALL);

// Apply `f` to a default-constructed value of the C++ type of `dtype` (float, double, int32_t,
// int64_t, uint8_t, uint32_t, std::complex<float>, std::complex<double>): one switch for all code that
// is generic over element types.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::U8: return f(uint8_t{});
    case DType::U32: return f(uint32_t{});
    case DType::C64: return f(std::complex<float>{});
    case DType::C128: return f(std::complex<double>{});
    default: break;
  }
  throw std::logic_error("visit_dtype: no element type");
}

// Whether T is std::complex<...>.
template <class T> struct is_complex_type : std::false_type {};
template <class T> struct is_complex_type<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex_type<T>::value;

}  // namespace fugue
